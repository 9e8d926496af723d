"""``C-c o f`` as a newcomer meets it: ``emacs -nw`` in tmux with the README's own
configuration (Emacs's own completion: no vertico or ivy), the real daemon and the fake
Ollama (as tests/elisp/test_walkthrough.py runs them).

The results were offered at a bare "Notes for rye flour: " prompt, listing nothing (Emacs's
own completion shows candidates on TAB only), and RET there with nothing typed signalled
"arcology-oracle: (user-error "Cannot find nil here: is 'arcology-oracle-roam-directory'
right?")" (completing-read returns "" then, whatever REQUIRE-MATCH says). The prompt says
how many were found, that RET visits the best and TAB lists them; RET visits the best.
"""

from __future__ import annotations

import re

import pytest

from tests.elisp.walkthrough_driver import Driver, readme_session


@pytest.mark.timeout(180)
async def test_ret_at_the_search_prompt_visits_the_best_result(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama) as driver:
        emacs = driver.emacs
        await emacs.keys("C-c", "o", "f")
        await emacs.wait_text("Search notes:")
        await emacs.type("sqlite covering index")
        await emacs.keys("Enter")
        screen = await emacs.wait_screen(lambda s: "Notes for sqlite covering index" in s, "the results' prompt")
        prompt = screen.rstrip("\n").split("\n")[-1].rstrip()
        assert re.fullmatch(r"Notes for sqlite covering index \(\d+ found, RET visits the best, TAB lists them\):",
                            prompt), prompt  # fmt: skip
        await emacs.keys("Enter")
        await emacs.wait(lambda: _selected(driver, "sqlite-indexing.org"), "the best result visited")
        assert "Covering indexes" in await driver.point_text()
        state = await emacs.state()
        assert not state["errors"] and "Cannot find" not in state["messages"], state


async def _selected(driver: Driver, name: str) -> bool:
    return await driver.selected_buffer() == name


@pytest.mark.timeout(180)
async def test_the_results_listed_by_tab_fit_an_80_column_terminal(tmp_path, roam_dir, fake_ollama):
    """TAB listed each result with a snippet cut at 70 characters after its outline path:
    on an 80-column terminal most lines of *Completions* were wider and Emacs wrapped them
    with a ``\\`` at the edge. Each annotation is cut to what the frame leaves it."""
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await emacs.keys("C-c", "o", "f")
        await emacs.wait_text("Search notes:")
        await emacs.type("starter feeding")
        await emacs.keys("Enter")
        await emacs.wait_text("Notes for starter feeding")
        await emacs.keys("Tab")
        screen = await emacs.wait_text("Starter maintenance › Feeding schedule")
        lines = screen.split("\n")
        listed = [line for line in lines if "›" in line or "…" in line]
        assert len(listed) >= 4, screen
        assert not any(line.rstrip().endswith("\\") for line in lines), screen
        assert any(line.startswith("Starter maintenance › Feeding schedule  ") and line.rstrip().endswith("…")
                   for line in lines), screen  # fmt: skip
        assert not (await emacs.state())["errors"]
