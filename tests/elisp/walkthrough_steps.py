"""The steps of the first day in Emacs (tests/elisp/test_walkthrough.py runs them in
order): each does what a person does and checks what they see and what lands in the
files."""

from __future__ import annotations

import asyncio
import difflib
import json
import re

from tests.elisp.walkthrough_driver import (
    ANSWERS, BAKERS_ID, BREAD_ID, LINKS, QUESTION, SIMILAR, SUMMARY, Driver,
)  # fmt: skip
from tests.emacs_batch import REPO


class Flow(Driver):
    """The steps, sharing the Emacs, the daemon and the vault."""

    async def start(self) -> None:
        screen = await self.emacs.wait_text("*scratch*", timeout=20)
        state = await self.emacs.state()
        await self.walk.shot("Emacs after start-up", screen)
        assert not state["warnings"].strip(), f"*Warnings*:\n{state['warnings']}"
        assert "(file-missing" not in state["messages"] and "Error" not in state["messages"], state["messages"]
        assert await self.emacs.eval("(if (fboundp 'arcology-oracle-memorize) t nil)") == "t", (
            "M-x arcology-oracle-memorize is not there before the package is loaded"
        )

    async def start_fallback(self) -> None:
        """Load the package by hand, so the rest of the walk runs on a README that fails."""
        await self.emacs.eval(
            "(progn (add-to-list 'load-path {elisp}) (require 'arcology-oracle)"
            " (setq arcology-oracle-url {url}) (global-set-key (kbd \"C-c o\") arcology-oracle-command-map)"
            " (add-hook 'org-mode-hook #'arcology-oracle-similar-turn-on)"
            " (add-to-list 'org-roam-mode-sections #'arcology-oracle-similar-section t) t)".format(
                elisp=json.dumps(str(REPO / "elisp")), url=json.dumps(self.daemon.url)
            )
        )

    async def follow_point(self) -> None:
        await self.open("bread-hydration.org")
        await self.emacs.keys("C-c", "o", "s")
        await self.emacs.wait_screen(
            lambda s: "Similar to: Bread Hydration" in s and "Looking for" not in s, "the similar notes of the file"
        )
        await self.walk.shot("C-c o s: the side window lists the notes similar to the note")
        await self.goto("* Baker's percentages")
        screen = await self.emacs.wait_screen(
            lambda s: "Similar to: Baker's percentages" in s and "Looking for" not in s, "the list to follow point"
        )
        await self.walk.shot("Point on the heading Baker's percentages: the list follows", screen)

    async def unsaved_edit(self) -> None:
        """Typing into a heading without saving: the list is asked again at once by the
        heading's text, without the note itself, and only the edited heading goes to the
        embedder, in its outline, once: an unchanged heading of the same buffer costs no
        embedding, and coming back to the edited one no second. One undo leaves the file
        as it was, and the list is asked by the saved note again."""
        original = (self.roam / "bread-hydration.org").read_text(errors="replace")
        await self.emacs.keys("M-<")
        await self.goto("* Baker's percentages")
        self.fake.state.clear_records()
        await self.emacs.keys("C-e")
        await self.emacs.type(" for rye")
        screen = await self.emacs.wait_screen(
            lambda s: "Similar to: Baker's percentages for rye" in s and "Looking for" not in s, "the edited heading's list"
        )
        await self.walk.shot("Typing into the heading without saving: its list, by its text", screen)
        sent = self.fake.state.embedded_texts
        assert len(sent) == 1 and "Bread Hydration > Baker's percentages for rye" in sent[0], sent
        listed = (await self.buffer_text(SIMILAR)).split("\n", 1)[1]
        assert listed.strip() and "Bread Hydration" not in listed, f"the note itself is listed:\n{listed}"
        await self.goto("* High hydration doughs")
        screen = await self.emacs.wait_screen(
            lambda s: "Similar to: High hydration doughs" in s and "Looking for" not in s, "the list of the next heading"
        )
        await self.emacs.keys("M-<")
        await self.goto("* Baker's percentages for rye")
        await self.emacs.wait_screen(
            lambda s: "Similar to: Baker's percentages for rye" in s and "Looking for" not in s, "the edited heading again"
        )
        assert self.fake.state.embedded_texts == sent, "a heading was embedded again"
        await self.select("bread-hydration.org")
        await self.emacs.keys("C-x", "u")
        await self.emacs.wait(lambda: self._text_is("bread-hydration.org", original), "one undo to take the edit out")
        screen = await self.emacs.wait_screen(
            lambda s: "Similar to: Baker's percentages" in s and "for rye" not in s and "Looking for" not in s,
            "the list of the saved heading",
        )
        await self.walk.shot("One C-x u: the file as it was, the list of the saved note", screen)
        assert (self.roam / "bread-hydration.org").read_text(errors="replace") == original

    async def insert_from_heading(self) -> None:
        original = (self.roam / "bread-hydration.org").read_text(errors="replace")
        await self.emacs.keys("M-<")
        await self.goto("* Baker's percentages")
        await self.select(SIMILAR)  # point on the first entry, where the list opens
        entry = (await self.point_text()).strip()
        await self.emacs.keys("i")
        await self.message("Inserted")
        await self.walk.shot(f"i on {entry!r} with point at the start of the heading line")
        text = await self.buffer_text("bread-hydration.org")
        for tag, a, b, c, d in difflib.SequenceMatcher(None, original, text, autojunk=False).get_opcodes():
            assert tag in ("equal", "insert"), f"i changed the note's text ({tag} {original[a:b]!r} -> {text[c:d]!r})"
        added = [line for line in text.split("\n") if "[[id:" in line and line not in original.split("\n")]
        assert len(added) == 1, f"one line with the new link, not {added}"
        line = added[0]
        assert not re.match(r"\s*(\*+ |:|#\+|\|)", line), (
            f"the link went into a heading, drawer, keyword or table: {line!r}"
        )
        assert BREAD_ID not in line and BAKERS_ID not in line, f"the link points at the note itself: {line!r}"
        await self.select("bread-hydration.org")
        await self.emacs.keys("C-x", "u")
        await self.emacs.wait(
            lambda: self._text_is("bread-hydration.org", original), "one undo to take the link out", timeout=4
        )

    async def keys_in(self, buffer: str, name: str, *, reopen, entries: str | None = None):
        """n, p, g, RET and q in BUFFER: n and p move between entries, g asks again,
        none of them edits the buffer, RET visits the entry at point (the first after the
        line holding ENTRIES, if given), q hides the window."""
        if await self.window_of(buffer) is None:  # the step before failed: open it again
            await reopen()
            await self.emacs.wait(lambda: self.window_of(buffer), f"the {name} to open again")
        await self.select(buffer)
        await self.emacs.wait(lambda: self._text_lacks(buffer, "Looking for"), f"the {name} to be filled")
        before = await self.buffer_text(buffer)
        await self.emacs.keys("M-<")
        for key in ("n", "n", "p"):
            where = await self.where()
            mark = await self.mark()
            await self.emacs.keys(key)
            try:
                await self.emacs.wait(lambda: self._cursor_moved(where), f"{key} to move point", timeout=3)
            except AssertionError:
                # A list of one entry: the second n says so, and p has nowhere to go.
                await self.message("No more", since=mark, timeout=1)
                break
            finally:
                assert await self.buffer_text(buffer) == before, f"{key} edited the {name}"
        await self.walk.shot(f"n, n, p in the {name}")
        await self.emacs.keys("g")
        await self.emacs.wait(lambda: self._has_entries(buffer, before), f"g to list again in the {name}")
        await self.emacs.keys("M-<")
        if entries:
            await self.goto(entries)
        await self.emacs.keys("n", "Enter")
        await self.emacs.wait(lambda: self._selected_not(buffer), f"RET to visit the entry from the {name}")
        await self.walk.shot(f"RET in the {name}: the note at its heading")
        row = await self.point_text()
        assert row.startswith(("*", ":PROPERTIES:", "#+title")), f"RET did not land on a heading: {row!r}"
        await self.select(buffer)
        await self.emacs.keys("q")
        await self.emacs.wait(lambda: self._not_shown(buffer), f"q to hide the {name}")

    async def reopen_similar(self) -> None:
        await self.open("bread-hydration.org", "* Baker's percentages")
        await self.emacs.keys("C-c", "o", "s")

    async def reopen_answers(self) -> None:
        await self.open("inbox.org", "* Buy rye flour")
        await self.emacs.keys("C-c", "o", "a")
        await self.emacs.wait_text("Ask about this buffer:")
        await self.emacs.type(QUESTION)
        await self.emacs.keys("Enter")

    async def reopen_summary(self) -> None:
        await self.open("sourdough-baking.org", "* Starter maintenance")
        await self.emacs.keys("C-c", "o", "u")

    async def reopen_links(self) -> None:
        await self.open("sourdough-baking.org")
        await self.emacs.keys("C-c", "o", "l")

    async def reopen_roam(self) -> None:
        await self.open("sourdough-baking.org")
        await self.mx("org-roam-buffer-toggle")

    async def delete_other_windows(self) -> None:
        await self.reopen_similar()
        await self.emacs.wait(lambda: self.window_of(SIMILAR), "the side window")
        await self.select(SIMILAR)
        before = await self.windows()
        await self.emacs.keys("C-x", "1")
        await self.emacs.wait(lambda: self._changed(before), "C-x 1 to change the windows or say why not")
        # The screen follows Emacs's state a moment later (the list is laid out again for
        # the whole frame): the shot waits for the list alone, its header on the first line.
        await self.emacs.wait_screen(
            lambda s: s.split("\n")[1].startswith("Similar to:"), "the list alone in the frame"
        )
        await self.walk.shot("C-x 1 in the side window")

    async def ask(self) -> None:
        await self.open("inbox.org", "* Buy rye flour")
        self.fake.state.first_piece_sent.clear()
        self.fake.state.stream_gate = asyncio.Event()
        try:
            await self.emacs.keys("C-c", "o", "a")
            await self.emacs.wait_text("Ask about this buffer:")
            await self.emacs.type(QUESTION)
            await self.emacs.keys("Enter")
            await asyncio.wait_for(self.fake.state.first_piece_sent.wait(), 10)
            screen = await self.emacs.wait_screen(
                lambda s: f"* {QUESTION[:30]}" in s and "Sources" not in s,
                "the question's heading, the answer under way",
            )
            await self.walk.shot("C-c o a: the answer streams in", screen)
        finally:
            self.fake.state.release()
            self.fake.state.stream_gate = None
        screen = await self.emacs.wait_screen(lambda s: re.search(r"- \[\d+\] ", s), "the sources")
        await self.walk.shot("The answer, then its sources", screen)
        await self.note_stays_readable("inbox.org")
        labels = re.findall(r"- \[(\d+)\] ([^\n|$]+)", screen)
        assert labels, "no sources listed"
        n, label = next(((n, lab) for n, lab in labels if " › " in lab), labels[0])
        heading = label.strip().split(" › ")[-1]
        await self.select(ANSWERS)
        await self.emacs.keys("M-<")
        await self.goto(f"- [{n}] ")
        await self.emacs.keys("C-e", "C-b", "C-c", "C-o")
        await self.emacs.wait(lambda: self._selected_not(ANSWERS), "C-c C-o to open the source")
        row = await self.point_text()
        await self.walk.shot(f"C-c C-o on [{n}]: the source, at its heading ({heading})")
        if " › " in label:
            assert heading in row and row.lstrip().startswith("*"), f"the source opened at {row!r}, not at {heading!r}"
        else:
            assert row.startswith((":PROPERTIES:", "#+title")), f"the note opened at {row!r}, not at its start"

    async def summarize(self) -> None:
        await self.open("sourdough-baking.org", "* Starter maintenance")
        for count in (1, 2):
            await self.emacs.keys("C-c", "o", "u")
            await self.emacs.wait(
                lambda: self._count_in(SUMMARY, "Sources", count), f"summary {count} to finish", timeout=10
            )
            await self.walk.shot(f"C-c o u, {'once' if count == 1 else 'twice'}")
            await self.note_stays_readable("sourdough-baking.org")
        assert (await self.buffer_text(SUMMARY)).count("Summary of") == 2, "the second summary replaced the first"

    async def converse(self) -> None:
        await self.open("conversation.org")
        await self.emacs.type("* Sourdough :conversation:")
        await self.emacs.keys("Enter")
        await self.emacs.type("** Me")
        await self.emacs.keys("Enter")
        await self.emacs.type("How often should I feed a starter kept in the fridge?")
        await self.emacs.keys("C-x", "C-s")
        await self.emacs.wait(lambda: (self.roam / "conversation.org").exists(), "the conversation saved")
        await self.emacs.keys("C-c", "o", "c")
        screen = await self.emacs.wait_text("** Oracle")
        await self.walk.shot("C-c o c: the answer as the conversation's last heading", screen)
        assert "Oracle" in await self.point_text(), "point is not on the answer"
        await self.emacs.keys("C-x", "u")
        await self.emacs.wait(
            lambda: self._text_lacks("conversation.org", "ORACLE_MODEL"), "one undo to drop the answer"
        )
        await self.walk.shot("C-x u: the answer is gone")

    async def suggestions(self) -> None:
        await self.open("sourdough-baking.org")
        await self.emacs.keys("C-c", "o", "l")
        screen = await self.emacs.wait_screen(
            lambda s: "Links to add to:" in s and "Looking for" not in s, "the suggestions"
        )
        await self.walk.shot("C-c o l: links to add", screen)
        await self.note_stays_readable("sourdough-baking.org")
        await self.select(LINKS)
        await self.emacs.keys("M-<", "n")
        title = _entry_title(await self.point_text())
        assert title, "no suggestion to insert"
        await self.emacs.keys("i")
        await self.emacs.wait(lambda: self._text_lacks_not("sourdough-baking.org", "[[id:"), "i to insert")
        await self.emacs.keys("g")
        await self.emacs.wait(lambda: self._has_entries(LINKS, "Links to add to:"), "g to list again")
        await self.walk.shot(f"i on {title!r}, then g: it is not offered again")
        assert not await self._listed(title), f"{title!r} is offered again after i:\n{await self.buffer_text(LINKS)}"
        await self.select(LINKS)
        await self.emacs.keys("M-<", "n")
        rejected = _entry_title(await self.point_text())
        await self.emacs.keys("x")
        await self.emacs.wait(lambda: self._rejected(1), "x to reject")
        said = await self.message("Rejected")
        await self.walk.shot(f"x on {rejected!r}: rejected, and how to take it back")
        assert re.search(r"undo|back", said, re.I), f"x does not say how to undo it: {said!r}"
        await self.emacs.keys("u")
        await self.emacs.wait(lambda: self._rejected(0, exactly=True), "u to take the rejection back")
        await self.emacs.wait(lambda: self._listed(rejected), f"{rejected!r} listed again")
        await self.walk.shot(f"u: {rejected!r} is back")

    async def _listed(self, title: str) -> bool:
        text = await self.buffer_text(LINKS)
        return "Looking for" not in text and any(_entry_title(line) == title for line in text.split("\n"))

    async def _text_lacks_not(self, buffer: str, text: str) -> bool:
        saved = (self.roam / "sourdough-baking.org").read_text(errors="replace")
        return (await self.buffer_text(buffer)).count(text) > saved.count(text)

    async def _rejected(self, count: int, *, exactly: bool = False) -> bool:
        have = len(await self.rejections())
        return have == count if exactly else have >= count

    async def memorize_up(self) -> None:
        await self.open("sourdough-baking.org", "Discard all but a spoonful")
        await self.emacs.keys("C-Space", "C-e")
        await self.mx("arcology-oracle-memorize")
        await self.message("Remembered in", timeout=20)  # the daemon indexes it first
        screen = await self.emacs.screen()
        await self.walk.shot("M-x arcology-oracle-memorize on a region", screen)
        captures = [p for p in self.notes() if "Discard all but a spoonful" in p.read_text(errors="replace")]
        captures = [p for p in captures if p.name != "sourdough-baking.org"]
        assert captures, "the capture is in no file"
        rel = captures[0].relative_to(self.roam)
        assert rel.parts[0] == "journal", f"captured into {rel}, not into the dailies (journal/)"
        text = captures[0].read_text(errors="replace")
        assert any(m in text for m in ("SOURCE", "612f2887", "sourdough-baking.org")), (
            f"the capture has no link back to its heading:\n{text}"
        )
        assert "[[id:" in (await self.emacs.state())["kill"], "the new link is not on the kill ring"
        self.captured = captures[0]

    async def forget_it(self) -> None:
        """C-c o K takes the capture back: it asks, then the daily note holds every line
        it held but the capture's (or is gone, when the daemon had made it for the capture)."""
        daily = self.captured
        text = daily.read_text(errors="replace")
        start = text.index("* Discard all but a spoonful") if "* Discard all but a spoonful" in text else None
        await self.emacs.keys("C-c", "o", "K")
        screen = await self.emacs.wait_screen(lambda s: "Forget \"" in s and "(yes or no)" in s, "the question")
        await self.walk.shot("C-c o K: forget the capture just made?", screen)
        await self.emacs.type("yes")
        await self.emacs.keys("Enter")
        said = await self.message("Forgot", timeout=20)
        await self.walk.shot("yes: the capture is gone from the daily note")
        await self.emacs.wait(lambda: _lacks(daily, "Discard all but a spoonful"), "the capture gone from the file")
        # The note the daemon made for this capture alone goes with it; else one undo there
        # brings the capture back.
        assert ("is gone, it held only this capture" in said) if not daily.exists() else ("brings them back" in said), said
        errors = await self.walk.new_errors()
        assert not errors, f"errors after the forget: {errors}"
        if daily.exists():
            kept = daily.read_text(errors="replace")
            assert start is not None and kept == text[:start].rstrip("\n") + "\n" or kept == text[:start], (
                f"forget changed more than the capture:\n{kept}"
            )

    async def daemon_down(self) -> None:
        self.daemon.stop()
        await self.open("bread-hydration.org", "* High hydration doughs")
        await self.emacs.keys("C-c", "o", "s")
        screen = await self.emacs.wait_screen(
            lambda s: "Similar to: High hydration doughs" in s and "Looking for" not in s, "the side window to say"
        )
        await self.walk.shot("The daemon stopped: the side window says so", screen)
        mark = await self.mark()
        await self.mx("arcology-oracle-memorize")
        await self.emacs.wait_text("Remember:")
        await self.emacs.type("Buy a banneton for the overnight proof")
        await self.emacs.keys("Enter")
        await self.message("arcology-oracle", since=mark, timeout=20)
        await self.walk.shot("M-x arcology-oracle-memorize with the daemon down")
        self.memory_on_kill_ring = "Buy a banneton" in (await self.emacs.state())["kill"]

    async def daemon_back(self) -> None:
        await self.restart_daemon()
        await self.select(SIMILAR)
        await self.emacs.keys("g")
        screen = await self.emacs.wait_screen(
            lambda s: "Similar to: High hydration doughs" in s and re.search(r"\d\.\d\d", s), "the list back"
        )
        await self.walk.shot("The daemon back: g in the side window", screen)
        if not self.memory_on_kill_ring:
            await self.emacs.wait(
                lambda: any("Buy a banneton" in p.read_text(errors="replace") for p in self.notes()),
                "the text typed while the daemon was down (neither on the kill ring nor sent now)", timeout=8,
            )  # fmt: skip

    async def _saved(self, buffer: str) -> bool:
        return await self.emacs.eval(f"(buffer-modified-p (get-buffer {json.dumps(buffer)}))") == "nil"

    async def same_scores(self) -> None:
        """The side window and the org-roam section, both about the note Sourdough
        Baking, give a note listed in both the same score."""
        side = _side_scores(await self.buffer_text(SIMILAR))
        section = _section_scores(await self.buffer_text("*org-roam*"))
        assert side and section, f"nothing to compare: {side} {section}"
        apart = {t: (side[t], section[t]) for t in side.keys() & section.keys() if abs(side[t] - section[t]) > 0.05}
        assert not apart, f"scores (side window, org-roam section) that differ: {apart}"

    async def roam_buffer(self) -> None:
        await self.open("sourdough-baking.org")
        # Saved (the link inserted from the suggestions), so that the side window asks by
        # file and line, as the org-roam section asks by node.
        await self.emacs.keys("C-x", "C-s")
        await self.emacs.wait(lambda: self._saved("sourdough-baking.org"), "the note saved")
        await self.emacs.keys("C-c", "o", "s")
        await self.emacs.wait_screen(
            lambda s: "Similar to: Sourdough Baking" in s and "Looking for" not in s, "the side window"
        )
        await self.mx("org-roam-buffer-toggle")
        screen = await self.emacs.wait_screen(
            lambda s: "Backlinks" in s and "Similar notes" in s and "Looking for similar notes" not in s,
            "the org-roam buffer with its similar notes",
        )
        await self.walk.shot("M-x org-roam-buffer-toggle beside the similar notes", screen)
        await self.note_stays_readable("sourdough-baking.org")

    async def user_errors(self) -> None:
        """A command refused (gptel missing, no answer in *scratch*) says so in
        *Messages* as the echo area does, not after the name of a special form ("if:")."""
        await self.select_main("*scratch*")
        said = []
        gptel = await self.emacs.eval("(if (locate-library \"gptel\") t nil)") == "t"
        tries = [] if gptel else [("arcology-oracle-gptel-add-tools", "Install gptel")]
        for command, text in [*tries, ("arcology-oracle-discard", "Discarding an answer needs an Org buffer")]:
            mark = await self.mark()
            await self.mx(command)
            said.append(await self.message(text, since=mark))
        await self.walk.shot("M-x " + " and M-x ".join(c for c, _ in [*tries, ("arcology-oracle-discard", "")]))
        errors = await self.walk.new_errors()  # the refusals are this step's point
        assert len(errors) == len(said), f"errors other than the refusals: {errors}"
        for line, (_, text) in zip(said, [*tries, ("", "Discarding an answer needs an Org buffer")]):
            assert line.startswith(text), f"*Messages* names something before the message: {line!r}"
        for error in errors:
            assert not re.match(r"[-\w]+: ", error), f"the error names its signaller: {error!r}"

    async def select_main(self, buffer: str) -> None:
        """Show BUFFER in the selected window, one that is not a side window."""
        await self.emacs.eval(
            "(progn (select-window (seq-find (lambda (w) (not (window-parameter w 'window-side)))"
            f" (window-list) (selected-window))) (switch-to-buffer {json.dumps(buffer)}) t)"
        )


# An entry's first line: score then title (or title then score), then its marks, if any.
_SCORED = re.compile(
    r"^\s*(?:(?P<a>\d\.\d\d)\s+(?P<t1>.+?)|(?P<t2>.+?)\s+(?P<b>\d\.\d\d))"
    r"(?:\s+(?:linked(?: both ways)?|links here))?(?:\s+weak)?\s*$"
)


def _scored(line: str) -> tuple[str, float] | None:
    """(title, score) of an entry's first line, score first or last, else None."""
    m = _SCORED.match(line)
    return (m["t1"] or m["t2"], float(m["a"] or m["b"])) if m else None


def _side_scores(text: str) -> dict[str, float]:
    """Title -> score of the whole notes (not headings) in the side window's text."""
    lines = text.split("\n")
    pairs = [(_scored(first), second.strip()) for first, second in zip(lines, lines[1:])]
    return {e[0]: e[1] for e, second in pairs if e and second in (e[0], "")} | {
        e[0]: e[1] for e, second in pairs if e and second.endswith(".org")
    }


def _section_scores(text: str) -> dict[str, float]:
    """Title -> score of the whole notes (no outline path) in the org-roam section."""
    entries = (_scored(line) for line in text.split("Similar notes", 1)[-1].split("\n"))
    return {e[0]: e[1] for e in entries if e and "(" not in e[0]}


async def _lacks(path, text: str) -> bool:
    """Whether the file at PATH is gone or holds no TEXT."""
    return not path.exists() or text not in path.read_text(errors="replace")


def _entry_title(line: str) -> str:
    """The title on the first line of an entry, without its score."""
    entry = _scored(line)
    return entry[0] if entry else ""
