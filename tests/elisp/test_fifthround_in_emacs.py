"""What a newcomer met on a first day in Emacs, fifth round: ``emacs -nw`` in tmux with
the README's own configuration, the real daemon and the fake Ollama (as
tests/elisp/test_walkthrough.py runs them).

- In the org-roam buffer ``C-c o P`` said "Making a note private needs an Org buffer":
  it tags the node the buffer shows, in its note. ``C-c o M`` typed there kept no
  ``:SOURCE:`` of the note read, and with a region it sent the org-roam buffer's own
  text (a backlink's preview, perhaps of a private heading): the typed text's source is
  the note's heading, and a region of the list is refused, saying where to select.
  ``C-c o d`` there, where no answer is, says so.
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


@pytest.mark.timeout(180)
async def test_capture_keys_in_the_org_roam_buffer_act_on_the_note_it_shows(tmp_path, roam_dir, fake_ollama):
    note = roam_dir / "sourdough-baking.org"
    on_disk = note.read_bytes()
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await _org_roam_buffer_on_starter(driver)

        mark = await driver.mark()
        await emacs.keys("C-c", "o", "M")
        await emacs.wait_text("Remember:")
        await emacs.type("Feed the starter twice before a bake")
        await emacs.keys("Enter")
        said = await driver.message("Remembered in", since=mark, timeout=20)
        daily = roam_dir / re.search(r"Remembered in (\S+):\d+", said).group(1)
        captured = daily.read_text()
        assert ":SOURCE:" in captured and "id:612f2887-9442-410d-b965-d901189a423b" in captured, captured

        mark = await driver.mark()
        await emacs.keys("C-Space", "C-n", "C-n", "C-c", "o", "M")
        said = await driver.message("is not a note", since=mark)
        assert f"{ROAM} is not a note: select the text in its note" in said, said
        assert "Remember:" not in await emacs.screen()

        mark = await driver.mark()
        await emacs.keys("C-c", "o", "d")
        said = await driver.message("is not a note", since=mark)
        assert "C-c o d discards the answer at point in a conversation: nothing was discarded" in said, said

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
