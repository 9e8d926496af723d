"""The numbers of a list never go up down it, in ``emacs -nw`` (tmux) with the README's
own configuration, the real daemon and the fake Ollama.

A newcomer saw the similar notes listed 0.05, 0.04, 0.05, …: the daemon orders its
results by more than each pair's calibrated ``score`` (the words the candidates share,
the graph), and the lists showed that score. They show the daemon's ``relevance``, which
agrees with the order (answers/relevance.py, :func:`ordered`); the pair's own score is
on the number's help (``C-h .``). Checked in the similar-notes window (of a note and of a heading), the
link suggestions and the org-roam buffer's section.
"""

from __future__ import annotations

import re

import pytest

from tests.elisp.test_firstday_refusals_in_emacs import _started, _wait_similar
from tests.elisp.walkthrough_driver import LINKS, SIMILAR
from tests.emacs_batch import require_packages

NUMBER = re.compile(r"^\s*([01]\.\d\d)\s", re.M)


def _never_up(text: str) -> list[float]:
    """The numbers starting the lines of TEXT, asserted never to rise down it."""
    shown = [float(n) for n in NUMBER.findall(text)]
    assert len(shown) >= 3, text
    assert all(a >= b for a, b in zip(shown, shown[1:])), f"{shown} in:\n{text}"
    return shown


@pytest.mark.timeout(180)
async def test_the_numbers_shown_never_go_up_down_a_list(tmp_path, roam_dir, fake_ollama):
    require_packages()
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama, columns=100, lines=40)
    emacs = driver.emacs
    try:
        for search in (None, "* Bulk fermentation"):
            await driver.open("sourdough-baking.org", search)
            await emacs.keys("C-c", "o", "s")
            await _wait_similar(driver, "Bread Hydration", "the list")
            _never_up(await driver.buffer_text(SIMILAR))
            if search is None:  # this list has scores rising down it: C-h . on one tells it
                await driver.select(SIMILAR)
                await emacs.eval(
                    f"(with-selected-window (get-buffer-window \"{SIMILAR}\")"
                    " (goto-char (point-min))"
                    " (while (not (string-match-p \"pair alone\" (or (get-text-property (point) 'help-echo) \"\")))"
                    "  (forward-char)))"
                )
                mark = await driver.mark()
                await emacs.keys("C-h", ".")
                said = await driver.message("the score of this pair alone", since=mark)
                assert re.search(r"Relevance 0\.\d{3} in this list; the score of this pair alone 0\.\d{3}", said), said
            await driver.select("sourdough-baking.org")

        await emacs.keys("M-<")
        await emacs.keys("C-c", "o", "l")
        await emacs.wait(lambda: _listed(driver, LINKS, "Links to add to"), "the suggestions")
        _never_up(await driver.buffer_text(LINKS))

        await driver.select("sourdough-baking.org")
        await driver.mx("org-roam-buffer-toggle")
        await emacs.wait(lambda: _listed(driver, "*org-roam*", "Similar notes ("), "the org-roam section's list")
        section = (await driver.buffer_text("*org-roam*")).split("Similar notes (", 1)[1]
        _never_up(section)
        assert not (await emacs.state())["errors"]
    finally:
        await emacs.stop()
        daemon.stop()


async def _listed(driver, buffer: str, after: str) -> bool:
    """Whether BUFFER lists three numbered entries after the text AFTER."""
    text = await driver.buffer_text(buffer)
    return after in text and len(NUMBER.findall(text.split(after, 1)[1])) >= 3
