"""Where ``C-c o s`` puts the similar notes, by the terminal's width: ``emacs -nw`` in tmux
with the README's own configuration, the real daemon and the fake Ollama.

On a 60-column terminal the side window on the right was 18 columns (30% of the frame):
every title was cut to about ten characters ("Bread Hydr"), the marks filled over lines
of their own. A frame narrower than ``arcology-oracle-similar-min-frame-width`` (80) puts
the list below the note, the frame's whole width, where the titles are read whole. An
80- or 160-column terminal keeps the side window on the right, 30% wide, as before.

The place was chosen only when the list opened: a list opened at 160 columns stayed an
18-column side window when the terminal was made 60 wide, and one opened below stayed
below on a wide terminal. A terminal resized across that width now moves the list.
"""

from __future__ import annotations

import pytest

from tests.elisp.test_narrow_roam_section_in_emacs import _roam_side_window_snippet
from tests.elisp.walkthrough_driver import SIMILAR, readme_session

NOTE = "sourdough-baking.org"
# Whether the frame's resizes are still watched for the list.
WATCHED = "(if (memq #'arcology-oracle--similar-frame-resized (default-value 'window-size-change-functions)) t nil)"


async def _open_the_list(driver) -> None:
    """Visit the note on its heading "Bulk fermentation" and list its similar notes with ``C-c o s``."""
    await driver.open(NOTE, "* Bulk fermentation")
    await driver.emacs.keys("C-c", "o", "s")
    await driver.emacs.wait(lambda: driver._count_in(SIMILAR, "Bread Hydration", 1), "the similar notes", timeout=20)


@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    ("size", "side", "width"),
    [((60, 24), "bottom", 60), ((80, 24), "right", 24), ((160, 45), "right", 48)],
    ids=["60x24", "80x24", "160x45"],
)
async def test_the_similar_notes_are_readable_on_a_narrow_frame(tmp_path, roam_dir, fake_ollama, size, side, width):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=size) as driver:
        emacs = driver.emacs
        await _open_the_list(driver)
        screen = await emacs.wait_screen(lambda s: "Similar to:" in s and "Looking for" not in s, "the list")
        similar = await driver.window_of(SIMILAR)
        assert (similar["side"], similar["width"]) == (side, width), await driver.windows()
        note = await driver.window_of(NOTE)
        assert note["width"] == (size[0] if side == "bottom" else size[0] - width), await driver.windows()
        assert note["selected"], await driver.windows()
        if side == "bottom":
            # Below the note, whole: the header on one line, a title and its marks uncut.
            lines = [line.rstrip() for line in screen.split("\n")]
            header = lines.index("Similar to: Bulk fermentation")
            assert any(line.endswith("Bread Hydration linked both ways") for line in lines[header:]), screen
            assert "* Bulk fermentation" in lines[:header], screen  # the note above
        assert not (await emacs.state())["errors"]


async def _resize(driver, columns: int, lines: int) -> None:
    """Make the terminal COLUMNS x LINES, as a tmux pane or terminal window resized is."""
    await driver.emacs.tmux("resize-window", "-t", "walk", "-x", str(columns), "-y", str(lines))


async def _unwatched(driver) -> bool:
    return await driver.emacs.eval(WATCHED) == "nil"


def _below(screen: str) -> bool:
    """The list is below the note, the frame's whole width: its header is a line under the
    note's heading (which the org-roam buffer, when shown, may have beside it), and it is
    laid out for that width (a title and its marks uncut)."""
    lines = [line.rstrip() for line in screen.split("\n")]
    if "Similar to: Bulk fermentation" not in lines:
        return False
    header = lines.index("Similar to: Bulk fermentation")
    return any(line.startswith("* Bulk fermentation") for line in lines[:header]) and any(
        line.endswith("Bread Hydration linked both ways") for line in lines[header:]
    )


def _beside(screen: str) -> bool:
    """The list is beside the note, right of it: its header past the note's 112 columns;
    laid out for its width, no line of it cut at the window's edge (``$``)."""
    lines = screen.split("\n")
    column = max(line.find("|Similar to: Bulk fermentation") for line in lines)
    return column >= 100 and not any(line[column:].rstrip().endswith("$") for line in lines)


@pytest.mark.timeout(180)
async def test_the_similar_notes_move_when_the_terminal_is_resized(tmp_path, roam_dir, fake_ollama):
    """Opened beside the note at 160 columns, the list stayed a side window of 18 columns
    when the terminal was made 60 wide (and, opened below, stayed below on a wide one):
    crossing ``arcology-oracle-similar-min-frame-width`` moves it where ``C-c o s`` would
    open it, with its entries and point, the note's window keeping the cursor, and nothing
    asked of the daemon again. ``q`` in the list stops watching the frame's size."""
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(160, 45)) as driver:
        emacs = driver.emacs
        await _open_the_list(driver)
        await emacs.wait_screen(_beside, "the list beside the note")
        await emacs.wait(driver.similar_settled, "the list's refreshes to end")
        requests = await driver.similar_requests()
        note_line = (await driver.window_of(NOTE))["point_line"]

        await _resize(driver, 60, 24)
        await emacs.wait_screen(_below, "the list to move below the note")
        similar, note = await driver.window_of(SIMILAR), await driver.window_of(NOTE)
        assert (similar["side"], similar["width"]) == ("bottom", 60), await driver.windows()
        assert note["selected"] and note["point_line"] == note_line, await driver.windows()
        assert await driver.similar_requests() == requests

        # Read in the list, on its second entry, when the terminal is made wide again.
        await driver.select(SIMILAR)
        first = await driver.point_text()
        await emacs.keys("n")
        await emacs.wait(lambda: driver._cursor_moved((SIMILAR, similar["point_line"])), "n to the next note")
        entry = await driver.point_text()
        assert entry != first
        assert (await driver.window_of(SIMILAR))["id"] == similar["id"], "the list moved again"
        await _resize(driver, 160, 45)
        await emacs.wait_screen(_beside, "the list to move back beside the note")
        similar = await driver.window_of(SIMILAR)
        assert (similar["side"], similar["width"], similar["selected"]) == ("right", 48, True), await driver.windows()
        assert similar["point_text"].split()[1:3] == entry.split()[1:3], (entry, similar)
        assert (await driver.window_of(NOTE))["point_line"] == note_line, await driver.windows()
        assert await driver.similar_requests() == requests

        await emacs.keys("q")
        await emacs.wait(lambda: driver._not_shown(SIMILAR), "q to take the list away")
        await emacs.wait(lambda: _unwatched(driver), "the frame's size no longer watched")
        assert not (await emacs.state())["errors"]


@pytest.mark.timeout(180)
async def test_the_similar_notes_opened_below_move_beside_on_a_wider_terminal(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(60, 24)) as driver:
        emacs = driver.emacs
        await _open_the_list(driver)
        await emacs.wait_screen(_below, "the list below the note")
        await _resize(driver, 160, 45)
        await emacs.wait_screen(_beside, "the list to move beside the note")
        similar, note = await driver.window_of(SIMILAR), await driver.window_of(NOTE)
        assert (similar["side"], similar["width"]) == ("right", 48), await driver.windows()
        assert note["selected"], await driver.windows()
        assert not (await emacs.state())["errors"]


async def _column_of(driver, buffer: str) -> str:
    """The left column and the width of the window showing BUFFER, "none" without one."""
    return await driver.emacs.eval(
        f'(let ((w (get-buffer-window "{buffer}"))) '
        '(if w (format "%d %d" (window-left-column w) (window-total-width w)) "none"))'
    )


async def _shares_roams_column(driver) -> bool:
    """The list is below the org-roam buffer, in its column: same left edge and width."""
    similar = await _column_of(driver, SIMILAR)
    return similar != '"none"' and similar == await _column_of(driver, "*org-roam*")


@pytest.mark.timeout(180)
@pytest.mark.parametrize("roam_in_side_window", [True, False], ids=["roam-side-window", "roam-split"])
async def test_the_similar_notes_beside_the_org_roam_buffer_move_when_the_terminal_is_resized(
    tmp_path, roam_dir, fake_ollama, roam_in_side_window
):
    """Opened below the org-roam buffer (in its side window, as the README suggests, or in
    the window org-roam splits off by default), the list stayed in that narrow column when
    the terminal was made 60 wide, where the list opened alone goes below the note, the
    frame's width. Crossing ``arcology-oracle-similar-min-frame-width``
    moves it as it moves the list opened alone, and back below the org-roam buffer."""
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(160, 45)) as driver:
        emacs = driver.emacs
        if roam_in_side_window:
            await emacs.eval(f"(progn {_roam_side_window_snippet()} t)")
        await driver.open(NOTE, "* Bulk fermentation")
        await driver.mx("org-roam-buffer-toggle")
        await emacs.wait(lambda: driver.window_of("*org-roam*"), "the org-roam buffer")
        await driver.select(NOTE)
        await emacs.keys("C-c", "o", "s")
        await emacs.wait(lambda: driver._count_in(SIMILAR, "Bread Hydration", 1), "the similar notes", timeout=20)
        await emacs.wait(driver.similar_settled, "the list's refreshes to end")
        assert await _shares_roams_column(driver), await driver.windows()
        requests = await driver.similar_requests()

        await _resize(driver, 60, 24)
        await emacs.wait_screen(_below, "the list to move below the note")
        similar = await driver.window_of(SIMILAR)
        assert (similar["side"], similar["width"]) == ("bottom", 60), await driver.windows()
        assert (await driver.window_of(NOTE))["selected"], await driver.windows()

        await _resize(driver, 160, 45)
        await emacs.wait(lambda: _shares_roams_column(driver), "the list back below the org-roam buffer")
        assert (await driver.window_of(SIMILAR))["side"] != "bottom", await driver.windows()
        assert (await driver.window_of(NOTE))["selected"], await driver.windows()
        assert await driver.similar_requests() == requests
        assert not (await emacs.state())["errors"]
