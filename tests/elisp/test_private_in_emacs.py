"""A private part of a note in Emacs: ``emacs -nw`` in tmux with the README's own
configuration, the real daemon and the fake Ollama (as tests/elisp/test_walkthrough.py
runs them).

The heading at point is under a heading tagged ``:private:``. Cut out of its buffer, its
text no longer says that it is private, so Emacs sends none of it: the similar notes
window says so, and a conversation under it is refused. The daemon and the fake Ollama
receive none of its words, before the file is saved and after.
"""

from __future__ import annotations

import json

import pytest

from tests.elisp.walkthrough_driver import SIMILAR, Driver, readme_session

NOTE = "journal.org"
TEXT = (
    ":PROPERTIES:\n:ID: 16000000-0000-4000-8000-000000000001\n:END:\n#+title: Journal\n\n"
    "* Therapy :private:\n** Session notes\nThe emacsprivateiguana dream came up again.\n"
    "** Questions :conversation:\n*** Me\nWhat does the emacsprivateokapi dream mean?\n"
    "* Gardening\nTomatoes need emacsvisiblesun and water.\n"
)


def said(fake_ollama) -> str:
    return json.dumps(fake_ollama.state.chats) + json.dumps(fake_ollama.state.embedded_texts)


@pytest.mark.timeout(180)
async def test_nothing_of_a_private_part_leaves_emacs(tmp_path, roam_dir, fake_ollama):
    (roam_dir / NOTE).write_text(TEXT)
    async with readme_session(tmp_path, roam_dir, fake_ollama) as driver:
        emacs = driver.emacs
        daemon = driver.daemon
        await driver.open(NOTE, "The emacsprivateiguana")
        await emacs.keys("End")
        await emacs.type(" Unsaved words.")  # an unsaved buffer is asked about by its text
        fake_ollama.state.clear_records()
        await emacs.keys("C-c", "o", "s")
        screen = await emacs.wait_screen(lambda s: "This heading is private" in s, "the similar window's message")
        assert "emacsprivateiguana" in screen  # the note is on screen, beside the window

        await driver.goto("What does the emacsprivateokapi")
        await emacs.keys("C-c", "o", "c")
        await driver.message("private part of your notes")
        assert "Oracle" not in await driver.buffer_text(NOTE)

        await emacs.keys("C-x", "C-s")  # saved: the daemon reads the place too
        await emacs.wait(lambda: _saved(roam_dir), "the note saved")
        await driver.goto("Gardening")
        await emacs.keys("C-c", "o", "s")
        await emacs.wait(lambda: _lists_notes(driver), "similar notes for a heading that is not private")
        assert "emacsprivateiguana" not in said(fake_ollama) and "emacsprivateokapi" not in said(fake_ollama)
        state = await emacs.state()
        assert "Error" not in state["messages"], state["messages"]


async def _saved(roam_dir) -> bool:
    return "Unsaved words." in (roam_dir / NOTE).read_text()


async def _lists_notes(driver: Driver) -> bool:
    text = await driver.buffer_text(SIMILAR)
    return "private" not in text and "Looking for" not in text and text.strip() != ""
