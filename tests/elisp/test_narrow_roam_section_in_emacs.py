"""The org-roam buffer in the side window the README suggests for it (``window-width``
0.3) on a 64-column terminal: 19 columns. ``emacs -nw`` in tmux with the README's own
configuration, the real daemon and the fake Ollama.

The similar notes' lines were made at least 20 columns wide whatever the window, and an
entry's marks always went beside its title: Emacs cut the lines at the edge with ``$``,
"linked both ways" first ("0.12 Sourdough… l$"), the snippets and the section's heading
("Similar notes (10$") too. Every line now
fits the window: the marks go on a line of their own when they do not fit beside the
title, as in the similar-notes window, the outline path is cut to what is left, and the
heading goes on two lines.
"""

from __future__ import annotations

import os
import re
import signal

import pytest

from tests.elisp.test_firstday_refusals_in_emacs import _started
from tests.tmux_emacs import README, _section


def _roam_side_window_snippet() -> str:
    """The README's block putting org-roam's buffer in a side window."""
    text = _section(README.read_text(), 2, "Similar notes beside the heading you are reading")
    block = next(b for b in re.findall(r"#\+begin_src emacs-lisp\n(.*?)#\+end_src", text, re.S) if "org-roam" in b)
    assert "window-width . 0.3" in block, block
    return block


def _right(screen: str) -> list[str]:
    """The org-roam window's part of each line, after the divider."""
    return [line.split("|", 1)[1].rstrip() for line in screen.split("\n") if "|" in line]


@pytest.mark.timeout(180)
async def test_the_org_roam_section_fits_a_19_column_side_window(tmp_path, roam_dir, fake_ollama):
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama, 64, 30)
    emacs = driver.emacs
    try:
        await emacs.eval(f"(progn {_roam_side_window_snippet()} t)")
        await driver.open("bread-hydration.org")
        await driver.mx("org-roam-buffer-toggle")
        screen = await emacs.wait_screen(
            lambda s: any(part.startswith("0.") for part in _right(s)), "the similar notes in the org-roam window",
            timeout=15,
        )
        width = (await driver.window_of("*org-roam*"))["width"]
        assert width < 20, await driver.windows()
        right = _right(screen)
        section = right[next(i for i, part in enumerate(right) if part.startswith("Similar notes")) :]
        assert not any(part.endswith("$") for part in section), screen
        assert "  linked both ways" in section, screen
        assert not (await emacs.state())["errors"]
    finally:
        await emacs.stop()
        daemon.stop()


@pytest.mark.timeout(180)
async def test_the_org_roam_sections_placeholder_fits_a_19_column_side_window(tmp_path, roam_dir, fake_ollama):
    """While the daemon does not answer (asleep: SIGSTOP), the section's "Looking for
    similar notes…" was one line whatever the window: cut at its edge with ``$``. It is
    filled to the window, as the section's messages are."""
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama, 64, 30)
    emacs = driver.emacs
    try:
        await emacs.eval(f"(progn {_roam_side_window_snippet()} t)")
        await driver.open("bread-hydration.org")
        os.kill(daemon.pid, signal.SIGSTOP)
        try:
            await driver.mx("org-roam-buffer-toggle")
            screen = await emacs.wait_screen(lambda s: "|Similar notes" in s, "the section, waiting", timeout=15)
            right = _right(screen)
            section = right[next(i for i, part in enumerate(right) if part.startswith("Similar notes")) :]
            assert "Looking" in " ".join(section), screen
            assert not any(part.endswith("$") for part in section), screen
        finally:
            os.kill(daemon.pid, signal.SIGCONT)
        assert not (await emacs.state())["errors"]
    finally:
        await emacs.stop()
        daemon.stop()
