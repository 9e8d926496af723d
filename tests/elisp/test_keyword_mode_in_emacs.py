"""The notes found by keywords, in Emacs: ``emacs -nw`` in tmux with the README's own
configuration, the real daemon and the fake Ollama (as tests/elisp/test_walkthrough.py
runs them).

When the question's embedding does not come in time (an embedder busy or loading), the
daemon answers from keyword matches and says so: ``"mode": "keyword"`` of ``/ask``,
``/summarize`` and ``/converse``. Emacs said it only while ``/ask`` waited for the model
("Found N notes by keywords; …", tests/elisp/test_ask_progress_in_emacs.py), then never:
the answer's sources read "** Sources" as for notes found by meaning, and ``C-c o c``
said "answered in …". The sources of an answer or a summary (one stream, the same code)
are headed "** Sources (keyword match only)", as the web page and ``GET /ask`` head
them, and a conversation's answer says it was made from notes found by keyword match only.
"""

from __future__ import annotations

import pytest

from tests.elisp.walkthrough import Walk
from tests.elisp.walkthrough_driver import ANSWERS, Driver, readme_emacs
from tests.emacs_batch import require_packages

KEYWORDS = "** Sources (keyword match only)"
CONVERSED = "answered from notes found by keyword match only"


async def _question(driver: Driver, text: str) -> None:
    await driver.emacs.keys("C-c", "o", "a")
    await driver.emacs.wait_text("Ask about this buffer:")
    await driver.emacs.type(text)
    await driver.emacs.keys("Enter")


@pytest.mark.timeout(240)
async def test_answers_found_by_keywords_say_so(tmp_path, roam_dir, fake_ollama):
    require_packages()
    daemon, emacs, _ = await readme_emacs(
        tmp_path, roam_dir, fake_ollama,
        env={"ARCOLOGY_ORACLE_SEARCH_EMBED_WAIT": "0.5", "ARCOLOGY_ORACLE_EMBED_TIMEOUT": "600"},
    )  # fmt: skip
    driver = Driver(emacs, Walk(emacs, {}), roam_dir, fake_ollama, tmp_path, daemon)
    try:
        await emacs.start({"WALK_SERVER_DIR": str(emacs.server_socket.parent)})
        await emacs.wait_text("*scratch*", timeout=20)
        await driver.open("sourdough-baking.org", "** Feeding schedule")
        fake_ollama.state.configure({"fault_paths": ["/api/embed"], "hang": True, "hang_max": 3600})

        await _question(driver, "How often do I feed it?")
        await emacs.wait(lambda: _has(driver, ANSWERS, "- [1] "), "the answer's sources", timeout=30)
        text = await driver.buffer_text(ANSWERS)
        assert KEYWORDS in text, text

        await driver.open("conversation.org")
        await emacs.type("* Sourdough :conversation:")
        await emacs.keys("Enter")
        await emacs.type("** Me")
        await emacs.keys("Enter")
        await emacs.type("How often should I feed a starter kept in the fridge?")
        await emacs.keys("C-x", "C-s")
        await emacs.wait(lambda: (roam_dir / "conversation.org").exists(), "the conversation saved")
        mark = await driver.mark()
        await emacs.keys("C-c", "o", "c")
        said = await driver.message("arcology-oracle: answered", since=mark, timeout=30)
        assert CONVERSED in said, said

        # Found by meaning again: nothing said.
        fake_ollama.state.release()
        fake_ollama.state.configure({"fault_paths": None, "hang": False})
        await driver.open("sourdough-baking.org", "** Feeding schedule")
        await _question(driver, "What flour does the starter get?")
        await emacs.wait(lambda: _count(driver, ANSWERS, "- [1] ", 2), "the second answer's sources", timeout=30)
        text = await driver.buffer_text(ANSWERS)
        assert text.count("** Sources (keyword") == 1 and text.count("** Sources\n") == 1, text
        mark = await driver.mark()
        await driver.open("conversation.org")
        await emacs.keys("M->")
        await emacs.type("** Me")
        await emacs.keys("Enter")
        await emacs.type("And in summer?")
        await emacs.keys("C-c", "o", "c")
        said = await driver.message("arcology-oracle: answered", since=mark, timeout=30)
        assert "keyword" not in said, said
        assert not (await emacs.state())["errors"]
    finally:
        fake_ollama.state.release()
        await emacs.stop()
        daemon.stop()


async def _has(driver: Driver, buffer: str, text: str) -> bool:
    return text in await driver.buffer_text(buffer)


async def _count(driver: Driver, buffer: str, text: str, count: int) -> bool:
    return (await driver.buffer_text(buffer)).count(text) >= count
