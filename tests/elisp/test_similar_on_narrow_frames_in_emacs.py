"""Where ``C-c o s`` puts the similar notes, by the terminal's width: ``emacs -nw`` in tmux
with the README's own configuration, the real daemon and the fake Ollama.

On a 60-column terminal the side window on the right was 18 columns (30% of the frame):
every title was cut to about ten characters ("Bread Hydr"), the marks filled over lines
of their own. A frame narrower than ``arcology-oracle-similar-min-frame-width`` (80) puts
the list below the note, the frame's whole width, where the titles are read whole. An
80- or 160-column terminal keeps the side window on the right, 30% wide, as before.
"""

from __future__ import annotations

import pytest

from tests.elisp.walkthrough_driver import SIMILAR, readme_session

NOTE = "sourdough-baking.org"


@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    ("size", "side", "width"),
    [((60, 24), "bottom", 60), ((80, 24), "right", 24), ((160, 45), "right", 48)],
    ids=["60x24", "80x24", "160x45"],
)
async def test_the_similar_notes_are_readable_on_a_narrow_frame(tmp_path, roam_dir, fake_ollama, size, side, width):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=size) as driver:
        emacs = driver.emacs
        await driver.open(NOTE, "* Bulk fermentation")
        await emacs.keys("C-c", "o", "s")
        await emacs.wait(lambda: driver._count_in(SIMILAR, "Bread Hydration", 1), "the similar notes", timeout=20)
        screen = await emacs.wait_screen(lambda s: "Similar to:" in s and "Looking for" not in s, "the list")
        similar = await driver.window_of(SIMILAR)
        assert (similar["side"], similar["width"]) == (side, width), await driver.windows()
        note = await driver.window_of(NOTE)
        assert note["width"] == (size[0] if side == "bottom" else size[0] - width), await driver.windows()
        assert note["selected"], await driver.windows()
        if side == "bottom":
            # Below the note, whole: the header on one line, a title and its marks uncut.
            lines = [line.rstrip() for line in screen.split("\n")]
            header = lines.index("Similar to: Bulk fermentation")
            assert any(line.endswith("Bread Hydration linked both ways") for line in lines[header:]), screen
            assert "* Bulk fermentation" in lines[:header], screen  # the note above
        assert not (await emacs.state())["errors"]
