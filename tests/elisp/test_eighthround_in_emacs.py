"""A newcomer's first day in Emacs, eighth round: ``emacs -nw`` in tmux with the README's
own configuration, the real daemon and the fake Ollama (as
tests/elisp/test_seventhround_in_emacs.py runs them).

- ``C-c o c`` pressed again while a slow model answers asked again, and the conversation
  got two answers. The second press says an answer is on its way and sends nothing; the
  conversation gets one answer.
- ``C-c o K`` on a capture alone in the daily the daemon made for it: the file goes, and
  Emacs kills its buffer, so no undo brings the capture back; nor does one when the note
  was not visited. The message says where its text is: on the kill ring, ``C-y`` yanks it.
- ``C-c o a`` in the rejected links asked "Ask about this buffer:" and sent the list's own
  lines as the note; ``C-c o u`` there said "Summaries need an Org buffer". Both say the
  list holds the links rejected, no note, and ask nothing.
"""

from __future__ import annotations

import pytest

from tests.elisp.test_asleep_lists_in_emacs import REJECTIONS
from tests.elisp.test_typed_capture_source_in_emacs import _type_capture
from tests.elisp.walkthrough_driver import Driver, readme_session

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
        # As it says: C-c o k stops waiting, and C-c o c asks again.
        await emacs.keys("C-c", "o", "k")
        await driver.message("Stopped", since=mark)
        await emacs.keys("C-c", "o", "c")
        await fake_ollama.state.wait_for("/api/chat", 2)
        fake_ollama.state.release()
        await driver.message("arcology-oracle: answered", since=mark, timeout=20)
        assert (await driver.buffer_text("inbox.org")).count(":ORACLE_MODEL:") == 1
        assert fake_ollama.state.count("/api/chat") == 2
        errors = (await emacs.state())["errors"]
        assert [e.strip() for e in errors] == [ON_ITS_WAY], errors


async def _forget(driver: Driver) -> str:
    """``C-c o K``, yes; return the message."""
    mark = await driver.mark()
    await driver.emacs.keys("C-c", "o", "K")
    await driver.emacs.wait_screen(lambda s: "(yes or no)" in s, "the question")
    await driver.emacs.type("yes")
    await driver.emacs.keys("Enter")
    return await driver.message("Forgot", since=mark, timeout=20)


@pytest.mark.timeout(180)
async def test_a_capture_forgotten_with_its_daily_goes_to_the_kill_ring(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        before = {p: p.read_bytes() for p in driver.notes()}
        await _type_capture(driver, "Buy oat milk")  # the last remembered, its daily not visited
        (daily,) = set(driver.notes()) - set(before)
        said = await _forget(driver)
        assert said.endswith("is gone, it held only this capture (its text is on the kill ring: C-y yanks it)"), said
        assert not daily.exists()
        assert "Buy oat milk" in (await emacs.state())["kill"]

        await _type_capture(driver, "Call the florist")
        await driver.open(str(daily.relative_to(roam_dir)), "Call the florist")  # at point, visited
        said = await _forget(driver)
        assert said.endswith("is gone, it held only this capture (its text is on the kill ring: C-y yanks it)"), said
        assert not daily.exists()
        kill = (await emacs.state())["kill"]
        assert kill.startswith("* ") and "Call the florist" in kill and ":CAPTURED_BY:" in kill, kill
        assert {p: p.read_bytes() for p in driver.notes()} == before  # nothing else changed
        assert not (await emacs.state())["errors"]


@pytest.mark.timeout(180)
async def test_asking_in_the_rejected_links_is_refused(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        await emacs.keys("C-c", "o", "L")
        await emacs.wait_text("Rejected links from", timeout=15)
        await driver.select(REJECTIONS)
        refusal = f"{REJECTIONS} lists the links you rejected, no note: ask from a note"
        for key, logged in (("a", refusal), ("u", f"{refusal} [2 times]")):
            mark = await driver.mark()
            await emacs.keys("C-c", "o", key)
            assert await driver.message(logged, since=mark - 1) == logged
        assert "Ask about" not in await emacs.screen()
        assert fake_ollama.state.count("/api/chat") == 0
        errors = (await emacs.state())["errors"]
        assert [e.strip() for e in errors] == [refusal, refusal], errors
