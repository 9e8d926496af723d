"""What a newcomer met on a first day in Emacs, fourth round: ``emacs -nw`` in tmux with
the README's own configuration, the real daemon and the fake Ollama (as
tests/elisp/test_walkthrough.py runs them).

- ``i`` in the similar notes beside a note at 80 columns put the note's point after the
  link, past the edge of its window: Emacs scrolled the whole note sideways, every line
  cut on the left with a ``$``. Point goes to the start of the link's line there.
- The rejected links list (``C-c o L``) was laid out once, for the window it first had:
  a terminal made narrower left its header as wide as before, wrapped by Emacs at the
  new edge with a backslash.
- ``C-c o s`` in the org-roam buffer said "Similar notes need an Org buffer", and ``C-c o a``
  there asked about the org-roam buffer's own text ("Backlinks (2) ..."), and ``C-c o L``
  listed every rejection: they act on the note the org-roam buffer shows now, as from the
  similar notes.
- ``C-c o f`` with a long query offered its results at a prompt wider than an 80-column
  terminal, wrapped by Emacs with a backslash: the query is cut to what the frame leaves.
- ``C-c o a`` in a note narrowed to a subtree (``C-x n s``) asked about the whole file:
  the question is about the part the buffer shows.
- ``C-c o s`` at 80x24 with the org-roam buffer split below the note took half the
  frame's height out of the org-roam window, which was left one line high: the list
  takes the lower half of that window.
- An answer waiting says "(C-c C-k stops it)"; with the answers buffer made editable
  (``e``) that key was Org's, which folded the entry and stopped nothing. It stops the
  answer, editable or not.
"""

from __future__ import annotations

import pytest

from tests.conftest import EXAMPLE_ROAM as REPO_EXAMPLES
from tests.elisp.walkthrough_driver import ANSWERS, SIMILAR, Driver, readme_session

LONG_TITLE = "Notes on rye sourdough, the starter, the flours and the long cold proof"


def _long_titled_note(roam_dir) -> None:
    (roam_dir / "rye-sourdough.org").write_text(
        f":PROPERTIES:\n:ID:       5e0b1b52-3f0c-4d8e-9a57-0c6f3b3c2a11\n:END:\n#+title: {LONG_TITLE}\n\n"
        "Rye flour ferments faster than wheat.\n"
    )


@pytest.mark.timeout(180)
async def test_the_rejections_are_laid_out_again_for_a_narrower_terminal(tmp_path, roam_dir, fake_ollama):
    _long_titled_note(roam_dir)
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(160, 45)) as driver:
        emacs = driver.emacs
        await driver.open("rye-sourdough.org")
        await emacs.keys("C-c", "o", "L")
        screen = await emacs.wait_text("No rejections.", timeout=15)
        assert f"Rejected links from: {LONG_TITLE}" in screen, screen
        await emacs.tmux("resize-window", "-t", "walk", "-x", "80", "-y", "24")
        screen = await emacs.wait_screen(
            lambda s: _header(s) == f"Rejected links from: {LONG_TITLE}" and "No rejections." in s,
            "the header filled again to the 80-column window",
        )
        assert not any(line.rstrip().endswith("\\") for line in screen.split("\n")), screen
        assert not (await emacs.state())["errors"]


def _header(screen: str) -> str | None:
    """The rejections' header, its lines joined, when no line of it is wrapped by Emacs."""
    lines = [line.rstrip() for line in screen.split("\n")]
    start = next((i for i, line in enumerate(lines) if line.startswith("Rejected links from:")), None)
    if start is None or any(line.endswith("\\") for line in lines[start : start + 3]):
        return None
    return " ".join(lines[start : start + 2])


@pytest.mark.timeout(180)
async def test_the_org_roam_buffer_asks_about_the_note_it_shows(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await driver.open("sourdough-baking.org")
        await driver.mx("org-roam-buffer-toggle")
        await emacs.wait_text("Backlinks (", timeout=15)
        await driver.select("*org-roam*")
        await emacs.keys("C-c", "o", "s")
        await emacs.wait(lambda: _shows(driver, SIMILAR, "Similar to: Sourdough Baking"), "the note's similar notes")
        await driver.select("*org-roam*")
        await emacs.keys("C-c", "o", "a")
        await emacs.wait_text("Ask about sourdough-baking.org:")
        await emacs.type("What is this note about?")
        await emacs.keys("Enter")
        # The fake chat model repeats the start of the text it was given.
        await emacs.wait(lambda: _shows(driver, ANSWERS, "** Sources"), "the answer", timeout=20)
        answer = await driver.buffer_text(ANSWERS)
        assert "<buffer> :PROPERTIES: :ID: adda0990" in " ".join(answer.split()), answer
        assert "Backlinks" not in answer, answer
        await driver.select("*org-roam*")
        await emacs.keys("C-c", "o", "L")
        await emacs.wait_text("Rejected links from: Sourdough Baking", timeout=15)
        state = await emacs.state()
        assert not state["errors"], state["errors"]
        assert "need an Org buffer" not in state["messages"], state["messages"]


async def _shows(driver: Driver, buffer: str, text: str) -> bool:
    """TEXT is in BUFFER, its lines filled to the window or not."""
    return " ".join(text.split()) in " ".join((await driver.buffer_text(buffer)).split())


LONG_QUERY = "how do I keep a sourdough starter alive in the fridge over a long holiday away"


@pytest.mark.timeout(180)
async def test_the_search_prompt_of_a_long_query_fits_an_80_column_terminal(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await emacs.keys("C-c", "o", "f")
        await emacs.wait_text("Search notes:")
        await emacs.type(LONG_QUERY)
        await emacs.keys("Enter")
        screen = await emacs.wait_text("found, RET visits the best, TAB lists them):", timeout=15)
        lines = [line.rstrip() for line in screen.rstrip("\n").split("\n")]
        assert not any(line.endswith("\\") for line in lines), screen
        prompt = lines[-1]
        assert prompt.startswith("Notes for how do I keep") and "…" in prompt, screen
        assert prompt.endswith("TAB lists them):"), screen
        await emacs.keys("Enter")
        await emacs.wait(lambda: _selected_is_note(driver), "the best result visited")
        assert not (await emacs.state())["errors"]


async def _point_on_entry(driver: Driver) -> bool:
    return (await driver.point_text()).startswith("0.")


async def _selected_is_note(driver: Driver) -> bool:
    return (await driver.selected_buffer() or "").endswith(".org")


@pytest.mark.timeout(180)
async def test_a_narrowed_note_is_asked_about_the_part_it_shows(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        await emacs.keys("C-x", "n", "s")
        await emacs.wait_screen(lambda s: "Narrow" in s, "the note narrowed to the subtree")
        await emacs.keys("C-c", "o", "a")
        await emacs.wait_text("Ask about this buffer:")
        await emacs.type("How do I feed it?")
        await emacs.keys("Enter")
        # The fake chat model repeats the start of the text it was given.
        await emacs.wait(lambda: _shows(driver, ANSWERS, "** Sources"), "the answer", timeout=20)
        answer = " ".join((await driver.buffer_text(ANSWERS)).split())
        assert "<buffer> * Starter maintenance" in answer, answer
        assert (roam_dir / "sourdough-baking.org").read_bytes() == (REPO_EXAMPLES / "sourdough-baking.org").read_bytes()
        assert not (await emacs.state())["errors"]


@pytest.mark.timeout(180)
async def test_the_stop_key_the_waiting_answer_names_stops_it_in_an_edited_buffer(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        fake_ollama.state.configure({"hang": True})  # the model does not answer
        mark = await driver.ask("How do I revive it?")
        await emacs.wait_text("(C-c C-k stops it)", timeout=20)
        await driver.select(ANSWERS)
        await emacs.keys("e")
        await driver.message("Editable now", since=mark)
        await emacs.keys("C-c", "C-k")
        await driver.message("Stopped 1 answer", since=mark)
        await emacs.wait(lambda: _shows(driver, ANSWERS, "[Stopped]"), "the answer marked stopped")
        assert "* How do I revive it?\n" in await driver.buffer_text(ANSWERS)
        assert not (await emacs.state())["errors"]


@pytest.mark.timeout(180)
async def test_i_in_the_similar_notes_leaves_the_note_unscrolled_sideways(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await driver.open("sourdough-baking.org", "feeding, smells tangy")
        await emacs.keys("C-c", "o", "s")
        await emacs.wait(lambda: _shows(driver, SIMILAR, "Similar to: Starter maintenance"), "the list", timeout=15)
        await emacs.wait(driver.similar_settled, "the list's refreshes to end")
        await driver.select(SIMILAR)
        await emacs.wait(lambda: _point_on_entry(driver), "point on the list's first entry")
        mark = await driver.mark()
        await emacs.keys("i")
        said = await driver.message("Inserted a link to", since=mark)
        title = said.split('"')[1]
        await emacs.wait(lambda: _shows(driver, "sourdough-baking.org", "jar wall. [[id:"), "the link in the note")
        screen = await emacs.wait_screen(lambda s: "feeding, smells tangy" in s, "the note's line of the link")
        left = [line.split("|", 1)[0] for line in screen.split("\n")[1:-3] if "|" in line]
        assert left and not any(part.startswith("$") for part in left), screen
        note = next(w for w in await driver.windows() if w["buffer"] == "sourdough-baking.org")
        assert "feeding, smells tangy and shows bubbles on the jar wall." in note["point_text"], note
        assert title in note["point_text"], note
        assert not (await emacs.state())["errors"]


@pytest.mark.timeout(180)
async def test_the_similar_notes_leave_the_org_roam_window_readable_at_80x24(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        await driver.open("bread-hydration.org")
        await driver.mx("org-roam-buffer-toggle")
        await emacs.wait_text("Backlinks (", timeout=15)
        roam = (await driver.window_of("*org-roam*"))["height"]
        await driver.select("bread-hydration.org")
        await emacs.keys("C-c", "o", "s")
        await emacs.wait(lambda: _shows(driver, SIMILAR, "Similar to: Bread Hydration"), "the list", timeout=15)
        await emacs.wait(lambda: driver.window_of(SIMILAR), "the list's window")
        windows = {w["buffer"]: w for w in await driver.windows()}
        # The list shares the org-roam window's place, half each; the note keeps its own.
        assert windows["*org-roam*"]["height"] >= roam // 2, windows
        assert windows[SIMILAR]["height"] >= roam // 2 - 1, windows
        assert windows["*org-roam*"]["width"] == windows[SIMILAR]["width"], windows
        assert not (await emacs.state())["errors"]
