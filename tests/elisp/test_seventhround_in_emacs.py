"""A newcomer's first day in Emacs, seventh round: ``emacs -nw`` in tmux with the README's
own configuration, the real daemon and the fake Ollama (as
tests/elisp/test_sixthround_in_emacs.py runs them).

- A refusal signalled while a minibuffer is active (``C-c o K`` or ``C-c o o`` while
  ``C-x C-f`` asks for a file) is drawn by Emacs after the prompt, "[...]", and was broken
  at the 80th column mid-word ("(one with :CAPTURED_B\\" then "Y:)"). It reads in whole
  words there too, logged on one line in *Messages*. A key of the package that asks
  something (``C-c o a``) failed there in Emacs's words, "Command attempted to use
  minibuffer while in minib\\" then "uffer": it is refused, saying what to do.
- ``C-/`` in the note's own window (not in the link suggestions) after ``i`` took the link
  out, and the suggestion came back to the list only at ``g``. The list follows the
  note's links as they change, without asking the daemon again.
- ``C-c o s`` in the answers buffer listed the notes similar to the question's heading
  (and turned the similar-notes mode on there, following point among the answers), where
  ``C-c o u`` and ``C-c o l`` say that the buffer holds answers, not a note, and that RET
  goes back to one's note. ``C-c o s`` says so too, and ``C-c o m`` there.
- The note in two windows on different headings (``C-x 2``): the similar notes follow the
  heading of the window selected, and ``i`` in the list writes into that heading's
  paragraph, one ``C-/`` taking each link out again (checked, not changed).
"""

from __future__ import annotations

import pytest

from tests.elisp.test_firstday_lists_in_emacs import _links_shown
from tests.elisp.test_sixthround_in_emacs import _first_title, _first_title_is
from tests.elisp.walkthrough_driver import ANSWERS, LINKS, SIMILAR, Driver, readme_session

FORGET_NOTHING = "No captured heading at point (one with :CAPTURED_BY:), and nothing remembered since Emacs started"
NO_SOURCE = "No cited source on this line (a ‘- [N]’ line of an answer’s Sources:)"
NESTED = "A prompt is open already: answer it or quit it (C-g), then"


@pytest.mark.timeout(180)
async def test_a_refusal_at_a_prompt_reads_in_whole_words(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        for key, refusal in (("K", FORGET_NOTHING), ("o", NO_SOURCE), ("a", f"{NESTED} C-c o a again")):
            mark = await driver.mark()
            await emacs.keys("C-x", "C-f")
            await emacs.wait_text("Find file:")
            await emacs.keys("C-c", "o", key)
            screen = await emacs.wait_screen(lambda s, end=refusal[-12:]: end + "]" in s, "the refusal's end")
            echo = screen.rstrip("\n").split("\n")[-2:]
            assert echo[0].startswith("Find file:"), screen
            assert not any(line.rstrip().endswith("\\") for line in echo), echo  # no word cut at the edge
            assert " ".join(line.strip() for line in echo).endswith(f"[{refusal}]"), echo
            await emacs.keys("C-g")  # before asking the server: a C-g then quit its request, not the prompt
            await emacs.wait_gone("Find file:")
            logged = [line for line in (await emacs.state())["messages"].split("\n")[mark:] if refusal in line]
            assert logged == [f"arcology-oracle: {refusal}"], logged


@pytest.mark.timeout(180)
async def test_undo_in_the_note_offers_the_link_taken_out_again(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(120, 40)) as driver:
        emacs = driver.emacs
        note = "sourdough-baking.org"
        await driver.open(note, "* Starter maintenance")
        before = await driver.buffer_text(note)
        await emacs.keys("C-c", "o", "l")
        await emacs.wait(lambda: _links_shown(driver), "the suggestions, shown and selected", timeout=15)
        title = _first_title(await driver.buffer_text(LINKS))
        await emacs.keys("i")
        await driver.message(f'Inserted a link to "{title}"')
        assert _first_title(await driver.buffer_text(LINKS)) != title
        await emacs.eval(
            "(progn (setq walk-links-asked 0) (advice-add 'arcology-oracle--links-request :before"
            " (lambda (&rest _) (setq walk-links-asked (1+ walk-links-asked))) '((name . walk-count))))"
        )
        await driver.select(note)
        await emacs.keys("C-/")
        await emacs.wait(lambda: driver._text_is(note, before), "the link taken out")
        await emacs.wait(lambda: _first_title_is(driver, title), f"{title} offered again")
        assert await emacs.eval("walk-links-asked") == "0"  # from what the list had, not asked again
        assert not (await emacs.state())["errors"]


@pytest.mark.timeout(180)
async def test_similar_notes_refuse_in_the_answers_buffer_as_a_summary_does(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(120, 40)) as driver:
        emacs = driver.emacs
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        await driver.ask("How do I revive it?")
        await emacs.wait(lambda: driver._count_in(ANSWERS, "** Sources", 1), "the answer", timeout=20)
        await driver.select(ANSWERS)
        refusal = "*arcology-oracle answers* holds answers, not a note: RET on one goes back to its note"
        # The same refusal again is counted on its line in *Messages*; the mode's is a message.
        for key, logged in (("u", refusal), ("s", f"{refusal} [2 times]"), ("m", f"arcology-oracle: {refusal}")):
            mark = await driver.mark()
            await emacs.keys("C-c", "o", key)
            assert await driver.message(logged, since=mark - 1) == logged
        assert await driver.selected_buffer() == ANSWERS
        assert await driver.window_of(SIMILAR) is None, await driver.windows()
        assert await emacs.eval(f'(buffer-local-value (quote arcology-oracle-similar-mode) (get-buffer "{ANSWERS}"))') == "nil"
        errors = (await emacs.state())["errors"]
        assert [e.strip() for e in errors] == [refusal, refusal], errors  # u's and s's, nothing else


async def _to_window(driver: Driver, window: str) -> None:
    """Select WINDOW (its id) with one ``C-x o`` or ``M-- C-x o``, passing no other window:
    a window passed through is a command run at its point, which the list follows."""
    cyclic = await driver.windows()  # from the selected window, in C-x o's order
    ids = [w["id"] for w in cyclic]
    assert window in (ids[1], ids[-1]), cyclic
    await driver.emacs.keys(*(["C-x", "o"] if ids[1] == window else ["M--", "C-x", "o"]))
    await driver.emacs.wait(lambda: driver._selected_moved(ids[0]), "the window selected")
    assert next(w for w in await driver.windows() if w["selected"])["id"] == window


async def _insert_from_list(driver: Driver, heading: str) -> int:
    """Wait for the list about HEADING, select it, ``i``; return the line it says."""
    await driver.emacs.wait_screen(lambda s: f"Similar to: {heading}" in s, f"the list of {heading}", timeout=15)
    await _to_window(driver, (await driver.window_of(SIMILAR))["id"])
    mark = await driver.mark()
    await driver.emacs.keys("i")
    said = await driver.message("Inserted a link to", since=mark)
    return int(said.rsplit("line ", 1)[1])


def _heading_of(text: str, line: int) -> str:
    """The heading line above LINE (1-based) of TEXT."""
    return next(h for h in reversed(text.split("\n")[:line]) if h.startswith("*"))


@pytest.mark.timeout(180)
async def test_two_windows_on_a_note_the_list_and_its_links_follow_the_selected_one(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(160, 45)) as driver:
        emacs = driver.emacs
        note = "sourdough-baking.org"
        await driver.open(note, "* Starter maintenance")
        before = await driver.buffer_text(note)
        await emacs.keys("C-c", "o", "s")
        await emacs.wait_screen(lambda s: "Similar to: Starter maintenance" in s, "the list", timeout=15)
        await emacs.keys("C-x", "2")  # the upper window stays selected, at Starter maintenance
        await emacs.wait(lambda: _windows_on(driver, note, 2), "a second window on the note")
        upper = next(w["id"] for w in await driver.windows() if w["selected"])
        lower = next(w["id"] for w in await driver.windows() if w["buffer"] == note and w["id"] != upper)
        await _to_window(driver, lower)
        await driver.goto("* Bulk fermentation")
        await emacs.keys("C-n")  # into its paragraph
        line = await _insert_from_list(driver, "Bulk fermentation")
        assert _heading_of(await driver.buffer_text(note), line) == "* Bulk fermentation"
        await _to_window(driver, upper)  # the list and the upper window are next to each other
        await emacs.keys("C-n")  # a command in the upper window, still under Starter maintenance
        line = await _insert_from_list(driver, "Starter maintenance")
        assert _heading_of(await driver.buffer_text(note), line) == "* Starter maintenance"
        for _ in range(2):
            text = await driver.buffer_text(note)
            await emacs.keys("C-/")  # in the list: in the note, the window read last
            await emacs.wait(lambda text=text: _changed(driver, note, text), "one link taken out")
        assert await driver.buffer_text(note) == before
        assert not (await emacs.state())["errors"]


async def _windows_on(driver: Driver, name: str, count: int) -> bool:
    return len([w for w in await driver.windows() if w["buffer"] == name]) == count


async def _changed(driver: Driver, name: str, text: str) -> bool:
    return await driver.buffer_text(name) != text
