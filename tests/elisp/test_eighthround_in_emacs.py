"""A newcomer's first day in Emacs, eighth round: ``emacs -nw`` in tmux with the README's
own configuration, the real daemon and the fake Ollama (as
tests/elisp/test_seventhround_in_emacs.py runs them).

- ``C-c o c`` pressed again while a slow model answers asked again, and the conversation
  got two answers. The second press says an answer is on its way and sends nothing; the
  conversation gets one answer.
"""

from __future__ import annotations

import pytest

from tests.elisp.walkthrough_driver import readme_session

ON_ITS_WAY = 'An answer to "Winter" is on its way: it comes here (C-c o k stops waiting for it)'


@pytest.mark.timeout(180)
async def test_converse_pressed_again_while_the_model_thinks_adds_one_answer(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        fake_ollama.state.configure({"fault_paths": ["/api/chat"], "hang": True, "hang_max": 3600})
        mark, _ = await driver.converse("What should I plant before the frost?")
        await fake_ollama.state.wait_for("/api/chat")  # the model is thinking
        await emacs.keys("C-c", "o", "c")
        assert await driver.message(ON_ITS_WAY, since=mark) == ON_ITS_WAY
        fake_ollama.state.release()
        await driver.message("arcology-oracle: answered", since=mark, timeout=20)
        assert (await driver.buffer_text("inbox.org")).count(":ORACLE_MODEL:") == 1
        assert fake_ollama.state.count("/api/chat") == 1
        errors = (await emacs.state())["errors"]
        assert [e.strip() for e in errors] == [ON_ITS_WAY], errors
