"""The keys of the similar notes and the link suggestions, in ``emacs -nw`` in tmux with
the README's own configuration, the real daemon and the fake Ollama (as
tests/elisp/test_firstday_refusals_in_emacs.py runs them).

- Right after ``i`` in a list, every key of Emacs's undo acts in the note, as ``C-/``
  (``undo``) does: ``C-x u``, ``C-_`` and, in Emacs 28, ``C-M-_`` (``undo-redo``; ``C-?``
  on a graphical display). ``undo-redo`` acted in the read-only list: "Buffer is
  read-only: #<buffer *arcology-oracle similar*>". (``undo-only``, which has no key, is
  remapped too; ``M-x`` calls a command without its remapping.)
- ``M-x undo``, ``M-x undo-redo`` and ``M-x undo-only`` there run Emacs's own commands on
  the list: they say "Buffer is read-only", change neither the list nor the note, and
  show no backtrace, even with ``debug-on-error``.
- In the answers buffer made editable (``e``, "to copy or rework an answer"), ``C-/``
  took the whole answer away: the package's own writing was undoable. Undo there undoes
  the user's edits only.
- The link suggestions are laid out again when their window's width changes, as the
  similar notes are: a narrower terminal cut them with ``$``.
"""

from __future__ import annotations

import pytest

from tests.elisp.test_firstday_lists_in_emacs import _links_shown
from tests.elisp.test_firstday_refusals_in_emacs import _started, _wait_similar
from tests.elisp.walkthrough_driver import ANSWERS, LINKS, SIMILAR, Driver

NOTE = "sourdough-baking.org"


async def _links(driver: Driver) -> int:
    return (await driver.buffer_text(NOTE)).count("[[id:")


async def _press(driver: Driver, keys: tuple[str, ...], links: int, what: str) -> None:
    """KEYS in the list; the note then holds LINKS links, and nothing went wrong."""
    emacs = driver.emacs
    errors = len((await emacs.state())["errors"])
    await emacs.keys(*keys)

    async def done() -> bool:
        state = await emacs.state()
        return await _links(driver) == links or len(state["errors"]) > errors

    try:
        await emacs.wait(done, what)
    except AssertionError as e:
        raise AssertionError(f"{e}: the note holds {await _links(driver)} links; echo: {await driver.echo()!r}") from None
    state = await emacs.state()
    assert state["errors"][errors:] == [], f"{what}: {state['errors'][errors:]}"
    assert await _links(driver) == links, what


@pytest.mark.timeout(180)
async def test_every_undo_key_in_a_list_acts_in_the_note(tmp_path, roam_dir, fake_ollama):
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama, columns=120, lines=40)
    emacs = driver.emacs
    try:
        await driver.open(NOTE, "* Bulk fermentation")
        before = await _links(driver)
        await emacs.keys("C-c", "o", "s")
        await _wait_similar(driver, "Bread Hydration", "the list")
        await driver.select(SIMILAR)
        listed = await driver.buffer_text(SIMILAR)
        # (The list opens on its first entry.)
        await _press(driver, ("i",), before + 1, "i: the link written")
        await _press(driver, ("C-_",), before, "C-_ (undo): the link out")
        await _press(driver, ("C-M-_",), before + 1, "C-M-_ (undo-redo): the link back")
        await _press(driver, ("C-x", "u"), before, "C-x u (undo): the link out")
        await _press(driver, ("C-M-_",), before + 1, "C-M-_ (undo-redo): the link back again")
        assert await driver.selected_buffer() == SIMILAR
        assert await driver.buffer_text(SIMILAR) == listed

        await emacs.eval("(setq debug-on-error t)")
        for command in ("undo", "undo-redo", "undo-only"):
            mark = await driver.mark()
            await driver.mx(command)
            said = await driver.message("read-only", since=mark)
            assert said == f"execute-extended-command: Buffer is read-only: #<buffer {SIMILAR}>", said
            assert await driver.buffer_text(SIMILAR) == listed, command
            assert await _links(driver) == before + 1, command
        assert await emacs.eval('(get-buffer "*Backtrace*")') == "nil"
        await emacs.eval("(setq debug-on-error nil)")

        await _edit_an_answer(driver)
    finally:
        await emacs.stop()
        daemon.stop()


async def _edit_an_answer(driver: Driver) -> None:
    """Ask, make the answers editable, undo: only what was typed there goes."""
    emacs = driver.emacs
    await driver.select(NOTE)
    await emacs.keys("C-c", "o", "a")
    await emacs.wait_text("Ask about this buffer:")
    await emacs.type("How long does bulk fermentation take?")
    await emacs.keys("Enter")
    await emacs.wait(lambda: driver._count_in(ANSWERS, "** Sources", 1), "the answer")
    answer = await driver.buffer_text(ANSWERS)
    await driver.select(ANSWERS)
    await emacs.keys("e")
    await emacs.wait_text("Editable now")
    await emacs.keys("M->")
    await emacs.type("Mine.")
    await emacs.wait(lambda: driver._count_in(ANSWERS, "Mine.", 1), "the typed text")
    for _ in range(3):  # the typing, then nothing more
        await emacs.keys("C-/")
    await emacs.wait(lambda: driver._text_lacks(ANSWERS, "Mine."), "undo to take the typing out")
    await emacs.wait_text("No further undo information")
    assert await driver.buffer_text(ANSWERS) == answer
    await emacs.keys("C-x", "C-q")


@pytest.mark.timeout(180)
async def test_the_link_suggestions_fit_their_window_again_when_it_is_resized(tmp_path, roam_dir, fake_ollama):
    """A terminal made narrower (or the window, ``C-x {``) left the suggestions as wide as
    the window was: Emacs cut them at the new edge with ``$``. They are laid out again, as
    the similar notes are."""
    driver, daemon = await _started(tmp_path, roam_dir, fake_ollama, columns=150, lines=40)
    emacs = driver.emacs
    try:
        await driver.open(NOTE, "* Bulk fermentation")
        await emacs.keys("C-c", "o", "l")
        await emacs.wait(lambda: _links_shown(driver), "the suggestions, shown and selected")
        wide = (await driver.window_of(LINKS))["width"]
        assert _widest(await driver.buffer_text(LINKS)) > 60, await driver.buffer_text(LINKS)
        await emacs.tmux("resize-window", "-t", "walk", "-x", "60")
        await emacs.wait(lambda: _narrower(driver, wide), "the window to narrow")
        narrow = (await driver.window_of(LINKS))["width"]
        last = [""]

        async def fits() -> bool:
            last[0] = await driver.buffer_text(LINKS)
            return _widest(last[0]) < narrow

        try:
            await emacs.wait(fits, f"every line of the suggestions within {narrow} columns")
        except AssertionError as e:
            raise AssertionError(f"{e}; the list was:\n{last[0]}") from None
        assert not (await emacs.state())["errors"]
    finally:
        await emacs.stop()
        daemon.stop()


def _widest(text: str) -> int:
    return max(len(line) for line in text.split("\n"))


async def _narrower(driver: Driver, width: int) -> bool:
    window = await driver.window_of(LINKS)
    return window is not None and window["width"] < width - 40
