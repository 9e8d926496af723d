"""What a newcomer met on a first day in Emacs, second round: ``emacs -nw`` in tmux with
the README's own configuration, the real daemon and the fake Ollama (as
tests/elisp/test_walkthrough.py runs them).

- ``C-x C-f`` a new note in the roam directory, with the similar notes shown: the list
  said the daemon's "no indexed heading at new.org:1 (HTTP 404)" (a file never saved was
  asked about by file and line), and once emptied again "text: String should have at
  least 1 character (HTTP 400)". A new note is asked about by its text; an empty one is
  not asked about.
- In a private note (``#+filetags: :private:``), ``C-c o u``, ``C-c o l`` and the
  org-roam buffer's section said "no node with ID '...' in the index (HTTP 404)" (the
  private note's ID on screen) or "Diary is not in the daemon's index (yet): save the
  note, then g asks again". They say that the note is private.
- ``C-c o a`` or ``C-c o u`` while the model loads (the daemon says nothing before its
  first words): the answers buffer showed the question and nothing else, for as long as
  it took. It says the answer is awaited and how to stop it, until the answer comes
  (tests/elisp/test_ask_progress_in_emacs.py: a question says how many notes were found).
"""

from __future__ import annotations

import pytest

from tests.elisp.walkthrough import Walk
from tests.elisp.walkthrough_driver import ANSWERS, LINKS, SIMILAR, SUMMARY, Driver, readme_emacs
from tests.emacs_batch import require_packages

DIARY_ID = "d459580b-4a76-4bdc-b2cb-36b33a2c8f0f"  # examples/roam/private-diary.org


async def _started(tmp_path, roam_dir, fake_ollama, columns: int = 80, lines: int = 24) -> tuple[Driver, object]:
    daemon, emacs, _ = await readme_emacs(tmp_path, roam_dir, fake_ollama)
    emacs.columns, emacs.lines = columns, lines
    driver = Driver(emacs, Walk(emacs, {}), roam_dir, fake_ollama, tmp_path, daemon)
    await emacs.start({"WALK_SERVER_DIR": str(emacs.server_socket.parent)})
    await emacs.wait_text("*scratch*", timeout=20)
    return driver, daemon


async def _wait_similar(driver: Driver, text: str, what: str) -> None:
    """Wait until the similar-notes list, answered, holds TEXT (its lines are wrapped to
    the window: read as one); the failure shows it."""
    last = [""]

    async def shown() -> bool:
        last[0] = " ".join((await driver.buffer_text(SIMILAR)).split())
        return "Looking for" not in last[0] and "Asking about" not in last[0] and text in last[0]

    try:
        await driver.emacs.wait(shown, what)
    except AssertionError as e:
        raise AssertionError(f"{e}; the list was:\n{last[0]}") from None


@pytest.mark.timeout(180)
async def test_a_new_note_is_asked_about_by_its_text(tmp_path, roam_dir, fake_ollama):
    require_packages()
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama)
    emacs = driver.emacs
    try:
        await driver.open("rye-bread.org")  # a new file: "(New file)"
        await emacs.keys("C-c", "o", "s")
        await _wait_similar(driver, "Nothing to compare yet", "the empty note's list")

        await emacs.type("* Rye bread")
        await emacs.keys("Enter")
        await emacs.type("Rye flour and a sluggish starter need a warm kitchen.")
        await emacs.keys("C-c", "o", "s")
        await _wait_similar(driver, "Starter maintenance", "the new note's list")

        await emacs.keys("C-x", "h", "C-w")  # all of it gone again
        await emacs.keys("C-c", "o", "s")
        await _wait_similar(driver, "Nothing to compare yet", "the emptied list")

        state = await emacs.state()
        assert "HTTP 40" not in state["messages"], state["messages"]
        assert not (roam_dir / "rye-bread.org").exists()  # nothing written
        assert not state["errors"], state["errors"]
    finally:
        await emacs.stop()
        daemon.stop()


@pytest.mark.timeout(180)
async def test_a_private_note_is_refused_as_private(tmp_path, roam_dir, fake_ollama):
    require_packages()
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama)
    emacs = driver.emacs
    try:
        await driver.open("private-diary.org", "privatefiletag again")
        mark = await driver.mark()
        await emacs.keys("C-c", "o", "u")
        said = await driver.message("Diary is private", since=mark)
        assert said.endswith("nothing is summarized"), said
        await emacs.keys("C-c", "o", "l")
        said = await driver.message("no link suggestions for it", since=mark)
        assert said.startswith("Diary is private"), said

        await driver.mx("org-roam-buffer-toggle")
        await emacs.wait_text("This note is private")
        roam_buffer = await driver.buffer_text("*org-roam*")
        assert DIARY_ID not in roam_buffer and "HTTP" not in roam_buffer, roam_buffer

        state = await emacs.state()
        after = "\n".join(state["messages"].split("\n")[mark:])
        assert DIARY_ID not in after and "HTTP 404" not in after and "save the note" not in after, after
        assert "Summary of" not in await driver.buffer_text(SUMMARY)
        assert await driver.window_of(LINKS) is None, await driver.windows()
        assert [e for e in state["errors"] if "is private" not in e] == [], state["errors"]
    finally:
        await emacs.stop()
        daemon.stop()


@pytest.mark.timeout(180)
async def test_an_answer_awaited_says_so_until_it_comes(tmp_path, roam_dir, fake_ollama):
    require_packages()
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama)
    emacs = driver.emacs
    waiting = "Waiting for the answer… (C-c C-k stops it)"
    try:
        await driver.open("sourdough-baking.org", "** Feeding schedule")
        fake_ollama.state.fault_paths = {"/api/chat"}
        fake_ollama.state.hang = True  # a model still loading: the daemon says nothing yet
        for key in ("a", "u"):
            if key == "a":
                await emacs.keys("C-c", "o", "a")
                await emacs.wait_text("Ask about this buffer:")
                await emacs.type("How often do I feed it?")
                await emacs.keys("Enter")
            else:
                await emacs.keys("C-c", "o", "u")
            # The question's notes are found at once (/ask with progress), the summary's not asked for.
            says = "waiting for the model… (C-c C-k stops it)" if key == "a" else waiting
            await emacs.wait_text(says)
            await emacs.keys("C-c", "o", "k")
            screen = await emacs.wait_text("[Stopped]")
            assert says not in screen, screen
        assert (await driver.buffer_text(ANSWERS)) == "* How often do I feed it?\n[Stopped]\n"

        fake_ollama.state.hang = False
        await emacs.keys("C-c", "o", "a")
        await emacs.wait_text("Ask about this buffer:")
        await emacs.type("And in summer?")
        await emacs.keys("Enter")
        await emacs.wait(lambda: _count_in(driver, ANSWERS, "** Sources", 1), "the answer")
        screen = await emacs.screen()
        assert waiting not in screen, screen
        assert not (await emacs.state())["errors"]
    finally:
        await emacs.stop()
        daemon.stop()


async def _count_in(driver: Driver, buffer: str, text: str, count: int) -> bool:
    return (await driver.buffer_text(buffer)).count(text) >= count


@pytest.mark.timeout(180)
async def test_summary_and_links_in_the_answers_buffer_point_to_its_note(tmp_path, roam_dir, fake_ollama):
    """``C-c o u`` or ``C-c o l`` in the answers buffer said "Save *arcology-oracle answers*
    among your notes first (C-x C-w): it has no file, ...": advice to write the answers
    into a note file. The buffer is not a note: the refusal says so and how to go back to
    the note an answer was asked about, and nothing is written."""
    require_packages()
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama)
    emacs = driver.emacs
    try:
        await driver.open("sourdough-baking.org", "* Starter maintenance")
        await driver.ask("How do I revive it?")
        await emacs.wait(lambda: _count_in(driver, ANSWERS, "** Sources", 1), "the answer", timeout=20)
        await driver.select(ANSWERS)
        refusal = "*arcology-oracle answers* holds answers, not a note: RET on one goes back to its note"
        for key, logged in (("u", refusal), ("l", f"{refusal} [2 times]")):
            mark = await driver.mark()
            await emacs.keys("C-c", "o", key)
            # The same refusal again is counted on its line in *Messages*, as Emacs's `message' does.
            said = await driver.message(logged, since=mark - (logged != refusal))
            assert said.endswith(logged), said
            assert "C-x C-w" not in said, said
        assert await driver.selected_buffer() == ANSWERS
        assert "Summary of" not in await driver.buffer_text(SUMMARY)
        assert await driver.window_of(LINKS) is None, await driver.windows()
    finally:
        await emacs.stop()
        daemon.stop()
