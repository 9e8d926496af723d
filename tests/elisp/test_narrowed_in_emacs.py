"""A narrowed note in Emacs: ``emacs -nw`` in tmux with the README's own configuration,
the real daemon and the fake Ollama (as tests/elisp/test_walkthrough.py runs them).

``C-x n s`` on a heading, then ``C-c o s``: the similar notes window lists the notes
like that heading, and the note stays narrowed. (It raised ``args-out-of-range``, a
position of the narrowed note looked up in the similar buffer, and showed nothing.)
``i`` there inserts the link into the narrowed note and names the file's line, as the
lists do (a pin: it did so already).
"""

from __future__ import annotations

import pytest

from tests.elisp.walkthrough_driver import SIMILAR, Driver, readme_session

NOTE = "sourdough-baking.org"


@pytest.mark.timeout(180)
async def test_similar_notes_of_a_heading_in_a_narrowed_note(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama) as driver:
        emacs = driver.emacs
        await driver.open(NOTE, "* Shaping and scoring")
        await emacs.keys("C-x", "n", "s")
        await emacs.wait_screen(lambda s: "Narrow" in s, "the note narrowed")
        await emacs.keys("C-c", "o", "s")
        await emacs.wait_screen(
            lambda s: "Similar to: Shaping and scoring" in s and "Looking for" not in s, "the similar notes"
        )
        screen = await emacs.screen()
        assert "Narrow" in screen, screen  # the note is still narrowed
        state = await emacs.state()
        assert "out of range" not in state["messages"] and "Error" not in state["messages"], state["messages"]


@pytest.mark.timeout(180)
async def test_a_link_inserted_from_the_similar_notes_into_a_narrowed_note_names_the_files_line(
    tmp_path, roam_dir, fake_ollama
):
    async with readme_session(tmp_path, roam_dir, fake_ollama) as driver:
        emacs = driver.emacs
        await driver.open(NOTE, "Pre-shape into a loose round")  # line 39 of the file
        await emacs.keys("C-x", "n", "s")
        await emacs.wait_screen(lambda s: "Narrow" in s, "the note narrowed")
        await emacs.keys("C-c", "o", "s")
        await emacs.wait_screen(
            lambda s: "Similar to: Shaping and scoring" in s and "Looking for" not in s, "the similar notes"
        )
        mark = await driver.mark()
        await driver.select(SIMILAR)
        await emacs.keys("i")  # on the first entry, where the list opens
        said = await driver.message("Inserted a link to", since=mark)
        lines = (roam_dir / NOTE).read_text().split("\n")
        end = next(i for i, line in enumerate(lines, 1) if "lame) at a shallow angle" in line)
        assert said.endswith(f", line {end}"), (said, end)
        state = await emacs.state()
        assert "Error" not in state["messages"], state["messages"]
