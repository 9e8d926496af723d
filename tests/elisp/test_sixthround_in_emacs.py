"""A newcomer's first day in Emacs, sixth round: ``emacs -nw`` in tmux with the README's
own configuration, the real daemon and the fake Ollama (as
tests/elisp/test_fourthround_in_emacs.py runs them).

- A refusal (``user-error``) is shown by Emacs, which broke it at the 80th column,
  mid-word ("suggestions ar\\" then "e for a note as saved"), where the package's own
  messages read in whole words. Refusals now read as they do; repeated, *Messages* says
  "[2 times]" after its one line, as Emacs's ``message`` does (the package's log added
  the line again).
- A message taller than the echo area (``max-mini-window-height``) showed its last lines
  only: what it is about was cut off at the top. Its first lines and its last words show.
- ``C-c o s`` and ``C-c o L`` in a dedicated org-roam buffer
  (``org-roam-buffer-display-dedicated``) acted on the place the note was last read,
  another node than the one the buffer shows, which ``C-c o P`` there tags.
- ``C-/`` in the link suggestions after ``i`` took the link out of the note but not back
  into the list.
- ``C-c o P`` in an Org file outside the notes said "save the file to take the heading
  out of the index": the daemon never read it. It says that the file is not among the
  daemon's notes, as ``C-c o u`` there does, and that Emacs sends nothing of the heading.
"""

from __future__ import annotations

import re

import pytest

from tests.elisp.test_firstday_lists_in_emacs import _links_shown
from tests.elisp.test_fourthround_in_emacs import _shows
from tests.elisp.walkthrough_driver import LINKS, SIMILAR, Driver, readme_session

WHY = "suggestions are for a note as saved"


async def _refused_in_a_new_buffer(driver: Driver, name: str) -> str:
    """``C-c o l`` in a new Org buffer NAME, never saved; return the refusal as *Messages*
    has it (its last line)."""
    emacs = driver.emacs
    await emacs.keys("C-x", "b")
    await emacs.type(name)
    await emacs.keys("Enter")
    await emacs.wait(lambda: driver._selected_is(name), f"{name} selected")
    await driver.mx("org-mode")
    await emacs.wait_text("Org")
    mark = await driver.mark()
    await emacs.keys("C-c", "o", "l")
    return await driver.message(WHY, since=mark)


def _echo_lines(screen: str, count: int) -> list[str]:
    """The last COUNT lines of SCREEN: the echo area, when it is that tall."""
    return [line.rstrip() for line in screen.rstrip("\n").split("\n")[-count:]]


@pytest.mark.timeout(180)
async def test_a_refusal_reads_in_whole_words_and_is_counted_when_repeated(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        said = await _refused_in_a_new_buffer(driver, "draft")
        assert said == f"Save draft among your notes first (C-x C-w): it has no file, and {WHY}", said
        screen = await emacs.wait_text("as saved")
        echo = _echo_lines(screen, 2)
        assert not any(line.endswith("\\") for line in echo), screen
        assert " ".join(echo) == said, screen

        await emacs.keys("C-c", "o", "l")
        await driver.message(f"{said} [2 times]")
        messages = (await emacs.state())["messages"].rstrip("\n").split("\n")
        assert messages[-1] == f"{said} [2 times]", messages[-3:]


@pytest.mark.timeout(180)
async def test_a_message_taller_than_the_echo_area_keeps_its_start_and_its_end(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await emacs.eval("(setq max-mini-window-height 2)")  # a user's setting: two lines at most
        name = "rye-bread-and-the-sluggish-starter-that-needs-a-warm-kitchen-in-winter"
        said = await _refused_in_a_new_buffer(driver, name)
        assert said.startswith(f"Save {name} among") and said.endswith(WHY), said
        screen = await emacs.wait_text("as saved")
        first, last = _echo_lines(screen, 2)
        assert first.startswith(f"Save {name}"), screen
        assert last.startswith("… ") and last.endswith(WHY), screen
        assert not first.endswith("\\") and len(last) < 80, screen


@pytest.mark.timeout(180)
async def test_a_dedicated_org_roam_buffer_acts_on_the_node_it_shows(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(160, 45)) as driver:
        emacs = driver.emacs
        dedicated = "*org-roam: Starter maintenance<sourdough-baking.org>*"
        await driver.open("sourdough-baking.org", "** Feeding schedule")
        await emacs.keys("C-u")
        await driver.mx("org-roam-buffer-display-dedicated")  # the node at point
        await emacs.wait(lambda: driver.window_of(dedicated), "the dedicated org-roam buffer", timeout=15)
        await driver.goto("* Bulk fermentation")  # read elsewhere now: another node
        await driver.select(dedicated)
        await emacs.keys("C-c", "o", "s")
        await emacs.wait(lambda: _shows(driver, SIMILAR, "Similar to: "), "the similar notes", timeout=15)
        assert await _shows(driver, SIMILAR, "Similar to: Starter maintenance"), await driver.buffer_text(SIMILAR)

        await driver.select(dedicated)
        await emacs.keys("C-c", "o", "L")
        screen = await emacs.wait_text("Rejected links from: ", timeout=15)
        assert "Rejected links from: Starter maintenance" in screen, screen
        state = await emacs.state()
        assert not state["errors"], state["errors"]


@pytest.mark.timeout(180)
async def test_undo_in_the_suggestions_offers_the_link_taken_out_again(tmp_path, roam_dir, fake_ollama):
    """``C-/`` in the link suggestions right after ``i`` took the link out of the note, and
    the suggestion stayed gone from the list (only ``g`` brought it back)."""
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(120, 40)) as driver:
        emacs = driver.emacs
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        before = await driver.buffer_text("sourdough-baking.org")
        await emacs.keys("C-c", "o", "l")
        await emacs.wait(lambda: _links_shown(driver), "the suggestions, shown and selected", timeout=15)
        listed = await driver.buffer_text(LINKS)
        title = _first_title(listed)
        await emacs.keys("i")
        await driver.message(f'Inserted a link to "{title}"')
        assert title not in await driver.buffer_text(LINKS)
        await driver.select(LINKS)
        await emacs.keys("C-/")
        await emacs.wait(lambda: driver._text_is("sourdough-baking.org", before), "the link taken out")
        await emacs.wait(lambda: _first_title_is(driver, title), f"{title} offered again")
        assert not (await emacs.state())["errors"]


def _first_title(listed: str) -> str:
    """The title of the first suggestion of the list's text (its first entry line)."""
    match = re.search(r"^\d\.\d\d  (.*?)(?: weak)?$", listed, re.M)
    assert match, listed
    return match.group(1)


async def _first_title_is(driver: Driver, title: str) -> bool:
    return _first_title(await driver.buffer_text(LINKS)) == title


@pytest.mark.timeout(180)
async def test_making_private_outside_the_notes_says_they_are_in_no_index(tmp_path, roam_dir, fake_ollama):
    outside = tmp_path / "elsewhere" / "plans.org"
    outside.parent.mkdir()
    outside.write_text("* Plans\nA heading outside the notes.\n")
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(120, 40)) as driver:
        emacs = driver.emacs
        await emacs.keys("C-x", "C-f")
        await emacs.wait_text("Find file:")
        await emacs.type(str(outside))
        await emacs.keys("Enter")
        await emacs.wait(lambda: driver._selected_is("plans.org"), "plans.org selected")
        mark = await driver.mark()
        await emacs.keys("C-c", "o", "P")
        said = await driver.message("Tagged :private:", since=mark)
        assert "out of the index" not in said, said
        assert said == (
            f"Tagged :private:; plans.org is not among the daemon's notes (not under {roam_dir}/): "
            "Emacs sends nothing of the heading"
        ), said
