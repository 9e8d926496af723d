"""The similar notes' note in keyword mode says what is true: ``emacs -nw`` in tmux with the
README's configuration, the real daemon and the fake Ollama, made to fail.

With Ollama failing, a new note's similar notes (asked by its text) are keyword matches,
and the list said "(keyword matches: embeddings are not ready)", when every heading had
its vector and the embedder was what failed. The daemon's /status says which: the note
names the failing embedder and its error.
"""

from __future__ import annotations

import pytest

from tests.elisp.test_firstday_refusals_in_emacs import _started, _wait_similar
from tests.elisp.walkthrough_driver import SIMILAR
from tests.emacs_batch import require_packages


@pytest.mark.timeout(180)
async def test_keyword_matches_say_the_embedder_fails(tmp_path, roam_dir, fake_ollama):
    require_packages()
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama)
    emacs = driver.emacs
    try:
        fake_ollama.state.fail_status = 500
        await driver.open("rye-bread.org")  # a new file: asked about by its text
        await emacs.type("* Rye bread")
        await emacs.keys("Enter")
        await emacs.type("Rye flour and a sluggish starter need a warm kitchen.")
        await emacs.keys("C-c", "o", "s")
        await _wait_similar(driver, "keyword matches", "the keyword matches' list")
        text = " ".join((await driver.buffer_text(SIMILAR)).split())
        assert "not ready" not in text, text
        assert "embedder" in text and "fails" in text and "injected failure" in text, text
        state = await emacs.state()
        assert not state["errors"], state["errors"]
    finally:
        fake_ollama.state.fail_status = None
        await emacs.stop()
        daemon.stop()
