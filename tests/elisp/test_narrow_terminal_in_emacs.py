"""The similar notes on a 60-column terminal, ``emacs -nw`` in tmux with the README's own
configuration and the real daemon: the side window is 18 columns wide (kept beside the
note, as ``arcology-oracle-similar-min-frame-width`` nil keeps it; by default a frame this
narrow has the list below the note: tests/elisp/test_similar_on_narrow_frames_in_emacs.py).

A note linked both ways got its marks on a line of their own, cut to the window:
"linked both wa…", which no longer says which way. The marks are filled over as many
lines as they need.
"""

from __future__ import annotations

import pytest

from tests.elisp.walkthrough_driver import SIMILAR, readme_session


def list_column(screen: str) -> list[str]:
    """The side window's lines: what is right of the window divider."""
    return [line.rsplit("|", 1)[1].rstrip() for line in screen.split("\n") if "|" in line]


@pytest.mark.timeout(180)
async def test_marks_are_whole_in_a_narrow_similar_window(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(60, 24)) as driver:
        emacs = driver.emacs
        await emacs.eval("(setq arcology-oracle-similar-min-frame-width nil)")
        await driver.open("sourdough-baking.org", "* Bulk fermentation")
        await emacs.keys("C-c", "o", "s")
        await emacs.wait(lambda: driver._count_in(SIMILAR, "Bread Hydr", 1), "the similar notes", timeout=20)
        screen = await emacs.wait_screen(lambda s: "Bread Hydr" in s, "the list on screen")
        column = list_column(screen)
        at = next(i for i, line in enumerate(column) if line.startswith("0.") and "Bread Hydr" in line)
        assert column[at + 1 : at + 3] == ["  linked both", "  ways"], column
        assert not any("wa…" in line for line in column), column
        assert not (await emacs.state())["errors"]
