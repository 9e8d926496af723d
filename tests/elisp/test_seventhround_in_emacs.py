"""A newcomer's first day in Emacs, seventh round: ``emacs -nw`` in tmux with the README's
own configuration, the real daemon and the fake Ollama (as
tests/elisp/test_sixthround_in_emacs.py runs them).

- A refusal signalled while a minibuffer is active (``C-c o K`` or ``C-c o o`` while
  ``C-x C-f`` asks for a file) is drawn by Emacs after the prompt, "[...]", and was broken
  at the 80th column mid-word ("(one with :CAPTURED_B\\" then "Y:)"). It reads in whole
  words there too, logged on one line in *Messages*.
- ``C-/`` in the note's own window (not in the link suggestions) after ``i`` took the link
  out, and the suggestion came back to the list only at ``g``. The list follows the
  note's links as they change, without asking the daemon again.
- ``C-c o s`` in the answers buffer listed the notes similar to the question's heading
  (and turned the similar-notes mode on there, following point among the answers), where
  ``C-c o u`` and ``C-c o l`` say that the buffer holds answers, not a note, and that RET
  goes back to one's note. ``C-c o s`` says so too, and ``C-c o m`` there.
"""

from __future__ import annotations

import pytest

from tests.elisp.test_firstday_lists_in_emacs import _links_shown
from tests.elisp.test_sixthround_in_emacs import _first_title, _first_title_is
from tests.elisp.walkthrough_driver import ANSWERS, LINKS, SIMILAR, readme_session

FORGET_NOTHING = "No captured heading at point (one with :CAPTURED_BY:), and nothing remembered since Emacs started"
NO_SOURCE = "No cited source on this line (a ‘- [N]’ line of an answer’s Sources:)"


@pytest.mark.timeout(180)
async def test_a_refusal_at_a_prompt_reads_in_whole_words(tmp_path, roam_dir, fake_ollama):
    async with readme_session(tmp_path, roam_dir, fake_ollama, size=(80, 24)) as driver:
        emacs = driver.emacs
        for key, refusal in (("K", FORGET_NOTHING), ("o", NO_SOURCE)):
            mark = await driver.mark()
            await emacs.keys("C-x", "C-f")
            await emacs.wait_text("Find file:")
            await emacs.keys("C-c", "o", key)
            screen = await emacs.wait_screen(lambda s, end=refusal[-12:]: end + "]" in s, "the refusal's end")
            echo = screen.rstrip("\n").split("\n")[-2:]
            assert echo[0].startswith("Find file:"), screen
            assert not any(line.rstrip().endswith("\\") for line in echo), echo  # no word cut at the edge
            assert " ".join(line.strip() for line in echo).endswith(f"[{refusal}]"), echo
            logged = [line for line in (await emacs.state())["messages"].split("\n")[mark:] if refusal in line]
            assert logged == [f"arcology-oracle: {refusal}"], logged
            await emacs.keys("C-g")
            await emacs.wait_gone("Find file:")


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
