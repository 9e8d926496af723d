"""What a newcomer met on a first day in Emacs, fifth round: ``emacs -nw`` in tmux with
the README's own configuration, the real daemon and the fake Ollama (as
tests/elisp/test_walkthrough.py runs them).

- In the org-roam buffer ``C-c o P`` said "Making a note private needs an Org buffer":
  it tags the node the buffer shows, in its note. ``C-c o M`` typed there kept no
  ``:SOURCE:`` of the note read, and with a region it sent the org-roam buffer's own
  text (a backlink's preview, perhaps of a private heading): the typed text's source is
  the note's heading, and a region of the list is refused, saying where to select.
  ``C-c o d`` there, where no answer is, says so. The refusals fit an 80-column line.
- A message wider than an 80-column terminal ("Remembered in ...", "daemon not reachable
  at ... (connection refused): start it ...") was wrapped by Emacs at the 80th column,
  mid-word, with a backslash: it is shown on lines broken between words, whole.
"""

from __future__ import annotations

import re

import pytest

from tests.elisp.walkthrough_driver import Driver, readme_session

ROAM = "*org-roam*"


async def _org_roam_buffer_on_starter(driver: Driver) -> None:
    """sourdough-baking.org read at its "Starter maintenance" node, the org-roam buffer
    beside it showing that node, and selected."""
    await driver.open("sourdough-baking.org", "The starter (levain)")
    await driver.mx("org-roam-buffer-toggle")
    await driver.emacs.wait_text("Similar notes (", timeout=15)
    await driver.select(ROAM)


async def _remember(driver: Driver, text: str) -> str:
    """Type TEXT at ``C-c o M``'s prompt; return the line of *Messages* saying where it
    was remembered."""
    mark = await driver.mark()
    await driver.emacs.keys("C-c", "o", "M")
    await driver.emacs.wait_text("Remember:")
    await driver.emacs.type(text)
    await driver.emacs.keys("Enter")
    return await driver.message("Remembered in", since=mark, timeout=20)


@pytest.mark.timeout(180)
async def test_capture_keys_in_the_org_roam_buffer_act_on_the_note_it_shows(tmp_path, roam_dir, fake_ollama):
    note = roam_dir / "sourdough-baking.org"
    on_disk = note.read_bytes()
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await _org_roam_buffer_on_starter(driver)

        said = await _remember(driver, "Feed the starter twice before a bake")
        daily = roam_dir / re.search(r"Remembered in (\S+):\d+", said).group(1)
        captured = daily.read_text()
        assert ":SOURCE:" in captured and "id:612f2887-9442-410d-b965-d901189a423b" in captured, captured

        mark = await driver.mark()
        await emacs.keys("C-Space", "C-n", "C-n", "C-c", "o", "M")
        said = await driver.message("is not a note", since=mark)
        assert said.strip() == f"{ROAM} is not a note: select the text in its note (no region: type it)", said
        await emacs.wait_screen(lambda s: _echo_is(s, said.strip()), "the refusal whole on the last line")
        assert "Remember:" not in await emacs.screen()

        mark = await driver.mark()
        await emacs.keys("C-c", "o", "d")
        said = await driver.message("is not a note", since=mark)
        assert said.strip() == f"{ROAM} is not a note: C-c o d discards an answer in a conversation", said

        mark = await driver.mark()
        await emacs.keys("C-c", "o", "P")
        said = await driver.message("Tagged :private:", since=mark)
        assert "save sourdough-baking.org to take the heading out of the index" in said, said
        text = await driver.buffer_text("sourdough-baking.org")
        heading = next(line for line in text.split("\n") if line.startswith("* Starter maintenance"))
        assert heading.rstrip().endswith(":private:"), heading
        assert text.count(":private:") == 1, text
        errors = (await emacs.state())["errors"]
        assert len(errors) == 2 and all("is not a note" in e for e in errors), errors
        assert daily.read_text() == captured
    assert note.read_bytes() == on_disk


@pytest.mark.timeout(180)
async def test_c_c_o_p_in_the_org_roam_buffer_tags_the_node_shown_below_lines_not_saved(tmp_path, roam_dir, fake_ollama):
    # org-roam's record of where a node is holds until the note is saved: with a heading
    # typed above the node and not saved, C-c o P tagged that heading, the wrong one,
    # and said "Tagged :private:" of the node shown.
    note = roam_dir / "sourdough-baking.org"
    on_disk = note.read_bytes()
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await driver.open("sourdough-baking.org", "the starter, fermentation and the bake.")
        await emacs.keys("C-e", "Enter", "Enter")
        await emacs.type("* Typed and not saved: " + "a line long enough to move the node " * 3)
        await _org_roam_buffer_on_starter(driver)
        mark = await driver.mark()
        await emacs.keys("C-c", "o", "P")
        said = await driver.message("Tagged :private:", since=mark)
        assert "sourdough-baking.org" in said, said
        lines = (await driver.buffer_text("sourdough-baking.org")).split("\n")
        tagged = [line for line in lines if line.rstrip().endswith(":private:")]
        assert len(tagged) == 1 and tagged[0].startswith("* Starter maintenance"), tagged
    assert note.read_bytes() == on_disk


@pytest.mark.timeout(180)
async def test_typed_text_is_remembered_from_a_list_whose_note_was_killed(tmp_path, roam_dir, fake_ollama):
    # Typed text needs no note; C-c o M there refused it ("ask from a note") once the
    # typed text's source was taken from the list's note.
    similar = "*arcology-oracle similar*"
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await driver.open("sourdough-baking.org", "* Bulk fermentation")
        await emacs.keys("C-c", "o", "s")
        await emacs.wait_text("Bread Hydration", timeout=15)
        await driver.select(similar)
        await emacs.eval('(kill-buffer "sourdough-baking.org")')
        said = await _remember(driver, "Buy rye flour on Friday")
        daily = (roam_dir / re.search(r"Remembered in (\S+):\d+", said).group(1)).read_text()
        assert "Buy rye flour on Friday" in daily and ":SOURCE:" not in daily, daily
        assert not (await emacs.state())["errors"]


def _echo_is(screen: str, said: str) -> bool:
    """The screen's last lines read SAID, broken between words, none wrapped by Emacs."""
    lines = [line.rstrip() for line in screen.rstrip("\n").split("\n")]
    return any(
        " ".join(lines[-k:]) == said and not any(line.endswith("\\") for line in lines[-k:])
        for k in range(1, 4)
    )


@pytest.mark.timeout(180)
async def test_long_messages_break_between_words_at_80_columns(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await driver.open("sourdough-baking.org", "The starter (levain)")
        said = await _remember(driver, "Feed the starter twice before a bake")
        assert len(said) > 80, said
        await emacs.wait_screen(lambda s: _echo_is(s, said), f"the echo area to read {said!r}")

        driver.daemon.stop()
        mark = await driver.mark()
        await emacs.keys("C-c", "o", "l")
        said = await driver.message("not reachable", since=mark, timeout=20)
        assert len(said) > 80 and said.endswith("start it (arcology-oracle serve)"), said
        await emacs.wait_screen(lambda s: _echo_is(s, said), f"the echo area to read {said!r}")
