"""``C-c o s`` from the lists: ``emacs -nw`` in tmux with the README's own configuration,
the real daemon and the fake Ollama (as tests/elisp/test_firstday_refusals_in_emacs.py
runs them).

In the link suggestions (where ``C-c o l`` leaves point) and in the similar notes,
``C-c o s`` said "Similar notes need an Org buffer", though every other ``C-c o`` key
there (``a``, ``u``, ``l``) acts on the note the list is about. It shows the similar
notes of that note, at the place it was read, as from the note.
"""

from __future__ import annotations

import pytest

from tests.elisp.test_firstday_lists_in_emacs import _links_shown
from tests.elisp.test_firstday_refusals_in_emacs import _started, _wait_similar
from tests.elisp.walkthrough_driver import SIMILAR


@pytest.mark.timeout(180)
async def test_c_c_o_s_in_a_list_shows_the_similar_notes_of_its_note(tmp_path, roam_dir, fake_ollama):
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama, 120, 40)
    emacs = driver.emacs
    try:
        await driver.open("sourdough-baking.org", "* Reviving a sluggish starter")
        await emacs.keys("C-c", "o", "l")
        await emacs.wait(lambda: _links_shown(driver), "the suggestions, shown and selected", timeout=15)
        since = await driver.mark()
        await emacs.keys("C-c", "o", "s")
        await _wait_similar(driver, "Similar to: Reviving a sluggish starter", "the similar notes of the note")
        # And in the similar notes themselves: asked again, in the same window.
        await driver.select(SIMILAR)
        await emacs.keys("C-c", "o", "s")
        await _wait_similar(driver, "Similar to: Reviving a sluggish starter", "the similar notes again")
        messages = "\n".join((await emacs.state())["messages"].split("\n")[since:])
        assert "need an Org buffer" not in messages, messages
        assert [w["buffer"] for w in await driver.windows()].count(SIMILAR) == 1, await driver.windows()
        assert not (await emacs.state())["errors"]
    finally:
        await emacs.stop()
        daemon.stop()
