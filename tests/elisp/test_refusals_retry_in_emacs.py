"""A capture or a forget the daemon refuses for now, in Emacs: ``emacs -nw`` in tmux with
the README's own configuration, the real daemon and the fake Ollama (as
tests/elisp/test_walkthrough.py runs them).

Another Emacs holds today's daily note and the capture inbox with unsaved edits (their
lock files): the daemon refuses with a 409 whose ``retry`` is true. ``C-c o M`` said the
daemon's words and "nothing was remembered", with nothing about trying again; ``C-c o
K`` offered the retry twice ("Nothing forgotten yet (C-c o K tries again in a moment):
... save it and try again"). Each says "yet", and names its key once, where the daemon's
words say to try again; once the other Emacs has saved, the same keys do it.

Then a forget from the daily note itself, the similar notes shown: the daemon deletes
the daily (it held only that capture), Emacs kills its buffer, and the window shows the
note read before. The list kept saying "Similar to: <the daily>", a note gone, until a
key was pressed in the note. It follows that note at once.
"""

from __future__ import annotations

import re

import pytest

from tests.elisp.walkthrough import Walk
from tests.elisp.test_firstday_refusals_in_emacs import _wait_similar
from tests.elisp.walkthrough_driver import SIMILAR, Driver, readme_emacs
from tests.emacs_batch import require_packages

TEXT = "Oil the hinges of the bread box"


def _lock(path):
    """Lock PATH as another Emacs with unsaved edits does (.#NAME beside it)."""
    lock = path.with_name(".#" + path.name)
    lock.symlink_to("someone@another-host.4242:1")
    return lock


async def _remember(driver: Driver, text: str) -> None:
    await driver.emacs.keys("C-c", "o", "M")
    await driver.emacs.wait_text("Remember:")
    await driver.emacs.type(text)
    await driver.emacs.keys("Enter")


@pytest.mark.timeout(180)
async def test_a_refusal_for_now_names_the_key_that_tries_again_once(tmp_path, roam_dir, fake_ollama):
    require_packages()
    daemon, emacs, _ = await readme_emacs(tmp_path, roam_dir, fake_ollama)
    driver = Driver(emacs, Walk(emacs, {}), roam_dir, fake_ollama, tmp_path, daemon)
    locks = []
    try:
        await emacs.start({"WALK_SERVER_DIR": str(emacs.server_socket.parent)})
        await emacs.wait_text("*scratch*", timeout=20)
        mark = await driver.mark()
        await _remember(driver, "Buy rye flour")
        said = await driver.message("Remembered in", since=mark, timeout=20)
        daily = roam_dir / re.search(r"Remembered in (\S+):\d+", said).group(1)

        locks = [_lock(daily), _lock(roam_dir / "inbox.org")]
        before = {p: p.read_bytes() for p in (daily, roam_dir / "inbox.org") if p.exists()}
        mark = await driver.mark()
        await _remember(driver, TEXT)
        said = await driver.message("(HTTP 409)", since=mark, timeout=20)
        assert said.startswith("arcology-oracle: Nothing remembered yet: both today's daily note"), said
        assert "save one and try again with C-c o M (HTTP 409); your text is on the kill ring" in said, said
        assert len(re.findall(r"\bagain\b", said)) == 1, said
        assert TEXT in (await emacs.state())["kill"]
        assert {p: p.read_bytes() for p in before} == before  # nothing written

        mark = await driver.mark()
        await emacs.keys("C-c", "o", "K")
        await emacs.wait_screen(lambda s: "(yes or no)" in s, "the question")
        await emacs.type("yes")
        await emacs.keys("Enter")
        said = await driver.message("(HTTP 409)", since=mark, timeout=20)
        assert said.startswith(f"arcology-oracle: Nothing forgotten yet: {daily.relative_to(roam_dir)} has unsaved"), said
        assert said.endswith("save it and try again with C-c o K (HTTP 409)"), said
        assert len(re.findall(r"\bagain\b", said)) == 1, said

        for lock in locks:  # the other Emacs saved: the same keys do it
            lock.unlink()
        locks = []
        mark = await driver.mark()
        await emacs.keys("C-c", "o", "K")
        await emacs.wait_screen(lambda s: "(yes or no)" in s, "the question")
        await emacs.type("yes")
        await emacs.keys("Enter")
        await driver.message("Forgot", since=mark, timeout=20)
        assert not (await emacs.state())["errors"]

        await _forget_in_the_daily(driver)
    finally:
        for lock in locks:
            lock.unlink()
        await emacs.stop()
        daemon.stop()


async def _forget_in_the_daily(driver: Driver) -> None:
    """Capture, visit the daily with the list shown, forget there: the list follows the
    note the window shows next, with no key pressed."""
    emacs = driver.emacs
    await driver.open("sourdough-baking.org")
    await emacs.keys("C-c", "o", "s")
    await _wait_similar(driver, "Similar to: Sourdough Baking", "the note's list")
    mark = await driver.mark()
    await _remember(driver, "Feed the starter before bed")
    said = await driver.message("Remembered in", since=mark, timeout=20)
    daily = re.search(r"Remembered in (\S+):\d+", said).group(1)
    await driver.open(daily, "* Feed the starter")
    await _wait_similar(driver, "Similar to: Feed the starter before bed", "the daily's list")
    mark = await driver.mark()
    await emacs.keys("C-c", "o", "K")
    await emacs.wait_screen(lambda s: "(yes or no)" in s, "the question")
    await emacs.type("yes")
    await emacs.keys("Enter")
    said = await driver.message("Forgot", since=mark, timeout=20)
    assert "is gone" in said, said
    assert await driver.selected_buffer() == "sourdough-baking.org"
    await _wait_similar(driver, "Similar to: Sourdough Baking", "the list to follow the note shown")
    assert SIMILAR in [w["buffer"] for w in await driver.windows()]
    assert not (await emacs.state())["errors"]
