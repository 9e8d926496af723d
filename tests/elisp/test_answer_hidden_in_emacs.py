"""An answer whose window goes away while it streams: ``emacs -nw`` in tmux with the
README's own configuration, the real daemon and the fake Ollama (its stream held after
the first words, as tests/elisp/walkthrough_steps.py holds it).

- ``C-x 1`` in the note while the answer streams took the answers' window away, and the
  answer went on in its buffer without a word: the user did not know it was still
  coming, nor where it went. The echo area now says it is still coming (and how to stop
  it), and when it is in, where it is.
- ``C-x k`` on the answers buffer while the answer streams: nothing said, and the model
  went on answering into no buffer. The answer is stopped (the daemon stops the model)
  and the echo area says so; killed before the daemon was even asked, nothing is asked.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal

import pytest

from tests.elisp.test_firstday_refusals_in_emacs import _started
from tests.elisp.test_small_terminal_in_emacs import _roam_dir_known
from tests.elisp.walkthrough_driver import ANSWERS, Driver

REPLY = "Feed it twice a day with rye flour. It doubles within six hours."


async def _ask_held(driver: Driver, question: str) -> None:
    """``C-c o a`` QUESTION from the note, the model's stream held after its first words."""
    fake = driver.fake.state
    fake.first_piece_sent.clear()
    fake.stream_gate = asyncio.Event()
    await driver.emacs.keys("C-c", "o", "a")
    await driver.emacs.wait_text("Ask about")
    await driver.emacs.type(question)
    await driver.emacs.keys("Enter")
    await asyncio.wait_for(fake.first_piece_sent.wait(), 15)
    await driver.emacs.wait(lambda: driver.window_of(ANSWERS), "the answers' window")


@pytest.mark.timeout(180)
async def test_an_answer_whose_window_goes_says_it_is_coming_and_where_it_went(tmp_path, roam_dir, fake_ollama):
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama, 100, 30)
    emacs = driver.emacs
    fake_ollama.state.chat_reply = REPLY
    try:
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        await _ask_held(driver, "how often do I feed it?")
        since = await driver.mark()
        await emacs.keys("C-x", "1")
        await emacs.wait(lambda: driver._not_shown(ANSWERS), "C-x 1 to take the answers' window away")
        said = await driver.message("still coming", since=since)
        assert ANSWERS in said and "C-c o k" in said, said
        fake_ollama.state.release()
        said = await driver.message("is in", since=since)
        assert "how often do I feed it?" in said and ANSWERS in said, said
        assert REPLY in await driver.buffer_text(ANSWERS)
        assert await emacs.eval("arcology-oracle--answering") == "nil"
        assert not (await emacs.state())["errors"]
    finally:
        await emacs.stop()
        daemon.stop()


@pytest.mark.timeout(180)
async def test_killing_the_answers_buffer_stops_the_answer(tmp_path, roam_dir, fake_ollama):
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama, 100, 30)
    emacs = driver.emacs
    fake_ollama.state.chat_reply = REPLY
    try:
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        await _ask_held(driver, "how often do I feed it?")
        since = await driver.mark()
        fake_ollama.state.client_gone.clear()
        # In its window, where C-x k offers it (a SPC typed at the prompt completes).
        await driver.select(ANSWERS)
        await emacs.keys("C-x", "k")
        await emacs.wait_text("Kill buffer")
        await emacs.keys("Enter")
        said = await driver.message("Stopped", since=since)
        assert ANSWERS in said, said
        await asyncio.wait_for(fake_ollama.state.client_gone.wait(), 15)  # the daemon stopped the model
        assert await emacs.eval("arcology-oracle--answering") == "nil"
        assert await emacs.eval(f"(get-buffer {ANSWERS!r})".replace("'", '"')) == "nil"
        assert not (await emacs.state())["errors"]
    finally:
        fake_ollama.state.release()
        await emacs.stop()
        daemon.stop()


@pytest.mark.timeout(180)
async def test_an_answers_buffer_killed_before_the_daemon_wakes_asks_nothing(tmp_path, roam_dir, fake_ollama):
    """The session's first question waits on Emacs asking the daemon where its notes are
    (the daemon asleep: SIGSTOP). The answers buffer killed meanwhile, the daemon's
    answer then showed "arcology-oracle: (error "Marker points into wrong buffer" ...)".
    Nothing is asked of the model, and nothing goes wrong."""
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama, 100, 30)
    emacs = driver.emacs
    try:
        os.kill(daemon.pid, signal.SIGSTOP)
        try:
            await emacs.keys("C-c", "o", "a")
            await emacs.wait_text("Ask about")
            await emacs.type("how do I feed it?")
            await emacs.keys("Enter")
            await emacs.wait_text("* how do I feed it?")
            await emacs.eval(f"(kill-buffer {json.dumps(ANSWERS)})")
        finally:
            os.kill(daemon.pid, signal.SIGCONT)
        await emacs.wait(lambda: _roam_dir_known(emacs), "the daemon, awake, to answer where the notes are", timeout=30)
        state = await emacs.state()
        assert "error" not in state["messages"].lower(), state["messages"]
        assert not state["errors"]
        assert await emacs.eval("arcology-oracle--answering") == "nil"
        assert fake_ollama.state.chats == []
    finally:
        await emacs.stop()
        daemon.stop()
