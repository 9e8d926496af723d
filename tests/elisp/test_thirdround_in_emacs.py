"""What a newcomer met on a first day in Emacs, third round: ``emacs -nw`` in tmux with
the README's own configuration, the real daemon and the fake Ollama (as
tests/elisp/test_walkthrough.py runs them).

- In the rejected links list (``C-c o L``), ``TAB`` said "indent-relative: Buffer is
  read-only: #<buffer *arcology-oracle rejections*>" and ``S-TAB`` "<backtab> is
  undefined": in the other lists they move between notes, as ``n`` and ``p`` do. And
  ``n`` never reached the second row: the rows touch, and all had the same mark.
- The same note in two windows (``C-x 2``), the list about the heading of the one read
  last: ``C-c o u`` from the list summarized the heading at point in the other window.
- A command refused in the minibuffer (``C-c o s`` while ``C-x C-f`` asks for a file)
  wrote the package's anonymous function into *Messages* before the refusal:
  "(closure (t) (message) (signal 'user-error (list message))): Similar notes need an
  org-mode buffer".
"""

from __future__ import annotations

import aiohttp
import pytest

from tests.elisp.walkthrough import Walk
from tests.elisp.walkthrough_driver import LINKS, SIMILAR, SUMMARY, Driver, readme_emacs
from tests.emacs_batch import require_packages

REJECTIONS = "*arcology-oracle rejections*"
SOURDOUGH_ID = "adda0990-28e8-487f-ae0a-eda5a8987581"  # examples/roam/sourdough-baking.org
COFFEE_ID = "67f94a3f-6549-4356-a04e-da972ad8815e"  # examples/roam/coffee-brewing.org
TOMATOES_ID = "08a64bfc-ad2e-450f-9d55-87db5fcbe2ea"  # examples/roam/gardening-tomatoes.org


async def _started(tmp_path, roam_dir, fake_ollama) -> Driver:
    daemon, emacs, _ = await readme_emacs(tmp_path, roam_dir, fake_ollama)
    emacs.columns, emacs.lines = 120, 40
    driver = Driver(emacs, Walk(emacs, {}), roam_dir, fake_ollama, tmp_path, daemon)
    await emacs.start({"WALK_SERVER_DIR": str(emacs.server_socket.parent)})
    await emacs.wait_text("*scratch*", timeout=20)
    return driver


async def _stop(driver: Driver) -> None:
    await driver.emacs.stop()
    driver.daemon.stop()


@pytest.mark.timeout(180)
async def test_tab_moves_between_rejected_links(tmp_path, roam_dir, fake_ollama):
    require_packages()
    driver = await _started(tmp_path, roam_dir, fake_ollama)
    emacs = driver.emacs
    try:
        async with aiohttp.ClientSession(headers=driver.daemon.headers) as session:
            for to in (COFFEE_ID, TOMATOES_ID):
                async with session.post(driver.daemon.url + "/suggest-links/reject",
                                        json={"from": SOURDOUGH_ID, "to": to}) as resp:  # fmt: skip
                    assert resp.status == 200, await resp.text()
        await driver.open("sourdough-baking.org")
        await emacs.keys("C-c", "o", "L")
        await emacs.wait(lambda: _listed(driver, ("Coffee Brewing", "Growing Tomatoes")), "the two rejections")
        await driver.select(REJECTIONS)
        await emacs.keys("M-<")
        mark = await driver.mark()
        lines = []
        for key in ("Tab", "Tab", "Tab", "BTab", "BTab"):  # first, second, "No more notes", first, "No previous"
            where = await driver.where()
            await emacs.keys(key)
            await emacs.wait(lambda where=where: _moved_or_said(driver, where, mark), f"{key} to do something")
            lines.append(await driver.point_text())
        assert [any(t in line for t in ("Coffee", "Tomatoes")) for line in lines] == [True] * 5, lines
        assert lines[0] != lines[1] and lines[2] == lines[1] and lines[3] == lines[4] == lines[0], lines
        state = await emacs.state()
        after = "\n".join(state["messages"].split("\n")[mark:])
        assert "read-only" not in after and "undefined" not in after and "#<buffer" not in after, after
        assert "No more notes" in after and "No previous note" in after, after
    finally:
        await _stop(driver)


async def _listed(driver: Driver, titles) -> bool:
    text = await driver.buffer_text(REJECTIONS)
    return all(t in text for t in titles)


async def _moved_or_said(driver: Driver, where, mark: int) -> bool:
    if await driver.where() != where:
        return True
    lines = (await driver.emacs.state())["messages"].split("\n")[mark:]
    return len([line for line in lines if line.strip()]) > 0


@pytest.mark.timeout(180)
async def test_a_summary_from_the_list_of_a_note_in_two_windows(tmp_path, roam_dir, fake_ollama):
    require_packages()
    driver = await _started(tmp_path, roam_dir, fake_ollama)
    emacs = driver.emacs
    try:
        await driver.open("sourdough-baking.org")
        await emacs.keys("C-c", "o", "s")
        await emacs.wait_screen(lambda s: "Similar to: Sourdough Baking" in s and "Looking for" not in s, "the list")
        await emacs.keys("C-x", "2")  # the note in two windows; the upper one selected
        await emacs.wait(lambda: _windows_of(driver, "sourdough-baking.org", 2), "a second window on the note")
        upper = next(w["id"] for w in await driver.windows() if w["selected"])
        for _ in range(4):  # C-x o to the lower one (it passes the list)
            selected = next(w for w in await driver.windows() if w["selected"])
            if selected["buffer"] == "sourdough-baking.org" and selected["id"] != upper:
                break
            await emacs.keys("C-x", "o")
            await emacs.wait(lambda: driver._selected_moved(selected["id"]), "C-x o")
        await driver.goto("** Reviving a sluggish")  # in the lower window; its node: Starter maintenance
        await emacs.wait_screen(lambda s: "Similar to: Reviving a sluggish" in s, "the list of that heading")
        # To the list, not through the upper window: C-x o, or M-- C-x o, whichever is next to it.
        cyclic = await driver.windows()  # from the selected window, in C-x o's order
        await emacs.keys(*(["C-x", "o"] if cyclic[1]["buffer"] == SIMILAR else ["M--", "C-x", "o"]))
        await emacs.wait(lambda: _selected(driver, SIMILAR), "the list selected")
        screen = await emacs.screen()
        assert "Similar to: Reviving a sluggish" in screen, screen
        await emacs.keys("C-c", "o", "u")
        await emacs.wait(lambda: _has(driver, SUMMARY, "* Summary of"), "the summary")
        summary = await driver.buffer_text(SUMMARY)
        assert summary.startswith("* Summary of Starter maintenance\n"), summary  # not Sourdough Baking
    finally:
        await _stop(driver)


async def _windows_of(driver: Driver, name: str, count: int) -> bool:
    return len([w for w in await driver.windows() if w["buffer"] == name]) == count


async def _selected(driver: Driver, name: str) -> bool:
    return await driver.selected_buffer() == name


async def _has(driver: Driver, buffer: str, text: str) -> bool:
    return text in await driver.buffer_text(buffer)


@pytest.mark.timeout(180)
async def test_a_refusal_in_the_minibuffer_names_no_lisp(tmp_path, roam_dir, fake_ollama):
    require_packages()
    driver = await _started(tmp_path, roam_dir, fake_ollama)
    emacs = driver.emacs
    try:
        mark = await driver.mark()
        refusals = {"s": "Similar notes need an Org buffer", "u": "Summaries need an Org buffer",
                    "c": "Conversations need an Org buffer"}  # fmt: skip
        for key, refusal in refusals.items():
            await emacs.keys("C-x", "C-f")
            await emacs.wait_text("Find file:")
            await emacs.keys("C-c", "o", key)
            await emacs.wait_text(f"[{refusal}]")  # at the end of the prompt, as Emacs shows it there
            await emacs.keys("C-g")
            await emacs.wait_gone("Find file:")
        state = await emacs.state()
        after = [line for line in state["messages"].split("\n")[mark:] if any(r in line for r in refusals.values())]
        assert len(after) == 3, state["messages"]
        assert not any("closure" in line or "lambda" in line or "#[" in line for line in after), after
        assert all(line.startswith(("arcology-oracle: ", *refusals.values())) for line in after), after
    finally:
        await _stop(driver)


LONG_TITLE = "Notes on rye sourdough, the starter, the flours and the long cold proof"


@pytest.mark.timeout(180)
async def test_the_link_lists_headers_fit_an_80_column_terminal(tmp_path, roam_dir, fake_ollama):
    """``C-c o l`` and ``C-c o L`` in a note with a long title: the headers "Links to add
    to: TITLE" and "Rejected links from: TITLE" were one line, wider than the terminal,
    and Emacs wrapped them with a backslash at the edge. They are filled to the window, as
    the similar notes' header is, the title read whole (``C-c o L`` in the suggestions
    names it too, as it read it from the suggestions' first line before)."""
    require_packages()
    (roam_dir / "rye-sourdough.org").write_text(
        f":PROPERTIES:\n:ID:       5e0b1b52-3f0c-4d8e-9a57-0c6f3b3c2a11\n:END:\n#+title: {LONG_TITLE}\n\n"
        "Rye flour ferments faster than wheat.\n"
    )
    daemon, emacs, _ = await readme_emacs(tmp_path, roam_dir, fake_ollama, size=(80, 24))
    driver = Driver(emacs, Walk(emacs, {}), roam_dir, fake_ollama, tmp_path, daemon)
    try:
        await emacs.start({"WALK_SERVER_DIR": str(emacs.server_socket.parent)})
        await emacs.wait_text("*scratch*", timeout=20)
        await driver.open("rye-sourdough.org")
        await emacs.keys("C-c", "o", "l")
        await emacs.wait(lambda: _list_answered(driver, LINKS), "the link suggestions", timeout=15)
        _assert_header_fits(await emacs.screen(), "Links to add to:")
        await driver.select(LINKS)
        await emacs.keys("C-c", "o", "L")
        _assert_header_fits(await emacs.wait_text("No rejections.", timeout=15), "Rejected links from:")
        assert not (await emacs.state())["errors"]
    finally:
        await emacs.stop()
        daemon.stop()


async def _list_answered(driver: Driver, buffer: str) -> bool:
    text = await driver.buffer_text(buffer)
    return "Links to add to:" in text and "Looking for" not in text and "Asking" not in text


def _assert_header_fits(screen: str, header: str) -> None:
    """HEADER and the long title after it, over two lines, none wrapped by Emacs."""
    lines = [line.rstrip() for line in screen.split("\n")]
    assert not any(line.endswith("\\") for line in lines), screen
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    assert " ".join(lines[start : start + 2]).startswith(f"{header} {LONG_TITLE}"), screen
