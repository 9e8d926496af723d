"""The similar notes and the link suggestions on a first day in Emacs, third round:
``emacs -nw`` in tmux with the README's own configuration, the real daemon and the fake
Ollama (as tests/elisp/test_firstday_refusals_in_emacs.py runs them).

- ``+`` in either list with nothing below the relevance cut did nothing and said
  nothing. It says so.
- The daemon stopped (SIGSTOP: a computer asleep) while the list followed point: the
  side window said "no answer from the daemon within N seconds", and kept saying it
  after the daemon woke until point moved to another heading or ``g``. The next command
  in the note asks again (after the idle delay, as point moving does), and the message
  says so.
- ``C-c o a`` in the link suggestions showed the answers in that same window, the
  suggestions gone, the answers selected. The answers go beside them; the suggestions
  stay, selected, as the similar notes do.
"""

from __future__ import annotations

import os
import signal

import pytest

from tests.elisp.test_firstday_refusals_in_emacs import _started, _wait_similar
from tests.elisp.walkthrough_driver import ANSWERS, LINKS, SIMILAR, Driver

NOTHING_BELOW = "Nothing below the relevance cut"


async def _plus_says(driver: Driver, buffer: str) -> None:
    """In BUFFER's window, ``+`` says in the echo area that nothing is below the cut,
    and the list is unchanged."""
    await driver.select(buffer)
    before = await driver.buffer_text(buffer)
    await driver.emacs.keys("+")
    await driver.emacs.wait_screen(lambda s: NOTHING_BELOW in s.rstrip("\n").split("\n")[-1], "the echo area to say so")
    assert await driver.buffer_text(buffer) == before


@pytest.mark.timeout(180)
async def test_plus_with_nothing_below_the_cut_says_so(tmp_path, roam_dir, fake_ollama):
    # ARCOLOGY_ORACLE_MIN_SCORE=0 (tests/conftest.py): no cut, nothing below it.
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama)
    emacs = driver.emacs
    try:
        await driver.open("sourdough-baking.org", "* Bulk fermentation")
        await emacs.keys("C-c", "o", "s")
        await _wait_similar(driver, "Bread Hydration", "the list")
        assert "below relevance" not in await driver.buffer_text(SIMILAR)
        await _plus_says(driver, SIMILAR)

        await driver.select("sourdough-baking.org")
        await emacs.keys("C-c", "o", "l")
        await emacs.wait(lambda: _links_shown(driver), "the suggestions, shown and selected")
        await emacs.wait_text("Links to add to")
        assert "below relevance" not in await driver.buffer_text(LINKS)
        await _plus_says(driver, LINKS)
        assert not (await emacs.state())["errors"]
    finally:
        await emacs.stop()
        daemon.stop()


@pytest.mark.timeout(180)
async def test_a_list_the_daemon_did_not_answer_recovers_at_the_next_command(tmp_path, roam_dir, fake_ollama):
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama)
    emacs = driver.emacs
    try:
        await emacs.eval("(setq arcology-oracle-timeout 2)")
        await driver.open("sourdough-baking.org", "* Bulk fermentation")
        await emacs.keys("C-c", "o", "s")
        await _wait_similar(driver, "Bread Hydration", "the list")
        os.kill(daemon.pid, signal.SIGSTOP)
        try:
            await emacs.keys("M-<")
            await driver.goto("** Reviving a sluggish")  # another heading: asked after idle
            await _wait_similar(driver, "no answer from the daemon within 2 seconds", "the timeout")
            listed = " ".join((await driver.buffer_text(SIMILAR)).split())
            assert "g asks now" in listed, listed
        finally:
            os.kill(daemon.pid, signal.SIGCONT)
        await emacs.keys("C-e")  # a command on the same heading: nothing else
        await emacs.wait(lambda: _listed_again(driver), "the list asked again")
        screen = await emacs.screen()
        assert "no answer" not in screen, screen
        assert (await driver.where())[0] == "sourdough-baking.org"
    finally:
        await emacs.stop()
        daemon.stop()


async def _listed_again(driver: Driver) -> bool:
    listed = " ".join((await driver.buffer_text(SIMILAR)).split())
    return "Similar to: Reviving a sluggish starter" in listed and "no answer" not in listed and " 0." in listed


async def _links_shown(driver: Driver) -> bool:
    """The suggestions asked for are in, in their window, selected. (The window is shown
    and selected once Emacs has heard where the daemon's notes are: a test that went on
    before then had its C-x o undone by that selection, and waited in vain.)"""
    text = await driver.buffer_text(LINKS)
    return "Links to add to" in text and "Looking" not in text and await driver.selected_buffer() == LINKS


async def _ask_from(driver: Driver, buffer: str, question: str) -> None:
    """With BUFFER's window selected, ``C-c o a`` QUESTION; wait for its answer."""
    emacs = driver.emacs
    await driver.select(buffer)
    await emacs.keys("C-c", "o", "a")
    await emacs.wait_text("Ask about sourdough-baking.org:")
    await emacs.type(question)
    await emacs.keys("Enter")
    await emacs.wait(lambda: driver._count_in(ANSWERS, question, 1), "the question in the answers")
    await emacs.wait_text(question)


@pytest.mark.timeout(180)
async def test_a_question_from_a_list_leaves_the_list_on_screen(tmp_path, roam_dir, fake_ollama):
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama, columns=120, lines=40)
    emacs = driver.emacs
    try:
        await driver.open("sourdough-baking.org", "* Bulk fermentation")
        await emacs.keys("C-c", "o", "l")
        await emacs.wait(lambda: _links_shown(driver), "the suggestions, shown and selected")
        await _ask_from(driver, LINKS, "How warm should it be?")
        screen = await emacs.wait_text("Links to add to")
        windows = await driver.windows()
        assert await driver.window_of(ANSWERS) is not None, windows
        assert await driver.window_of(LINKS) is not None, windows
        assert await driver.selected_buffer() == LINKS, windows
        assert "How warm should it be?" in screen, screen

        await driver.select("sourdough-baking.org")
        await emacs.keys("C-c", "o", "s")
        await _wait_similar(driver, "Bread Hydration", "the list")
        await _ask_from(driver, SIMILAR, "And how long?")
        screen = await emacs.wait_text("Similar to")
        windows = await driver.windows()
        assert await driver.window_of(ANSWERS) is not None, windows
        assert await driver.window_of(SIMILAR) is not None, windows
        assert await driver.selected_buffer() == SIMILAR, windows
        assert "And how long?" in screen, screen
        assert not (await emacs.state())["errors"]
    finally:
        await emacs.stop()
        daemon.stop()


@pytest.mark.timeout(180)
async def test_c_c_o_s_asks_the_daemon_once(tmp_path, roam_dir, fake_ollama):
    # C-c o s asked, then the first command after it saw the heading's line as changed
    # (the list had not recorded it) and asked again after the idle delay: every list
    # was asked for twice. Other commands in the same heading ask nothing more.
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama, columns=120, lines=40)
    emacs = driver.emacs
    try:
        await driver.open("sourdough-baking.org", "* Bulk fermentation")
        before = await driver.similar_requests()
        await emacs.keys("C-c", "o", "s")
        await _wait_similar(driver, "Bread Hydration", "the list")
        await emacs.keys("C-e")  # a command in the same heading
        await emacs.wait(lambda: _at_end_of_line(driver), "C-e done (its post-command hook run)")
        await emacs.wait(driver.similar_settled, "no refresh pending or under way")
        assert await driver.similar_requests() == before + 1
        assert not (await emacs.state())["errors"]
    finally:
        await emacs.stop()
        daemon.stop()


async def _at_end_of_line(driver: Driver) -> bool:
    point = "(window-point (selected-window))"
    return await driver.emacs.eval(f"(with-current-buffer (window-buffer) (save-excursion (goto-char {point}) (eolp)))") == "t"
