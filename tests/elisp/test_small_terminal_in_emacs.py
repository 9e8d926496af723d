"""An 80x24 terminal, the size a terminal opens at: ``emacs -nw`` in tmux with the README's
own configuration, the real daemon and the fake Ollama (as tests/elisp/test_walkthrough.py
runs them).

``C-c o s``: the side window is 24 columns there. Its lines were made 40 columns wide
whatever the window, so Emacs cut each at the edge with ``$`` and the marks (``linked
both ways``) were never on screen. Now every line fits, and the marks have a line of their
own when they do not fit beside the title. The "Similar to:" line was cut the same way; the
note's title now goes on as many lines as it needs.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from tests.elisp.walkthrough_driver import SIMILAR, Driver, readme_emacs, readme_session
from tests.emacs_batch import require_packages


@asynccontextmanager
async def emacs_on(note: str, size: tuple[int, int], tmp_path, roam_dir, fake_ollama) -> AsyncIterator[tuple]:
    """``emacs -nw`` of ``size`` (columns, lines) with the README's configuration and the
    real daemon, visiting ``note``: ``(emacs, driver)``; both stopped after."""
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=size) as driver:
        emacs = driver.emacs
        await driver.open(note)
        yield emacs, driver


async def ask(emacs, driver: Driver, question: str) -> None:
    """``C-c o a`` with ``question``, until the answer and its sources are in."""
    await emacs.keys("C-c", "o", "a")
    await emacs.wait_text("Ask about")
    await emacs.type(question)
    await emacs.keys("Enter")
    await emacs.wait(lambda: _answered(driver), "the answer and its sources", timeout=20)


@pytest.mark.timeout(180)
async def test_the_similar_notes_fit_an_80_column_terminal(tmp_path, roam_dir, fake_ollama):
    async with emacs_on("sourdough-baking.org", (80, 24), tmp_path, roam_dir, fake_ollama) as (emacs, driver):
        await emacs.keys("C-c", "o", "s")
        screen = await emacs.wait_screen(
            lambda s: "|Similar to:" in s and "|0." in s and "Looking for" not in s, "the similar notes", timeout=15
        )
        window = await driver.window_of(SIMILAR)
        assert window is not None and window["width"] <= 30, await driver.windows()
        # The side window is the right part of each line, after the divider.
        right = [line.split("|", 1)[1] for line in screen.split("\n") if "|" in line]
        assert "  linked both ways" in [part.rstrip() for part in right], screen
        assert not any(part.rstrip().endswith("$") for part in right), screen
        # The header too: the note's title whole, on a second line where it does not fit.
        assert " ".join(part.strip() for part in right[:2]) == "Similar to: Sourdough Baking", screen
        state = await emacs.state()
        assert "Error" not in state["messages"], state["messages"]


@pytest.mark.timeout(180)
async def test_the_similar_notes_header_fits_a_60_column_terminal(tmp_path, roam_dir, fake_ollama):
    """On a 60x20 terminal the side window is 18 columns: the "Similar to:" line and the
    messages were filled to 20 columns whatever the window, so Emacs cut "Similar to:
    Sourdough" and "Similar to: 日本語の" at the edge with ``$`` ("語の" never seen). (Kept
    beside the note with ``arcology-oracle-similar-min-frame-width`` nil: by default a
    frame this narrow has the list below the note.)"""
    async with emacs_on("sourdough-baking.org", (60, 20), tmp_path, roam_dir, fake_ollama) as (emacs, driver):
        await emacs.eval("(setq arcology-oracle-similar-min-frame-width nil)")
        await emacs.keys("C-c", "o", "s")
        for note, title in (("sourdough-baking.org", "Sourdough Baking"), ("日本語ノート.org", "日本語の勉強")):
            if note != "sourdough-baking.org":
                await driver.open(note)
            screen = await emacs.wait_screen(
                lambda s, title=title: "|0." in s and "Looking for" not in s and title[-2:] in "".join(_right(s)[:3]),
                f"the similar notes of {note}",
                timeout=15,
            )
            assert (await driver.window_of(SIMILAR))["width"] < 22, await driver.windows()
            right = _right(screen)
            assert not any(part.endswith("$") for part in right), screen
            header = right[: right.index("")]
            assert "".join(header).replace(" ", "") == f"Similarto:{title}".replace(" ", ""), screen
        state = await emacs.state()
        assert "Error" not in state["messages"], state["messages"]


@pytest.mark.timeout(180)
async def test_the_line_of_notes_below_the_cut_fits_the_side_window(tmp_path, roam_dir, fake_ollama, monkeypatch):
    """With the daemon's relevance cut (its default: the suite's is none), the line
    saying how many notes are below it and which key shows them was one line whatever
    the window: on a 100-column terminal Emacs cut "+ to show" at the side window's edge."""
    monkeypatch.delenv("ARCOLOGY_ORACLE_MIN_SCORE")
    async with emacs_on("sourdough-baking.org", (100, 30), tmp_path, roam_dir, fake_ollama) as (emacs, driver):
        await emacs.keys("C-c", "o", "s")
        screen = await emacs.wait_screen(
            lambda s: "below relevance" in s and "Looking for" not in s, "the line of notes below the cut", timeout=15
        )
        lines = screen.split("\n")
        divider = next(line.index("|Similar to:") for line in lines if "|Similar to:" in line)  # the note has tables
        right = [line[divider + 1 :].rstrip() for line in lines if line[divider : divider + 1] == "|"]
        assert not any(part.endswith("$") for part in right), screen
        at = next(i for i, part in enumerate(right) if "below relevance" in part)
        assert "+ to show —" in " ".join(part.strip() for part in right[at : at + 3]), screen


def _right(screen: str) -> list[str]:
    """The side window's part of each line, after the divider."""
    return [line.split("|", 1)[1].rstrip() for line in screen.split("\n") if "|" in line]


@pytest.mark.timeout(180)
async def test_the_similar_notes_fit_their_window_again_when_it_is_resized(tmp_path, roam_dir, fake_ollama):
    """``C-x {`` in the similar-notes window (or a terminal made smaller) left its lines
    as wide as the window was: Emacs cut them at the new edge with ``$``, the marks first;
    ``C-x }`` left titles cut with ``…`` in a window wide enough for them. The list is
    laid out again for the window's new width, point kept on its entry."""
    async with emacs_on("bread-hydration.org", (160, 45), tmp_path, roam_dir, fake_ollama) as (emacs, driver):
        await emacs.keys("C-c", "o", "s")
        await emacs.wait_screen(
            lambda s: "|Similar to:" in s and "|0." in s and "Looking for" not in s, "the similar notes", timeout=15
        )
        await driver.select(SIMILAR)
        await emacs.keys("n")  # from the first entry, where the list opens
        await emacs.wait(lambda: _point_on(driver, "Sourdough Baking"), "point on the second entry")
        wide = (await driver.window_of(SIMILAR))["width"]
        await emacs.keys("C-u", "2", "0", "C-x", "{")
        await emacs.wait(lambda: _width_below(driver, wide - 10), "the window to narrow")
        screen = await emacs.wait_screen(
            lambda s: not any(part.endswith("$") for part in _right(s)[1:]),
            "every line of the narrowed list to fit, no $ at the edge",
        )
        assert "linked both ways" in screen, screen
        await emacs.wait(lambda: _point_on(driver, "Sourdough Baking"), "point still on its entry")
        await emacs.keys("C-u", "4", "0", "C-x", "}")
        await emacs.wait(lambda: _width_below(driver, 10_000, above=wide + 10), "the window to widen")
        await emacs.wait_screen(
            lambda s: "Sourdough Baking linked both ways" in s
            and not any("…" in part for part in _right(s) if part.startswith("0.")),
            "the titles whole again in the wider window",
        )
        state = await emacs.state()
        assert "Error" not in state["messages"], state["messages"]


async def _point_on(driver: Driver, text: str) -> bool:
    return text in await driver.point_text()


async def _width_below(driver: Driver, width: int, above: int = 0) -> bool:
    window = await driver.window_of(SIMILAR)
    return window is not None and above < window["width"] < width


@pytest.mark.timeout(180)
async def test_the_org_roam_section_fits_its_window_again_when_it_is_resized(tmp_path, roam_dir, fake_ollama):
    """``C-x {`` in the org-roam window left the similar notes' lines as wide as the
    window had been: Emacs cut them with ``$``, the marks (``linked both ways``) first.
    The org-roam buffer is rendered again for the window's new width."""
    async with emacs_on("bread-hydration.org", (160, 45), tmp_path, roam_dir, fake_ollama) as (emacs, driver):
        await driver.mx("org-roam-buffer-toggle")
        await emacs.wait_screen(lambda s: "Similar notes (" in s, "the org-roam section's list", timeout=15)
        await driver.select("*org-roam*")
        wide = (await driver.window_of("*org-roam*"))["width"]
        await emacs.keys("C-u", "3", "0", "C-x", "{")
        await emacs.wait(lambda: _roam_width_below(driver, wide - 20), "the window to narrow")
        # The snippets are cut to the window, the titles before the marks; the outline
        # path after the marks is left to Emacs's edge.
        screen = await emacs.wait_screen(
            lambda s: any(part.startswith("0.") for part in _section_lines(s))
            and not any(part.startswith("  ") and part.endswith("$") for part in _section_lines(s)),
            "the section's snippets to fit its narrowed window, no $ at the edge",
        )
        assert any("linked both ways" in part for part in _section_lines(screen)), screen


@pytest.mark.timeout(180)
async def test_point_stays_on_its_entry_of_the_org_roam_section_when_the_terminal_narrows(
    tmp_path, roam_dir, fake_ollama
):
    """The org-roam buffer, laid out again for a narrower window, kept point at the same
    character: the entries' lines shorter, point landed on an entry further down, and RET
    visited another note than the one the cursor had been on. Point stays on its entry.
    With the section's answer older than its minute (steps slowed by a loaded machine),
    the layout asked the daemon again and showed "Looking for similar notes…" instead:
    point lost its entry. A new layout keeps the entries shown, however old."""
    async with emacs_on("sourdough-baking.org", (80, 24), tmp_path, roam_dir, fake_ollama) as (emacs, driver):
        await driver.goto("* Starter maintenance")
        await driver.mx("org-roam-buffer-toggle")
        await emacs.wait(lambda: driver._count_in("*org-roam*", "Creme brulee weak", 1), "the section", timeout=15)
        await driver.select("*org-roam*")
        await emacs.keys("C-s")
        await emacs.type("Creme brulee")
        await emacs.keys("Enter", "C-a")
        await emacs.wait(lambda: _point_on(driver, "Creme brulee"), "point on the entry of Creme brulee")
        # The section's answer made an hour old, as a loaded machine can make the steps
        # above outlast its minute: laid out again, it is kept, not asked for again.
        await emacs.eval("(maphash (lambda (_id entry) (setcar entry (- (car entry) 3600)))"
                         " arcology-oracle--section-cache)")
        await emacs.tmux("resize-window", "-t", "walk", "-x", "40", "-y", "24")
        await emacs.wait(lambda: _roam_width_below(driver, 41), "the window to narrow")
        await emacs.wait(lambda: _section_laid_out_for_its_window(driver), "the section laid out again")
        assert "Creme brulee" in await driver.point_text(), await driver.windows()
        await emacs.keys("Enter")
        await emacs.wait(lambda: _selected(driver, "creme-brulee.org"), "RET to visit the note point was on")
        assert not (await emacs.state())["errors"]


async def _section_laid_out_for_its_window(driver: Driver) -> bool:
    return await driver.emacs.eval(
        '(with-current-buffer "*org-roam*" (eql arcology-oracle--section-window-width'
        ' (window-width (get-buffer-window "*org-roam*"))))'
    ) == "t"


async def _selected(driver: Driver, name: str) -> bool:
    return await driver.selected_buffer() == name


def _section_lines(screen: str) -> list[str]:
    """The lines of the similar notes in the org-roam window (the right one)."""
    right = _right(screen)
    start = next((i for i, part in enumerate(right) if part.startswith("Similar notes (")), len(right))
    return [part for part in right[start + 1 :] if part]


async def _roam_width_below(driver: Driver, width: int) -> bool:
    window = await driver.window_of("*org-roam*")
    return window is not None and window["width"] < width


@pytest.mark.timeout(180)
async def test_an_answer_is_seen_in_an_80x24_terminal(tmp_path, roam_dir, fake_ollama):
    """``C-c o a`` on an 80x24 terminal: the answers window is 7 lines, and the sources
    added at the end of the answer scrolled it out of sight (Emacs recentred on the end:
    '** Sources', '- [1] ...' and blank lines, the question and the answer above the
    window). The window stays on the answer; its sources are below it."""
    async with emacs_on("sourdough-baking.org", (80, 24), tmp_path, roam_dir, fake_ollama) as (emacs, driver):
        await ask(emacs, driver, "how do I feed it?")
        screen = await emacs.wait_screen(lambda s: "Based on your notes" in s, "the answer on screen")
        assert "* how do I feed it?" in screen, screen


async def _answered(driver: Driver) -> bool:
    return "** Sources\n- [1]" in await driver.buffer_text("*arcology-oracle answers*")


@pytest.mark.timeout(180)
async def test_an_answer_is_read_whole_in_an_80x24_terminal(tmp_path, roam_dir, fake_ollama):
    """The answers buffer wraps its lines: it was Org's, truncated, so an answer's
    paragraph (one line, as a model writes it: hundreds of columns) was cut at the window's
    edge with ``$``, and the rest could not be read without scrolling sideways."""
    async with emacs_on("sourdough-baking.org", (80, 24), tmp_path, roam_dir, fake_ollama) as (emacs, driver):
        await ask(emacs, driver, "how do I feed it?")
        text = await driver.buffer_text("*arcology-oracle answers*")
        answer = next(line for line in text.split("\n") if line.startswith("Based on your notes"))
        assert len(answer) > 80, answer  # wider than the window
        await driver.select("*arcology-oracle answers*")
        await emacs.keys("M-<")
        last = answer.split()[-1]
        screen = await emacs.wait_screen(lambda s: "Based on your notes" in s, "the answer's start on screen")
        assert last in screen and not any(line.endswith("$") for line in screen.split("\n")[-9:]), screen


@pytest.mark.timeout(180)
async def test_a_first_question_stopped_while_the_daemon_is_silent_is_never_asked(tmp_path, roam_dir, fake_ollama):
    """The computer the daemon runs on is asleep (here: the daemon stopped by SIGSTOP).
    The session's first question, asked from ``*scratch*``, waits on Emacs asking the
    daemon where the notes are; ``C-c o k`` then said "No answer is coming", and the
    answer came once the daemon woke. Now it stops it: "[Stopped]" under the question, and
    when the daemon wakes and answers the look-up, nothing is asked of the model."""
    async with readme_emacs_at_80x24(tmp_path, roam_dir, fake_ollama) as (daemon, emacs):
        os.kill(daemon.pid, signal.SIGSTOP)
        try:
            await emacs.keys("C-c", "o", "a")
            await emacs.wait_text("Ask about")
            await emacs.type("how do I feed it?")
            await emacs.keys("Enter")
            await emacs.wait_text("* how do I feed it?")
            await emacs.keys("C-c", "o", "k")
            await emacs.wait_text("Stopped 1 answer")
        finally:
            os.kill(daemon.pid, signal.SIGCONT)
        await emacs.wait(lambda: _roam_dir_known(emacs), "the daemon, awake, to answer where the notes are", timeout=30)
        screen = await emacs.wait_screen(lambda s: "[Stopped]" in s, "[Stopped] under the question")
        assert "Sources" not in screen, screen
        assert await emacs.eval("arcology-oracle--answering") == "nil"
        assert fake_ollama.state.chats == []


@asynccontextmanager
async def readme_emacs_at_80x24(tmp_path, roam_dir, fake_ollama) -> AsyncIterator[tuple]:
    """``(daemon, emacs)``: the daemon and an 80x24 ``emacs -nw`` with the README's
    configuration, at ``*scratch*``; both stopped after."""
    require_packages()
    daemon, emacs, _ = await readme_emacs(tmp_path, roam_dir, fake_ollama)
    emacs.columns, emacs.lines = 80, 24
    try:
        await emacs.start({"WALK_SERVER_DIR": str(emacs.server_socket.parent)})
        await emacs.wait_text("*scratch*", timeout=20)
        yield daemon, emacs
    finally:
        await emacs.stop()
        daemon.stop()


async def _roam_dir_known(emacs) -> bool:
    return await emacs.eval("(and (assoc (arcology-oracle--base-url) arcology-oracle--server-roam-dirs) t)") == "t"


@pytest.mark.timeout(180)
async def test_a_first_file_summary_stopped_while_the_daemon_is_silent_is_never_asked(tmp_path, roam_dir, fake_ollama):
    """As above, for a summary of a file with no node (inbox.org): ``C-c o u`` waits on
    the same look-up; ``C-c o k`` said "No answer is coming" and the summary came once the
    daemon woke. Now it stops it, and nothing is asked of the model."""
    async with readme_emacs_at_80x24(tmp_path, roam_dir, fake_ollama) as (daemon, emacs):
        await emacs.keys("C-x", "C-f")
        await emacs.type(str(roam_dir / "inbox.org"))
        await emacs.keys("Enter")
        await emacs.wait_text("Buy rye flour")
        os.kill(daemon.pid, signal.SIGSTOP)
        try:
            await emacs.keys("C-c", "o", "u")
            await emacs.keys("C-c", "o", "k")
            await emacs.wait_text("Stopped 1 answer")
        finally:
            os.kill(daemon.pid, signal.SIGCONT)
        await emacs.wait(lambda: _roam_dir_known(emacs), "the daemon, awake, to answer where the notes are", timeout=30)
        assert await emacs.eval("arcology-oracle--answering") == "nil"
        summaries = "(let ((b (get-buffer arcology-oracle-summary-buffer-name))) (and b (with-current-buffer b (buffer-string))))"
        assert await emacs.eval(summaries) == "nil"
        assert "Summary of" not in await emacs.screen()
        assert fake_ollama.state.chats == []
