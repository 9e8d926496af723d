"""Notes in Japanese in Emacs: ``emacs -nw`` in tmux with the README's own configuration,
the real daemon and the fake Ollama (as tests/elisp/test_walkthrough.py runs them).

The link key of the suggestions puts a link at the end of the paragraph of the note that
writes of the target. In Japanese that paragraph is found by the target's words as
keyword search reads them (pairs of characters): before, no Japanese word was ever found
in a paragraph, and the link went to the note's first paragraph.
"""

from __future__ import annotations

import pytest

from tests.elisp.walkthrough_driver import LINKS, Driver, readme_session
from tests.elisp.walkthrough_steps import _entry_title

KITCHEN = "daidokoro.org"
MISO = "味噌汁の作り方"
FIRST = "今日は朝から雨が降っていたので、家で本を読んで過ごした。"
SECOND = "夕食には昆布と鰹節で出汁を取って、味噌汁を作った。"


def write_notes(roam) -> None:
    (roam / KITCHEN).write_text(
        ":PROPERTIES:\n:ID: 7a6f3e0c-1111-4d7e-9c1a-000000000001\n:END:\n#+title: 台所の記録\n\n"
        f"{FIRST} kitchen\n\n{SECOND} kitchen\n",
        encoding="utf-8",
    )
    (roam / "misoshiru.org").write_text(
        f":PROPERTIES:\n:ID: 7a6f3e0c-1111-4d7e-9c1a-000000000002\n:END:\n#+title: {MISO}\n\n"
        "昆布と鰹節で出汁を取ってから、火を止めて味噌を溶かし入れる。 kitchen\n",
        encoding="utf-8",
    )


@pytest.mark.timeout(180)
async def test_a_suggested_link_goes_into_the_paragraph_that_writes_of_its_note(tmp_path, roam_dir, fake_ollama):
    write_notes(roam_dir)
    async with readme_session(tmp_path, roam_dir, fake_ollama) as driver:
        emacs = driver.emacs
        await driver.open(KITCHEN)
        await emacs.keys("C-c", "o", "l")
        await emacs.wait_screen(lambda s: "Links to add to:" in s and "Looking for" not in s, "the suggestions")
        await driver.select(LINKS)
        await emacs.keys("M-<")
        for _ in range(12):  # to the suggestion of the miso soup note
            await emacs.keys("n")
            if _entry_title(await driver.point_text()) == MISO:
                break
        else:
            raise AssertionError(f"{MISO} is not suggested:\n{await driver.buffer_text(LINKS)}")
        await emacs.keys("i")
        await emacs.wait(lambda: _has_link(driver), "i to insert the link")
        text = await driver.buffer_text(KITCHEN)
        first, second = (p for p in text.split("\n\n") if FIRST in p or SECOND in p)
        assert "[[id:" not in first, text
        assert f"[[id:7a6f3e0c-1111-4d7e-9c1a-000000000002][{MISO}]]" in second, text
        state = await emacs.state()
        assert "Error" not in state["messages"], state["messages"]


async def _has_link(driver: Driver) -> bool:
    return "[[id:" in await driver.buffer_text(KITCHEN)
