"""The similar notes and the link suggestions on a first day in Emacs, third round:
``emacs -nw`` in tmux with the README's own configuration, the real daemon and the fake
Ollama (as tests/elisp/test_firstday_refusals_in_emacs.py runs them).

- ``+`` in either list with nothing below the relevance cut did nothing and said
  nothing. It says so.
"""

from __future__ import annotations

import pytest

from tests.elisp.test_firstday_refusals_in_emacs import _started, _wait_similar
from tests.elisp.walkthrough_driver import LINKS, SIMILAR, Driver

NOTHING_BELOW = "Nothing below the relevance cut"


async def _plus_says(driver: Driver, buffer: str) -> None:
    """In BUFFER's window, ``+`` says in the echo area that nothing is below the cut,
    and the list is unchanged."""
    await driver.select(buffer)
    before = await driver.buffer_text(buffer)
    await driver.emacs.keys("+")
    await driver.emacs.wait_screen(lambda s: NOTHING_BELOW in s.rstrip("\n").split("\n")[-1], "the echo area to say so")
    assert await driver.buffer_text(buffer) == before


@pytest.mark.timeout(180)
async def test_plus_with_nothing_below_the_cut_says_so(tmp_path, roam_dir, fake_ollama):
    # ARCOLOGY_ORACLE_MIN_SCORE=0 (tests/conftest.py): no cut, nothing below it.
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama)
    emacs = driver.emacs
    try:
        await driver.open("sourdough-baking.org", "* Bulk fermentation")
        await emacs.keys("C-c", "o", "s")
        await _wait_similar(driver, "Bread Hydration", "the list")
        assert "below relevance" not in await driver.buffer_text(SIMILAR)
        await _plus_says(driver, SIMILAR)

        await driver.select("sourdough-baking.org")
        await emacs.keys("C-c", "o", "l")
        await emacs.wait(lambda: driver._text_lacks(LINKS, "Looking"), "the suggestions")
        await emacs.wait_text("Links to add to")
        assert "below relevance" not in await driver.buffer_text(LINKS)
        await _plus_says(driver, LINKS)
        assert not (await emacs.state())["errors"]
    finally:
        await emacs.stop()
        daemon.stop()
