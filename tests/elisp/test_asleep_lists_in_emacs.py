"""Asking a list again while the daemon is asleep (a stopped process, a laptop's lid shut),
in ``emacs -nw`` in tmux (80x24) with the README's own configuration and the real daemon.

The daemon asleep takes the connection and answers nothing: Emacs gives up after
``arcology-oracle-timeout`` (15 s). Until then ``g`` in the similar notes or in the
rejections, and ``u`` there, showed nothing at all: the old list stayed as it was, as
if the key had not been read; so were ``C-c o M`` and ``C-c o K`` (after its "yes").
Now ``g`` puts "Asking again…" in the list at once, ``u`` says that it is taking the
rejection back (then whether it stands), and remembering and forgetting say so at once.
"""

from __future__ import annotations

import contextlib
import signal

import pytest

from tests.elisp.walkthrough_driver import SIMILAR, Driver, readme_session

REJECTIONS = "*arcology-oracle rejections*"


@contextlib.contextmanager
def asleep(driver: Driver):
    """The daemon stopped (SIGSTOP) inside, woken (SIGCONT) after."""
    driver.daemon.proc.send_signal(signal.SIGSTOP)
    try:
        yield
    finally:
        driver.daemon.proc.send_signal(signal.SIGCONT)


@pytest.mark.timeout(180)
async def test_g_and_u_say_at_once_that_they_ask_an_asleep_daemon(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        await emacs.keys("C-c", "o", "s")
        await emacs.wait(lambda: driver._count_in(SIMILAR, "Baker's percenta", 1), "the similar notes", timeout=20)
        await driver.select(SIMILAR)
        with asleep(driver):
            await emacs.keys("g")
            await emacs.wait_screen(lambda s: "Asking again…" in s, "g in the similar notes to say it asks")
            assert "Baker's percenta" in await driver.buffer_text(SIMILAR)  # the list stays below
        await emacs.wait(lambda: driver._text_lacks(SIMILAR, "Asking again…"), "the answer", timeout=20)
        assert "Baker's percenta" in await driver.buffer_text(SIMILAR)

        # A rejection, listed.
        await driver.select("sourdough-baking.org")
        await emacs.keys("C-c", "o", "l")
        await emacs.wait_text("Links to add to", timeout=20)
        await driver.select("*arcology-oracle links*")
        # The buffer shows before its suggestions come (on a loaded machine, seconds after):
        # x is pressed on the suggestion itself.
        listed = lambda: driver._count_in("*arcology-oracle links*", "Baker's percentages", 1)  # noqa: E731
        await emacs.wait(listed, "the suggestions", timeout=20)
        await emacs.keys("M-<", "n")
        await emacs.wait(lambda: driver._cursor_has("Baker's percentages"), "point on Baker's percentages")
        mark = await driver.mark()
        await emacs.keys("x")
        await driver.message("Rejected Baker's percentages", since=mark, timeout=20)
        await emacs.keys("C-c", "o", "L")
        await emacs.wait_text("Rejected links from", timeout=20)
        await driver.select(REJECTIONS)
        await emacs.wait(lambda: driver._cursor_has("Baker's percentages"), "point on the rejection")

        with asleep(driver):
            mark = await driver.mark()
            await emacs.keys("u")
            await driver.message("Taking back the rejection of Baker's percentages…", since=mark)
            await emacs.keys("g")
            await emacs.wait_screen(lambda s: "Asking the daemon again…" in s, "g in the rejections to say it asks")
        await driver.message("Baker's percentages will be suggested again", since=mark, timeout=20)
        await emacs.wait(lambda: driver._text_lacks(REJECTIONS, "Asking the daemon again…"), "the rejections")

        # Remembering and forgetting, asleep: said at once, done once it wakes.
        await driver.select("sourdough-baking.org")
        with asleep(driver):
            await emacs.keys("C-c", "o", "M")
            await emacs.wait_text("Remember:")
            await emacs.type("Rye likes 24 degrees")
            mark = await driver.mark()
            await emacs.keys("Enter")
            await driver.message("arcology-oracle: remembering…", since=mark)
        said = await driver.message("Remembered in journal/", since=mark, timeout=20)
        daily = driver.roam / said.split("Remembered in ")[1].split(":")[0]
        assert "Rye likes 24 degrees" in daily.read_text()
        with asleep(driver):
            await emacs.keys("C-c", "o", "K")
            await emacs.wait_text("(yes or no)")
            await emacs.type("yes")
            mark = await driver.mark()
            await emacs.keys("Enter")
            await driver.message('arcology-oracle: forgetting "Rye likes 24 degrees"…', since=mark)
        await driver.message('Forgot "Rye likes 24 degrees"', since=mark, timeout=20)
        assert not daily.exists()  # it held only this capture
        assert not (await emacs.state())["errors"]
