"""A newcomer's first day in Emacs, seventh round: ``emacs -nw`` in tmux with the README's
own configuration, the real daemon and the fake Ollama (as
tests/elisp/test_sixthround_in_emacs.py runs them).

- A refusal signalled while a minibuffer is active (``C-c o K`` or ``C-c o o`` while
  ``C-x C-f`` asks for a file) is drawn by Emacs after the prompt, "[...]", and was broken
  at the 80th column mid-word ("(one with :CAPTURED_B\\" then "Y:)"). It reads in whole
  words there too, logged on one line in *Messages*.
"""

from __future__ import annotations

import pytest

from tests.elisp.walkthrough_driver import readme_session

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
