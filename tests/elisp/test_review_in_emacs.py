"""What a reviewer met on a first day in Emacs: ``emacs -nw`` in tmux with the README's own
configuration, the real daemon and the fake Ollama (as tests/elisp/test_walkthrough.py
runs them).

- ``C-c o u`` on a heading without an ID names the node it summarizes (it named the
  heading); on an unsaved note, or a buffer that is not Org, it refuses and the summaries
  buffer gains no ``[Failed: not a note]`` entry.
- ``C-c o s`` pressed twice beside org-roam's buffer in a plain window (``M-x
  org-roam-buffer-toggle``) keeps one similar-notes window (the second press added one).
- ``C-c o M`` on a region under a heading with a statistics cookie, a link, a TODO
  keyword, a priority and tags writes a ``:SOURCE:`` link that ``C-c C-o`` opens (it said
  "No match").
- ``C-c o P`` before the first heading tags the file in ``#+filetags`` (it showed Org's
  "Before first headline" error).
- A wrong ``arcology-oracle-url`` (here the fake Ollama's) says that no daemon answers
  there (it showed "404: Not Found (HTTP 404)").
"""

from __future__ import annotations

import json

import pytest

from tests.elisp.walkthrough import Walk
from tests.elisp.walkthrough_driver import SIMILAR, SUMMARY, Driver, readme_emacs
from tests.emacs_batch import require_packages

# How many similar-notes requests were made (each C-c o s makes one).
GENERATION = "(if (boundp 'arcology-oracle--similar-generation) arcology-oracle--similar-generation 0)"
FANCY = "fancy.org"
FANCY_TEXT = (
    "#+title: Kitchen Projects\n\n"
    "Things to do in the kitchen.\n\n"
    "* TODO [#A] Feed the [[id:612f2887-9442-410d-b965-d901189a423b][starter]] before baking [1/3] :baking:urgent:\n"
    "- [X] weigh the rye flour\n- [ ] warm the water\n- [ ] stir it in\n"
    "* TODO [#B] Clean the jar [1/2] :home:\n- [X] soak\n- [ ] scrub\n"
)


async def _started(tmp_path, roam_dir, fake_ollama) -> tuple[Driver, object]:
    daemon, emacs, _ = await readme_emacs(tmp_path, roam_dir, fake_ollama)
    driver = Driver(emacs, Walk(emacs, {}), roam_dir, fake_ollama, tmp_path, daemon)
    await emacs.start({"WALK_SERVER_DIR": str(emacs.server_socket.parent)})
    await emacs.wait_text("*scratch*", timeout=20)
    return driver, daemon


async def _no_errors(driver: Driver, *allowed: str) -> None:
    """No command signalled an error, and *Messages* shows none, but the refusals ALLOWED."""
    errors = [e for e in await driver.walk.new_errors() if not any(a in e for a in allowed)]
    assert not errors, errors


@pytest.mark.timeout(180)
async def test_summary_names_its_node_and_a_refusal_adds_no_entry(tmp_path, roam_dir, fake_ollama):
    require_packages()
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama)
    emacs = driver.emacs
    try:
        await driver.open("sourdough-baking.org", "** Feeding schedule")
        await emacs.keys("C-c", "o", "u")
        await emacs.wait(lambda: _summaries(driver, 1), "the summary to finish", timeout=15)
        text = await driver.buffer_text(SUMMARY)
        assert text.startswith("* Summary of Starter maintenance\n"), text
        assert "[Starter maintenance]]" in text, text

        # An edit not saved yet: the daemon summarizes files as saved.
        await driver.open("inbox.org", "* Buy rye flour")
        await emacs.keys("C-e")
        await emacs.type(" and spelt")
        mark = await driver.mark()
        await emacs.keys("C-c", "o", "u")
        await driver.message("Save inbox.org first", since=mark)

        # A text file outside the notes: refused as the other commands refuse.
        await emacs.keys("C-x", "C-f")
        await emacs.wait_text("Find file:")
        await emacs.type(str(tmp_path / "shopping.txt"))
        await emacs.keys("Enter")
        await emacs.wait(lambda: _selected_is(driver, "shopping.txt"), "shopping.txt in the selected window")
        await emacs.type("rye, spelt")
        mark = await driver.mark()
        await emacs.keys("C-c", "o", "u")
        await driver.message("need an Org buffer", since=mark)

        text = await driver.buffer_text(SUMMARY)
        assert text.count("* Summary of") == 1 and "Failed" not in text, text
        await _no_errors(driver, "Save inbox.org first", "need an Org buffer")
    finally:
        await emacs.stop()
        daemon.stop()


async def _summaries(driver: Driver, count: int) -> bool:
    return (await driver.buffer_text(SUMMARY)).count("** Sources") >= count


async def _selected_is(driver: Driver, name: str) -> bool:
    return await driver.selected_buffer() == name


@pytest.mark.timeout(180)
async def test_similar_window_stays_one_beside_a_plain_org_roam_window(tmp_path, roam_dir, fake_ollama):
    require_packages()
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama)
    emacs = driver.emacs
    try:
        await driver.open("bread-hydration.org")
        await driver.mx("org-roam-buffer-toggle")
        await emacs.wait_screen(lambda s: "Backlinks" in s, "the org-roam buffer")
        roam = await driver.window_of("*org-roam*")
        assert roam is not None and roam["side"] is False, await driver.windows()
        for press in (1, 2):
            asked = int(await emacs.eval(GENERATION))
            await emacs.keys("C-c", "o", "s")
            await emacs.wait(lambda: _asked_since(driver, asked), f"press {press} to ask for the similar notes")
            await emacs.wait_screen(
                lambda s: "Similar to: Bread Hydration" in s and "Looking for" not in s,
                f"the list after press {press}",
            )
            windows = await driver.windows()
            assert [w["buffer"] for w in windows].count(SIMILAR) == 1, windows
            assert len(windows) == 3, windows
        await driver.note_stays_readable("bread-hydration.org")
        await _no_errors(driver)
    finally:
        await emacs.stop()
        daemon.stop()


async def _asked_since(driver: Driver, generation: int) -> bool:
    """A similar-notes request was made after GENERATION (the command ran)."""
    return int(await driver.emacs.eval(GENERATION)) > generation


@pytest.mark.timeout(180)
async def test_capture_source_opens_and_private_file_and_wrong_url(tmp_path, roam_dir, fake_ollama):
    require_packages()
    (roam_dir / FANCY).write_text(FANCY_TEXT)
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama)
    emacs = driver.emacs
    try:
        # C-c o M on a region under the heading with everything in it.
        await driver.open(FANCY, "- [X] weigh the rye flour")
        await emacs.keys("C-Space", "C-e")
        mark = await driver.mark()
        await emacs.keys("C-c", "o", "M")
        await driver.message("Remembered in", since=mark, timeout=20)
        captures = [
            p for p in driver.notes() if p.name != FANCY and "weigh the rye flour" in p.read_text(errors="replace")
        ]
        assert captures, "the capture is in no file"
        daily = captures[0].relative_to(roam_dir)
        source = next(line for line in captures[0].read_text().split("\n") if ":SOURCE:" in line)
        assert source.endswith("][Kitchen Projects › Feed the starter before baking]]"), source

        # C-c C-o on it (on its description, what the line shows) opens the heading.
        await driver.open(str(daily), ":SOURCE:")
        await emacs.keys("C-s")
        await emacs.type("Kitchen Projects")
        await emacs.keys("Enter")
        mark = await driver.mark()
        await emacs.keys("C-c", "C-o")
        await emacs.wait(lambda: _selected_is(driver, FANCY), "C-c C-o to open fancy.org")
        await emacs.wait(lambda: _point_on(driver, "* TODO [#A] Feed the"), "point on the heading")
        state = await emacs.state()
        assert "No match" not in "\n".join(state["messages"].split("\n")[mark:]), state["messages"]

        # C-c o P before the first heading: the file is tagged.
        await emacs.keys("M-<")
        await emacs.keys("C-c", "o", "P")
        await driver.message("Tagged the file :private:")
        assert await driver.buffer_text(FANCY) == FANCY_TEXT.replace(
            "#+title: Kitchen Projects\n", "#+title: Kitchen Projects\n#+filetags: :private:\n"
        )

        # A wrong URL: the fake Ollama answers, but it is not the daemon.
        await emacs.eval(f"(setq arcology-oracle-url {json.dumps(fake_ollama.url)})")
        await driver.open("sourdough-baking.org", "* Bulk fermentation")
        mark = await driver.mark()
        await emacs.keys("C-c", "o", "s")
        said = await driver.message("no arcology-oracle daemon at", since=mark)
        assert f"no arcology-oracle daemon at {fake_ollama.url} (it answered HTTP 404)" in said, said
        await emacs.wait(lambda: _similar_says(driver, "no arcology-oracle daemon at"), "the similar window to say")
        await _no_errors(driver)
    finally:
        await emacs.stop()
        daemon.stop()


async def _point_on(driver: Driver, text: str) -> bool:
    return (await driver.point_text()).startswith(text)


async def _similar_says(driver: Driver, text: str) -> bool:
    return text in await driver.buffer_text(SIMILAR)
