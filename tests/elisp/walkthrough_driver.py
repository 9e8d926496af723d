"""The walkthrough's driver: what a person does in Emacs (visit a file, search, switch
windows, M-x) as keys, and what they see, read from the screen or, where the screen
cannot show it, from the harness's state (see tests/tmux_emacs.py)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp

from tests.elisp.walkthrough import Walk
from tests.emacs_batch import require_packages
from tests.runners import Daemon, spawn_daemon, start_daemon, wait_indexed
from tests.tmux_emacs import HARNESS, TmuxEmacs, readme_emacs_config

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

# The test's, not the user's: every test's Emacs starts with an empty HOME, so with
# native compilation each one would compile what it loads (org-roam and its
# dependencies, and trampolines for the primitives org-roam advises) again, where a
# user's Emacs does it once and keeps the result. Byte code runs the same.
EARLY_INIT = """(with-no-warnings
  (setq native-comp-deferred-compilation nil native-comp-jit-compilation nil
        comp-enable-subr-trampolines nil native-comp-enable-subr-trampolines nil))
"""


async def readme_emacs(
    tmp_path: Path, roam_dir: Path, fake, env: dict[str, str] | None = None, *, size: tuple[int, int] = (160, 45)
) -> tuple[Daemon, TmuxEmacs, list[str]]:
    """The daemon on ROAM_DIR (ENV: its settings' variables) and an Emacs (not started yet) whose init.el is the user's
    org-roam set-up followed by the README's Emacs configuration; and how that was chosen.

    The set-up's ``org-roam-db-autosync-mode`` builds org-roam's database (``org-roam-db-sync``)
    before the README's part loads, as a user's Emacs brings it up to date at every start:
    no batch Emacs builds it first, which made the same database twice a test."""
    roam_db = tmp_path / "org-roam.db"
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake.url, token=TOKEN, embedded=True, env=env)
    home = tmp_path / "home"
    (home / ".emacs.d").mkdir(parents=True)
    port = daemon.url.rsplit(":", 1)[1]
    (home / ".authinfo").write_text(f"machine 127.0.0.1 port {port} password {TOKEN}\n")
    config, notes = readme_emacs_config(daemon.url)
    user = USER_SETUP.format(roam=json.dumps(str(roam_dir)), db=json.dumps(str(roam_db)))
    (home / ".emacs.d" / "early-init.el").write_text(EARLY_INIT)
    (home / ".emacs.d" / "init.el").write_text(
        f"(load {json.dumps(str(HARNESS))} nil t)\n{user}\n;; README.org: {'; '.join(notes)}\n{config}\n"
    )
    return daemon, TmuxEmacs(tmp_path / "walk", home, columns=size[0], lines=size[1]), notes


@contextlib.asynccontextmanager
async def readme_session(
    tmp_path: Path, roam_dir: Path, fake, env: dict[str, str] | None = None, *, size: tuple[int, int] = (160, 45)
) -> AsyncIterator["Driver"]:
    """A :class:`Driver` of the daemon (ENV: its settings' variables) and ``emacs -nw``
    with the README's configuration (:func:`readme_emacs`) in a terminal of SIZE (columns,
    lines), Emacs started and at ``*scratch*``; Emacs and the driver's daemon (the one
    :meth:`Driver.restart_daemon` started, if it did) stopped after."""
    require_packages()
    daemon, emacs, _ = await readme_emacs(tmp_path, roam_dir, fake, env=env, size=size)
    driver = Driver(emacs, Walk(emacs, {}), roam_dir, fake, tmp_path, daemon)
    try:
        await emacs.start({"WALK_SERVER_DIR": str(emacs.server_socket.parent)})
        await emacs.wait_text("*scratch*", timeout=20)
        yield driver
    finally:
        await emacs.stop()
        daemon.stop()
        driver.daemon.stop()


class Driver:
    """Keys and looks, shared by the steps."""

    def __init__(self, emacs: TmuxEmacs, walk: Walk, roam: Path, fake, tmp_path: Path, daemon: Daemon):
        self.emacs, self.walk, self.roam, self.fake, self.tmp = emacs, walk, roam, fake, tmp_path
        self.daemon = daemon
        self.port = int(daemon.url.rsplit(":", 1)[1])
        self.memory_on_kill_ring = False

    async def buffer_text(self, name: str) -> str:
        target = self.tmp / "buffer.txt"
        await self.emacs.eval(f"(walk-write-buffer {json.dumps(name)} {json.dumps(str(target))})")
        return target.read_text(errors="replace")

    async def similar_requests(self) -> int:
        """How many times the similar notes were asked for since Emacs started."""
        return int(await self.emacs.eval("arcology-oracle--similar-generation"))

    async def similar_settled(self) -> bool:
        """No refresh of the similar notes pending (after the idle delay) nor under way."""
        return await self.emacs.eval(
            "(and (null arcology-oracle--similar-timer) (null arcology-oracle--similar-request))"
        ) == "t"

    async def windows(self) -> list[dict]:
        return (await self.emacs.state())["windows"]

    async def point_text(self) -> str:
        """The line of point in the selected window."""
        return next(w["point_text"] for w in await self.windows() if w["selected"])

    async def selected_buffer(self) -> str | None:
        """The buffer of the selected window; None while the minibuffer is (a prompt not
        yet answered: Emacs may not have read the keys sent to it yet)."""
        return next((w["buffer"] for w in await self.windows() if w["selected"]), None)

    async def select(self, buffer: str) -> None:
        """``C-x o`` until the window of BUFFER is selected."""
        for _ in range(6):
            selected = next(w for w in await self.windows() if w["selected"])
            if selected["buffer"] == buffer:
                return
            await self.emacs.keys("C-x", "o")
            await self.emacs.wait(lambda: self._selected_moved(selected["id"]), "C-x o to select another window")
        raise AssertionError(f"no window shows {buffer}: {await self.windows()}")

    async def _selected_moved(self, window: str) -> bool:
        return next(w for w in await self.windows() if w["selected"])["id"] != window

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

    async def ask(self, question: str) -> int:
        """Ask QUESTION about the selected buffer with ``C-c o a``, typed at its prompt;
        return where *Messages* ended before it was sent (:meth:`message`'s ``since``)."""
        await self.emacs.keys("C-c", "o", "a")
        await self.emacs.wait_text("Ask about this buffer:")
        await self.emacs.type(question)
        mark = await self.mark()
        await self.emacs.keys("Enter")
        return mark

    async def converse(self, question: str, *, save: bool = True) -> tuple[int, bytes]:
        """Write a conversation at the end of inbox.org as a person types it (``* Winter
        :conversation:``, ``** Me``, then QUESTION), save it with ``C-x C-s`` (not when
        SAVE is false: ``C-c o c`` reads the buffer) and ask with ``C-c o c``. Return
        where *Messages* ended before asking (:meth:`message`'s ``since``) and
        inbox.org's bytes on disk then."""
        await self.open("inbox.org")
        await self.emacs.keys("M->")
        for line in ("* Winter :conversation:", "** Me"):
            await self.emacs.type(line)
            await self.emacs.keys("Enter")
        await self.emacs.type(question)
        if save:
            await self.emacs.keys("C-x", "C-s")
            await self.emacs.wait(lambda: question in (self.roam / "inbox.org").read_text(), "inbox.org saved")
        before = (self.roam / "inbox.org").read_bytes()
        mark = await self.mark()
        await self.emacs.keys("C-c", "o", "c")
        return mark, before

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

    async def _text_is(self, buffer: str, text: str) -> bool:
        return await self.buffer_text(buffer) == text

    async def where(self) -> tuple[str, int]:
        """The selected window's buffer and point's line (the mode line's L…)."""
        w = next(w for w in await self.windows() if w["selected"])
        return w["buffer"], w["point_line"]

    async def _cursor_moved(self, where: tuple[str, int]) -> bool:
        return await self.where() != where

    async def _selected_not(self, buffer: str) -> bool:
        return await self.selected_buffer() != buffer

    async def _not_shown(self, buffer: str) -> bool:
        return await self.window_of(buffer) is None

    async def _has_entries(self, buffer: str, before: str) -> bool:
        text = await self.buffer_text(buffer)
        return "Looking for" not in text and text.strip() != "" and text.startswith(before.split("\n")[0])

    async def _changed(self, windows: list[dict]) -> bool:
        state = await self.emacs.state()
        return state["windows"] != windows or len(state["errors"]) > self.walk.errors_seen

    async def _count_in(self, buffer: str, text: str, count: int) -> bool:
        return (await self.buffer_text(buffer)).count(text) >= count

    async def _text_lacks(self, buffer: str, text: str) -> bool:
        return text not in await self.buffer_text(buffer)
