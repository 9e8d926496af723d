"""``C-c o a`` while the chat model loads: ``emacs -nw`` in tmux with the README's own
configuration, the real daemon and the fake Ollama (as tests/elisp/test_walkthrough.py
runs them).

The answers buffer said "Waiting for the answer…" for as long as the model took to load
(tens of seconds on a GPU box), though the daemon had found the notes at once. Emacs asks
/ask with ``progress`` and says "Found N notes; waiting for the model…" (" by keywords"
when the question's embedding did not come in time) until the first words; a model that
cannot answer (an ``error`` line after ``found``, where it was a 503) is "[Failed: …]".
"""

from __future__ import annotations

import re

import pytest

from tests.elisp.walkthrough import Walk
from tests.elisp.walkthrough_driver import ANSWERS, Driver, readme_emacs
from tests.emacs_batch import require_packages


async def _ask(tmp_path, roam_dir, fake_ollama, env=None) -> tuple[Driver, object]:
    daemon, emacs, _ = await readme_emacs(tmp_path, roam_dir, fake_ollama, env=env)
    driver = Driver(emacs, Walk(emacs, {}), roam_dir, fake_ollama, tmp_path, daemon)
    await emacs.start({"WALK_SERVER_DIR": str(emacs.server_socket.parent)})
    await emacs.wait_text("*scratch*", timeout=20)
    await driver.open("sourdough-baking.org", "** Feeding schedule")
    return driver, daemon


async def _question(driver: Driver, text: str) -> None:
    await driver.emacs.keys("C-c", "o", "a")
    await driver.emacs.wait_text("Ask about this buffer:")
    await driver.emacs.type(text)
    await driver.emacs.keys("Enter")


@pytest.mark.parametrize(
    ("hung", "says"),
    [
        (["/api/chat"], r"Found \d+ notes?; waiting for the model… \(C-c C-k stops it\)"),
        (["/api/chat", "/api/embed"], r"Found \d+ notes? by keywords; waiting for the model… \(C-c C-k stops it\)"),
    ],
    ids=["by-meaning", "keyword-fallback"],
)
@pytest.mark.timeout(180)
async def test_a_question_says_the_notes_are_found_while_the_model_loads(tmp_path, roam_dir, fake_ollama, hung, says):
    require_packages()
    driver, daemon = await _ask(tmp_path, roam_dir, fake_ollama,
                                env={"ARCOLOGY_ORACLE_SEARCH_EMBED_WAIT": "0.5", "ARCOLOGY_ORACLE_EMBED_TIMEOUT": "600"})  # fmt: skip
    emacs = driver.emacs
    try:
        fake_ollama.state.configure({"fault_paths": hung, "hang": True, "hang_max": 3600})
        await _question(driver, "How often do I feed it?")
        await emacs.wait_screen(lambda s: re.search(says, s) is not None, f"the answers buffer saying {says!r}")
        assert "** Sources" not in await driver.buffer_text(ANSWERS)
        fake_ollama.state.release()
        await emacs.wait_screen(lambda s: "** Sources" in s, "the answer")
        assert "waiting for the model" not in await emacs.screen()
        assert not (await emacs.state())["errors"]
    finally:
        fake_ollama.state.release()
        await emacs.stop()
        daemon.stop()


@pytest.mark.timeout(180)
async def test_a_model_that_cannot_answer_after_the_notes_are_found_is_a_failure(tmp_path, roam_dir, fake_ollama):
    require_packages()
    driver, daemon = await _ask(tmp_path, roam_dir, fake_ollama)
    emacs = driver.emacs
    try:
        fake_ollama.state.remove_model("llama3.2")
        await _question(driver, "How often do I feed it?")
        screen = await emacs.wait_screen(lambda s: "[Failed: " in s, "the failure in the answers buffer")
        assert "waiting for the model" not in screen, screen
        text = await driver.buffer_text(ANSWERS)
        assert "llama3.2" in text and "** Sources" not in text, text
    finally:
        await emacs.stop()
        daemon.stop()
