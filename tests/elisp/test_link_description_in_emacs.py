"""A link inserted from the similar notes (``i``) in ``emacs -nw`` (tmux, the README's
own configuration, the real daemon and the fake Ollama): the linked note's title
becomes the link's description as words only. A title holding Org's inline code
(``src_sh{...}``, ``call_f()``), a macro, an export snippet or ``[[``/``]]`` was copied as
it was: the user's note then ran that code on export (a link's description holds such
objects) or got a broken link. The note's bytes are its own plus the link, and batch
Org reads one ``id:`` link and no code in it."""

from __future__ import annotations

import pytest

from arcology_oracle.notes.org_escape import ZWSP
from tests.elisp.walkthrough_driver import SIMILAR, readme_session
from tests.http.test_inert_sweep import sweep_reading

NOTE = "sourdough-baking.org"
TWIN_ID = "5e1f0c2a-4b7d-4c1e-9a57-0c0ffee0b0a7"
TITLE = "Scoring src_sh{touch pwned} call_f() {{{kbd(x)}}} @@html:<b>@@ a ]] b [[ c"
SHAPING = (
    "Pre-shape into a loose round, rest twenty minutes, then shape a tight batard and\n"
    "proof it in a banneton overnight in the fridge. Score with a razor blade (a\n"
    "lame) at a shallow angle so the ear opens in the oven.\n"
)


@pytest.mark.timeout(180)
async def test_a_linked_notes_title_is_inserted_as_words_that_run_nothing(tmp_path, roam_dir, fake_ollama):
    # A note saying what "Shaping and scoring" says, so that it is the first similar one.
    (roam_dir / "scoring.org").write_text(f":PROPERTIES:\n:ID:       {TWIN_ID}\n:END:\n#+title: {TITLE}\n\n{SHAPING}")
    before = (roam_dir / NOTE).read_text()
    async with readme_session(tmp_path, roam_dir, fake_ollama) as driver:
        emacs = driver.emacs
        await driver.open(NOTE, "Pre-shape into a loose round")
        await emacs.keys("C-c", "o", "s")
        await emacs.wait_screen(lambda s: "Similar to: Shaping and scoring" in s and "Looking for" not in s, "the list")
        mark = await driver.mark()
        await driver.select(SIMILAR)
        await emacs.keys("i")  # on the first entry, the twin note
        await driver.message("Inserted a link to", since=mark)
        await driver.select(NOTE)
        await emacs.keys("C-x", "C-s")
        await driver.message("Wrote", since=mark)
    after = (roam_dir / NOTE).read_text()
    z = ZWSP
    described = "Scoring src" + z + "_sh{touch pwned} call" + z + "_f() {" + z + "{{kbd(x)}}} @" + z + "@html:<b>@" + z + "@"
    described += " a ]" + z + "] b [" + z + "[ c"
    link = f"[[id:{TWIN_ID}][{described}]]"
    reading = sweep_reading(roam_dir / NOTE, 1)
    code = {"inline-src-block", "inline-babel-call", "macro", "export-snippet"} & set(reading["types"])
    assert code == set(), reading["types"]
    assert [h[1] for h in reading["headings"]] == [h[1] for h in sweep_reading_of_text(tmp_path, before)["headings"]]
    assert after == before.replace("the ear opens in the oven.\n", f"the ear opens in the oven. {link}\n", 1), after


def sweep_reading_of_text(tmp_path, text: str) -> dict:
    path = tmp_path / "before.org"
    path.write_text(text)
    return sweep_reading(path, 1)
