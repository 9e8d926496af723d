"""The first day in Emacs, as a person lives it: ``emacs -nw`` in tmux with the README's
own configuration, a copy of examples/roam, Debian's org-roam, the real daemon and the
fake Ollama. Keys go in with ``tmux send-keys``; the test reads the screen
(``tmux capture-pane``) and the files, and fails on any error a command signals or
``*Messages*`` shows.

Every step runs even when an earlier one failed (see tests/elisp/walkthrough.py), and
the failure lists them all. ``ARCOLOGY_ORACLE_WRITE_WALKTHROUGH=1`` rewrites
WALKTHROUGH.org from this run's screens; otherwise the run only checks that it exists.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import re
from pathlib import Path

import aiohttp
import pytest

from tests.elisp.walkthrough import Walk, write_document
from tests.emacs_batch import REPO, WITH_PACKAGES, emacs_env, require_packages, run_emacs
from tests.runners import Daemon, spawn_daemon, start_daemon, wait_indexed
from tests.tmux_emacs import HARNESS, TmuxEmacs, readme_emacs_config

# Read at import: the suite's autouse fixture clears ARCOLOGY_ORACLE_* before each test.
WRITE = os.environ.get("ARCOLOGY_ORACLE_WRITE_WALKTHROUGH") == "1"
WALKTHROUGH = REPO / "WALKTHROUGH.org"
TOKEN = "walkthrough-token"
BREAD_ID = "36fb47dd-e96a-4b44-80ce-b246a771f11d"
BAKERS_ID = "8d1398ec-2d9c-407d-98e9-ceb8407aa740"
SIMILAR = "*arcology-oracle similar*"
LINKS = "*arcology-oracle links*"
ANSWERS = "*arcology-oracle answers*"
SUMMARY = "*arcology-oracle summary*"
QUESTION = "What do I do when my starter is sluggish and does not rise?"

# What a user of org-roam has before reading the README (the example vault keeps its
# dailies in journal/).
USER_SETUP = """
(setq inhibit-startup-screen t)
(require 'org-roam)
(setq org-roam-directory {roam}
      org-roam-db-location {db}
      org-roam-dailies-directory "journal/")
(org-roam-db-autosync-mode)
"""

ROAM_SYNC = """(progn (require 'org-roam) (setq org-roam-directory {roam} org-roam-db-location {db})
 (org-roam-db-sync))"""

INTRO = """#+title: Walkthrough: the first day in Emacs

What you see on the first day, screen by screen: Emacs 28 in a terminal (160 x 45), the
configuration of README.org's "Emacs" section pasted as it is, a copy of =examples/roam=
and the daemon. The screens are from one run of =tests/elisp/test_walkthrough.py= (the
model is the suite's fake, so answers quote their sources instead of saying something
clever); =ARCOLOGY_ORACLE_WRITE_WALKTHROUGH=1 pytest tests/elisp/test_walkthrough.py=
writes this file again.
"""


class Flow:
    """The steps, sharing the Emacs, the daemon and the vault."""

    def __init__(self, emacs: TmuxEmacs, walk: Walk, roam: Path, fake, tmp_path: Path, daemon: Daemon):
        self.emacs, self.walk, self.roam, self.fake, self.tmp = emacs, walk, roam, fake, tmp_path
        self.daemon = daemon
        self.port = int(daemon.url.rsplit(":", 1)[1])
        self.memory_on_kill_ring = False

    # ---------------------------------------------------------------- helpers

    async def buffer_text(self, name: str) -> str:
        target = self.tmp / "buffer.txt"
        await self.emacs.eval(f"(walk-write-buffer {json.dumps(name)} {json.dumps(str(target))})")
        return target.read_text(errors="replace")

    async def windows(self) -> list[dict]:
        return (await self.emacs.state())["windows"]

    async def point_text(self) -> str:
        """The line of point in the selected window."""
        return next(w["point_text"] for w in await self.windows() if w["selected"])

    async def selected_buffer(self) -> str:
        return next(w["buffer"] for w in await self.windows() if w["selected"])

    async def select(self, buffer: str) -> None:
        """``C-x o`` until the window of BUFFER is selected."""
        for _ in range(5):
            if await self.selected_buffer() == buffer:
                return
            await self.emacs.keys("C-x", "o")
            await self.emacs.wait(lambda: True, "C-x o")
        raise AssertionError(f"no window shows {buffer}: {await self.windows()}")

    async def open(self, rel: str, search: str | None = None) -> None:
        """Visit ROAM/REL with C-x C-f; with SEARCH, put point at the start of its line."""
        await self.emacs.keys("C-x", "C-f")
        await self.emacs.wait_text("Find file:")
        await self.emacs.type(str(self.roam / rel))
        await self.emacs.keys("Enter")
        name = Path(rel).name
        await self.emacs.wait(
            lambda: self._selected_is(name), f"{name} in the selected window", timeout=8
        )
        await self.emacs.keys("M-<")
        if search:
            await self.goto(search)

    async def _selected_is(self, name: str) -> bool:
        return await self.selected_buffer() == name

    async def goto(self, text: str) -> None:
        await self.emacs.keys("C-s")
        await self.emacs.type(text)
        await self.emacs.keys("Enter", "C-a")
        await self.emacs.wait(lambda: self._cursor_has(text), f"point on {text!r}")

    async def _cursor_has(self, text: str) -> bool:
        return text in await self.point_text()

    async def mx(self, command: str) -> None:
        await self.emacs.keys("M-x")
        await self.emacs.wait_screen(lambda s: s.rstrip().endswith("M-x"), "the M-x prompt")
        await self.emacs.type(command)
        await self.emacs.keys("Enter")

    async def mark(self) -> int:
        """Where *Messages* ends now, for :meth:`message`."""
        return len((await self.emacs.state())["messages"].split("\n")) - 1

    async def message(self, text: str, *, since: int | None = None, timeout: float = 8.0) -> str:
        """Wait for a message containing TEXT in the echo area (as *Messages* keeps it:
        the screen may show a key hint over it) since the step began, or line SINCE of
        *Messages*; return that line."""
        start = self.walk.messages_seen if since is None else since

        async def said():
            lines = (await self.emacs.state())["messages"].split("\n")[start:]
            return next((line for line in reversed(lines) if text in line), None)

        return await self.emacs.wait(said, f"the message {text!r}", timeout=timeout)

    async def echo(self) -> str:
        """The echo area: the screen's last line."""
        return (await self.emacs.screen()).rstrip("\n").split("\n")[-1]

    async def recover(self) -> None:
        """After a failed step: quit whatever is going on and keep one window."""
        await self.emacs.keys("C-g", "C-g", "C-g")
        await self.emacs.eval(
            "(progn (select-window (seq-find (lambda (w) (not (window-parameter w 'window-side)))"
            " (window-list) (selected-window)))"
            " (let ((ignore-window-parameters t)) (delete-other-windows))"
            " (switch-to-buffer \"*scratch*\") t)"
        )

    async def window_of(self, name: str) -> dict | None:
        return next((w for w in await self.windows() if w["buffer"] == name), None)

    async def note_stays_readable(self, name: str) -> None:
        """The note's window is still on screen, at least half the frame wide."""
        state = await self.emacs.state()
        note = next((w for w in state["windows"] if w["buffer"] == name), None)
        assert note is not None, f"the note {name} left the frame: {state['windows']}"
        assert note["width"] >= state["frame_width"] // 2, f"the note {name} is squeezed: {state['windows']}"

    async def restart_daemon(self) -> None:
        self.daemon = spawn_daemon(
            roam_dir=self.roam, db_path=self.tmp / "daemon.sqlite3", ollama_url=self.fake.url,
            log_path=self.tmp / "daemon-restarted.log", port=self.port, token=TOKEN,
            env={"ARCOLOGY_ORACLE_DEBOUNCE_SECONDS": "0.1", "ARCOLOGY_ORACLE_RETRY_MAX_SECONDS": "0.5"},
        )  # fmt: skip
        await self.emacs.wait(self._healthy, "the daemon to answer again", timeout=30)
        await wait_indexed(self.daemon, timeout=30)

    async def _healthy(self) -> bool:
        try:
            async with aiohttp.ClientSession() as session:
                async with session.get(self.daemon.url + "/health") as resp:
                    return resp.status == 200
        except aiohttp.ClientConnectionError:
            return False

    def notes(self) -> list[Path]:
        """The org files of the vault (not Emacs's lock files)."""
        return [p for p in self.roam.rglob("*.org") if not p.name.startswith(".#") and p.is_file()]

    async def rejections(self) -> list:
        async with aiohttp.ClientSession(headers=self.daemon.headers) as session:
            async with session.get(self.daemon.url + "/suggest-links/rejections") as resp:
                return (await resp.json())["rejections"]

    # ---------------------------------------------------------------- steps

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

    async def insert_from_heading(self) -> None:
        original = (self.roam / "bread-hydration.org").read_text(errors="replace")
        await self.emacs.wait(lambda: self._cursor_has("* Baker's percentages"), "point on the heading")
        await self.select(SIMILAR)
        await self.emacs.keys("n")
        entry = (await self.point_text()).strip()
        await self.emacs.keys("i")
        screen = await self.emacs.wait_screen(lambda s: "Inserted" in s.split("\n")[-2], "the message 'Inserted …'")
        await self.walk.shot(f"i on {entry!r} with point at the start of the heading line", screen)
        text = await self.buffer_text("bread-hydration.org")
        for tag, a, b, c, d in difflib.SequenceMatcher(None, original, text, autojunk=False).get_opcodes():
            assert tag in ("equal", "insert"), f"i changed the note's text ({tag} {original[a:b]!r} -> {text[c:d]!r})"
        added = [line for line in text.split("\n") if "[[id:" in line and line not in original.split("\n")]
        assert len(added) == 1, f"one line with the new link, not {added}"
        line = added[0]
        assert not re.match(r"\s*(\*+ |:|#\+|\|)", line), f"the link went into a heading, drawer, keyword or table: {line!r}"
        assert BREAD_ID not in line and BAKERS_ID not in line, f"the link points at the note itself: {line!r}"
        await self.select("bread-hydration.org")
        await self.emacs.keys("C-x", "u")
        await self.emacs.wait(
            lambda: self._text_is("bread-hydration.org", original), "one undo to take the link out", timeout=4
        )

    async def _text_is(self, buffer: str, text: str) -> bool:
        return await self.buffer_text(buffer) == text

    async def keys_in(self, buffer: str, name: str, *, entries: str | None = None):
        """n, p, g, RET and q in BUFFER: n and p move between entries, g asks again,
        none of them edits the buffer, RET visits the entry at point (the first after the
        line holding ENTRIES, if given), q hides the window."""
        if await self.window_of(buffer) is None:  # the step before failed: show what it left
            await self.emacs.eval(f"(progn (pop-to-buffer {json.dumps(buffer)}) t)")
        await self.select(buffer)
        await self.emacs.wait(lambda: self._text_lacks(buffer, "Looking for"), f"the {name} to be filled")
        before = await self.buffer_text(buffer)
        await self.emacs.keys("M-<")
        for key in ("n", "n", "p"):
            where = await self.emacs.cursor()
            await self.emacs.keys(key)
            await self.emacs.wait(lambda: self._cursor_moved(where), f"{key} to move the cursor")
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

    async def _cursor_moved(self, where: tuple[int, int]) -> bool:
        return await self.emacs.cursor() != where

    async def _selected_not(self, buffer: str) -> bool:
        return await self.selected_buffer() != buffer

    async def _not_shown(self, buffer: str) -> bool:
        return await self.window_of(buffer) is None

    async def _has_entries(self, buffer: str, before: str) -> bool:
        text = await self.buffer_text(buffer)
        return "Looking for" not in text and text.strip() != "" and text.startswith(before.split("\n")[0])

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
        screen = await self.emacs.wait_text("Sources")
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

    async def _count_in(self, buffer: str, text: str, count: int) -> bool:
        return (await self.buffer_text(buffer)).count(text) >= count

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

    async def _text_lacks(self, buffer: str, text: str) -> bool:
        return text not in await self.buffer_text(buffer)

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
        title = re.sub(r"\s+\d\.\d\d.*$", "", await self.point_text()).strip()
        assert title, "no suggestion to insert"
        await self.emacs.keys("i")
        await self.emacs.wait(lambda: self._text_lacks_not("sourdough-baking.org", "[[id:"), "i to insert")
        await self.emacs.keys("g")
        await self.emacs.wait(lambda: self._has_entries(LINKS, "Links to add to:"), "g to list again")
        await self.walk.shot(f"i on {title!r}, then g: it is not offered again")
        listed = [line for line in (await self.buffer_text(LINKS)).split("\n") if line.startswith(title + "  ")]
        assert not listed, f"{title!r} is offered again after i: {listed}"
        await self.select(LINKS)
        await self.emacs.keys("M-<", "n", "x")
        await self.emacs.wait(lambda: self._rejected(1), "x to reject")
        await self.message("Rejected")
        screen = await self.emacs.screen()
        await self.walk.shot("x: rejected, and how to undo it", screen)
        said = await self.message("Rejected")
        assert "undo" in said.lower(), f"x does not say how to undo it: {said!r}"
        commands = await self.emacs.eval(
            "(mapconcat #'symbol-name (apropos-internal \"^arcology-oracle-.*\\\\(unreject\\\\|rejections\\\\)\" #'commandp) \" \")"
        )
        assert commands.strip('"'), "no command lists or undoes rejections"

    async def _text_lacks_not(self, buffer: str, text: str) -> bool:
        return (await self.buffer_text(buffer)).count(text) > (self.roam / "sourdough-baking.org").read_text(errors="replace").count(text)

    async def _rejected(self, count: int) -> bool:
        return len(await self.rejections()) >= count

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

    async def roam_buffer(self) -> None:
        await self.open("sourdough-baking.org")
        await self.emacs.keys("C-c", "o", "s")
        await self.emacs.wait_text("Similar to: Sourdough Baking")
        await self.mx("org-roam-buffer-toggle")
        screen = await self.emacs.wait_screen(
            lambda s: "Backlinks" in s and "Similar notes" in s and "Looking for similar notes" not in s,
            "the org-roam buffer with its similar notes",
        )
        await self.walk.shot("M-x org-roam-buffer-toggle beside the similar notes", screen)
        await self.note_stays_readable("sourdough-baking.org")


def _replacements(tmp_path: Path, roam: Path, url: str) -> dict[str, str]:
    return {str(roam): "~/roam", str(tmp_path): "/tmp/walk", url: "http://127.0.0.1:7348", str(REPO): "~/src/arcology-oracle"}


@pytest.mark.timeout(300)
async def test_walkthrough(tmp_path, roam_dir, fake_ollama):
    """The first-day flow in an interactive Emacs; every failing step is listed."""
    require_packages()
    roam_db = tmp_path / "org-roam.db"
    # The user has used org-roam before: its database is built (beside the daemon's start).
    daemon, (code, output) = await asyncio.gather(
        start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, token=TOKEN, embedded=True),
        run_emacs(["--eval", WITH_PACKAGES, "--eval", ROAM_SYNC.format(roam=json.dumps(str(roam_dir)),
                                                                       db=json.dumps(str(roam_db)))],
                  env=emacs_env(tmp_path)),
    )  # fmt: skip
    assert code == 0, output
    home = tmp_path / "home"
    (home / ".emacs.d").mkdir(parents=True)
    port = daemon.url.rsplit(":", 1)[1]
    (home / ".authinfo").write_text(f"machine 127.0.0.1 port {port} password {TOKEN}\n")
    config, notes = readme_emacs_config(daemon.url)
    user = USER_SETUP.format(roam=json.dumps(str(roam_dir)), db=json.dumps(str(roam_db)))
    (home / ".emacs.d" / "init.el").write_text(
        f"(load {json.dumps(str(HARNESS))} nil t)\n{user}\n;; README.org: {'; '.join(notes)}\n{config}\n"
    )
    emacs = TmuxEmacs(tmp_path / "walk", home)
    walk = Walk(emacs, _replacements(tmp_path, roam_dir, daemon.url))
    flow = Flow(emacs, walk, roam_dir, fake_ollama, tmp_path, daemon)
    try:
        await emacs.start({"WALK_SERVER_DIR": str(emacs.server_socket.parent)})
        steps = [
            ("Start Emacs with the README's configuration",
             "The README's Emacs lines go into =~/.emacs.d/init.el= (with the checkout's path) after "
             "the user's own org-roam setup; Emacs starts without a warning.", flow.start, flow.start_fallback),
            ("Open a note: the side window follows point",
             "=C-x C-f bread-hydration.org=, =C-c o s=, then move to a heading.", flow.follow_point, flow.recover),
            ("i from a heading line",
             "Point at the start of =* Baker's percentages=; in the side window =n= then =i=: the link goes "
             "into the heading's body, not into the heading; one =C-x u= takes it out.",
             flow.insert_from_heading, flow.recover),
            ("RET, n, p, g, q in the similar notes",
             "", lambda: flow.keys_in(SIMILAR, "similar notes"), flow.recover),
            ("Ask, watch it stream, follow a source",
             "=C-c o a= in =inbox.org=; the answer streams into a window beside the note; "
             "=C-c C-o= on =[1]= opens that heading.", flow.ask, flow.recover),
            ("RET, n, p, g, q in the answers", "", lambda: flow.keys_in(ANSWERS, "answers"), flow.recover),
            ("Summarize twice", "=C-c o u= twice on =* Starter maintenance=: both summaries stay, the note too.",
             flow.summarize, flow.recover),
            ("RET, n, p, g, q in the summaries", "", lambda: flow.keys_in(SUMMARY, "summaries"), flow.recover),
            ("Converse", "A =:conversation:= heading with a =** Me= turn; =C-c o c= answers; =C-x u= drops it.",
             flow.converse, flow.recover),
            ("Link suggestions: i, g, x, undo",
             "=C-c o l=; =i= inserts the first suggestion, =g= lists again without it, =x= rejects one "
             "and says how to undo that.", flow.suggestions, flow.recover),
            ("RET, n, p, g, q in the suggestions", "", lambda: flow.keys_in(LINKS, "suggestions"), flow.recover),
            ("Memorize with the daemon up",
             "A region of =** Reviving a sluggish starter=, =M-x arcology-oracle-memorize=: it lands in the "
             "dailies (=journal/=) with a link back, and the new link is on the kill ring.",
             flow.memorize_up, flow.recover),
            ("The daemon stopped; memorize with it down",
             "The side window says the daemon is down (no Lisp error); what was typed for memorize is kept.",
             flow.daemon_down, flow.recover),
            ("The daemon back", "=g= in the side window lists again; nothing typed was lost.",
             flow.daemon_back, flow.recover),
            ("The org-roam buffer with the similar notes",
             "=M-x org-roam-buffer-toggle= with the side window open: backlinks and similar notes, the note "
             "still readable.", flow.roam_buffer, flow.recover),
            ("RET, n, p, g, q in the org-roam buffer", "", lambda: flow.keys_in("*org-roam*", "org-roam buffer", entries="Similar notes"),
             flow.recover),
        ]  # fmt: skip
        for title, text, body, recover in steps:
            await walk.step(title, text, body, recover)
        if WRITE:
            write_document(WALKTHROUGH, walk, INTRO)
    finally:
        await emacs.stop()
        flow.daemon.stop()
        daemon.stop()
    assert WALKTHROUGH.exists(), "WALKTHROUGH.org is missing: ARCOLOGY_ORACLE_WRITE_WALKTHROUGH=1 writes it"
    assert not walk.failures(), walk.report() + f"\n\n{len(walk.failures())} of {len(walk.steps)} steps failed"
