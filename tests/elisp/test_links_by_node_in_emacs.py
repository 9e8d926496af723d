"""Link suggestions leave out the links the note at point has, as the daemon does: by the
org-roam node, not the file. ``emacs -nw`` in tmux with the README's own configuration,
the real daemon and the fake Ollama (as tests/elisp/test_firstday_refusals_in_emacs.py
runs them).

``C-c o l`` on the heading node "Starter maintenance" of sourdough-baking.org: the
daemon suggested "Baker's percentages" and "Bread Hydration" (the node links to
neither), and Emacs hid both because other parts of the file (its top paragraph, the
heading "Bulk fermentation") link to them. The list now leaves out only a link inside
the node (its heading and the headings under it; the whole file for the file's node).
"""

from __future__ import annotations

import re

import pytest

from tests.elisp.test_firstday_lists_in_emacs import _links_shown
from tests.elisp.test_firstday_refusals_in_emacs import _started, _wait_similar
from tests.elisp.walkthrough_driver import LINKS, SIMILAR, Driver

ENTRY = re.compile(r"^\d\.\d\d  (.*?)(?: weak)?$", re.M)


async def _suggestions(driver: Driver) -> str:
    """The titles suggested, one a line (an entry's first line: its relevance, title, marks)."""
    await driver.emacs.wait(lambda: _links_shown(driver), "the suggestions, shown and selected", timeout=15)
    text = await driver.buffer_text(LINKS)
    return "\n".join([text.split("\n")[0], *(m.group(1) for m in ENTRY.finditer(text))])


@pytest.mark.timeout(180)
async def test_suggestions_leave_out_the_links_of_the_node_not_of_the_file(tmp_path, roam_dir, fake_ollama):
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama, 120, 40)
    emacs = driver.emacs
    try:
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        await emacs.keys("C-c", "o", "l")
        listed = await _suggestions(driver)
        assert "Links to add to: Starter maintenance" in listed, listed
        assert "Baker's percentages" in listed and "Bread Hydration" in listed, listed

        # i writes the link into the node: g then leaves it out, the other one stays.
        await emacs.keys("M-<", "n")
        await emacs.wait(lambda: _point_on(driver, "Baker's percentages"), "point on Baker's percentages")
        await emacs.keys("i")
        await driver.message("Inserted a link to \"Baker's percentages\"")
        await driver.select(LINKS)
        await emacs.keys("g")
        listed = await _suggestions(driver)
        assert "Baker's percentages" not in listed and "Bread Hydration" in listed, listed

        # The file's node: its top paragraph links Bread Hydration (the daemon leaves it out).
        await driver.select("sourdough-baking.org")
        await emacs.keys("M-<")
        await emacs.keys("C-c", "o", "l")
        await emacs.wait_text("Links to add to: Sourdough Baking")
        listed = await _suggestions(driver)
        assert "Bread Hydration" not in listed and "Baker's percentages" not in listed, listed
        assert not (await emacs.state())["errors"]
    finally:
        await emacs.stop()
        daemon.stop()


async def _point_on(driver: Driver, text: str) -> bool:
    return text in await driver.point_text()


def _entry_line(listed: str, title: str) -> str:
    """The first line of TITLE's entry in a list read as one line per entry."""
    return next((line for line in listed.split("\n") if title in line and re.match(r"^\d\.\d\d ", line)), "")


@pytest.mark.timeout(180)
async def test_similar_notes_mark_linked_by_the_node_as_the_suggestions_offer(tmp_path, roam_dir, fake_ollama):
    """The similar notes beside "Starter maintenance" marked "Baker's percentages" and
    "Bread Hydration" ``linked`` (the file links to them elsewhere), while ``C-c o l`` on
    the same heading offers both, and the daemon says neither is linked: so did the
    org-roam buffer's section for that node. Both read the node's links now; the file's
    node (point on "Bulk fermentation", which links Baker's percentages) still marks it."""
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama, 160, 45)
    emacs = driver.emacs
    try:
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        await emacs.keys("C-c", "o", "s")
        await _wait_similar(driver, "Baker's percentages", "the similar notes of Starter maintenance")
        listed = await driver.buffer_text(SIMILAR)
        assert "Similar to: Starter maintenance" in listed, listed
        line = _entry_line(listed, "Baker's percentages")
        assert line and "linked" not in line, listed

        await driver.mx("org-roam-buffer-toggle")
        await emacs.wait(lambda: _section_has(driver, "Baker's percentages"), "the org-roam section", timeout=15)
        section = (await driver.buffer_text("*org-roam*")).split("Similar notes (", 1)[1]
        line = _entry_line(section, "Baker's percentages")
        assert line and "linked" not in line, section
        await driver.mx("org-roam-buffer-toggle")
        await emacs.wait(lambda: driver._not_shown("*org-roam*"), "the org-roam buffer to go")

        await driver.select("sourdough-baking.org")
        await driver.goto("* Bulk fermentation")
        await emacs.wait(lambda: _similar_to(driver, "Bulk fermentation"), "the similar notes of Bulk fermentation")
        listed = await driver.buffer_text(SIMILAR)
        assert "linked" in _entry_line(listed, "Baker's percentages"), listed
        assert not (await emacs.state())["errors"]
    finally:
        await emacs.stop()
        daemon.stop()


async def _section_has(driver: Driver, title: str) -> bool:
    text = await driver.buffer_text("*org-roam*")
    return "Similar notes (" in text and title in text.split("Similar notes (", 1)[1]


async def _similar_to(driver: Driver, heading: str) -> bool:
    text = await driver.buffer_text(SIMILAR)
    return f"Similar to: {heading}" in text and "Asking" not in text and "Looking" not in text and "\n0." in text
