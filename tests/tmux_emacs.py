"""An interactive Emacs (``emacs -nw``) in a tmux pane, driven by keys and read from the screen.

:class:`TmuxEmacs` starts Emacs in a detached tmux session of a fixed size, sends it keys
(``tmux send-keys``) and reads the screen (``tmux capture-pane``). Waiting is on events:
:meth:`TmuxEmacs.wait_screen` polls the screen until a condition holds, within a bounded
timeout. Emacs also runs a server, so that the test can read what the screen cannot show
(``*Messages*``, the kill ring, errors signalled by commands) with ``emacsclient``: the
harness in ``tests/elisp/walkthrough-harness.el`` writes that state to a JSON file.

:func:`readme_emacs_config` is the README's own Emacs configuration, as a newcomer pastes
it: the ``emacs-lisp`` blocks of "Installing" and "In the org-roam buffer" under
"* Emacs", with only the checkout's path and the daemon's URL put in.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.emacs_batch import ELISP, REPO, emacs
from tests.runners import wait_until

README = REPO / "README.org"
HARNESS = Path(__file__).resolve().parent / "elisp" / "walkthrough-harness.el"
README_URL = '"http://127.0.0.1:7348"'
_ELISP_PATH_RE = re.compile(r'"[^"\n]*arcology-oracle/elisp/?"')
_SRC_RE = re.compile(r"^[ \t]*#\+begin_src emacs-lisp[^\n]*\n(.*?)^[ \t]*#\+end_src", re.M | re.S | re.I)


def _section(text: str, level: int, title: str) -> str:
    """The body of the first heading of LEVEL titled TITLE, up to the next heading of
    that level or higher."""
    stars = re.escape("*" * level)
    start = re.search(rf"^{stars} {re.escape(title)}\s*$", text, re.M)
    if start is None:
        raise AssertionError(f"README.org has no heading {'*' * level} {title}")
    end = re.compile(rf"^\*{{1,{level}}} ", re.M).search(text, start.end())
    return text[start.end() : end.start() if end else len(text)]


def _unescape(block: str) -> str:
    return re.sub(r"^([ \t]*),(\*|#\+)", r"\1\2", block, flags=re.M)


def readme_emacs_config(url: str) -> tuple[str, list[str]]:
    """Return (CONFIG, NOTES): the README's Emacs configuration with this checkout's
    ``elisp/`` and the daemon's URL put in, and how it was chosen.

    Of the "Installing" blocks the first that works in a bare Emacs 28 (no
    ``use-package``, which Emacs 28 does not ship) is taken, else the first; then the
    org-roam section's block. Fails when the README no longer has them."""
    emacs_part = _section(README.read_text(), 1, "Emacs")
    installing = [_unescape(b) for b in _SRC_RE.findall(_section(emacs_part, 2, "Installing"))]
    roam = [_unescape(b) for b in _SRC_RE.findall(_section(emacs_part, 2, "In the org-roam buffer"))]
    if not installing or not roam:
        raise AssertionError("README.org's Emacs section lost its Installing or org-roam blocks")
    plain = [b for b in installing if "(use-package" not in b]
    chosen = (plain or installing)[0]
    notes = [
        "the Installing block without use-package" if plain else "the Installing block (use-package: the only one)"
    ]
    if not _ELISP_PATH_RE.search(chosen):
        raise AssertionError(f"no checkout path (…/arcology-oracle/elisp) to put in:\n{chosen}")
    chosen = _ELISP_PATH_RE.sub(lambda _: json.dumps(str(ELISP)), chosen)
    if README_URL in chosen:
        chosen = chosen.replace(README_URL, json.dumps(url))
    else:
        chosen += f"\n(setq arcology-oracle-url {json.dumps(url)})\n"
        notes.append("the block does not set the URL: set after it")
    return chosen + "\n" + "\n".join(roam), notes


class TmuxEmacs:
    """``emacs -nw`` in a private tmux server, COLUMNS x LINES, with HOME at ``home``."""

    def __init__(self, workdir: Path, home: Path, *, columns: int = 160, lines: int = 45):
        self.workdir = workdir
        self.home = home
        self.columns = columns
        self.lines = lines
        self.tmux_socket = workdir / "tmux.sock"
        self.server_socket = workdir / "server" / "walk"
        self.state_file = workdir / "state.json"
        self.started = False

    async def _run(self, *args: str, check: bool = True) -> str:
        proc = await asyncio.create_subprocess_exec(
            *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        out, _ = await asyncio.wait_for(proc.communicate(), 30)
        text = out.decode(errors="replace")
        if check and proc.returncode != 0:
            raise AssertionError(f"{shlex.join(args)} failed ({proc.returncode}): {text}")
        return text

    async def tmux(self, *args: str, check: bool = True) -> str:
        return await self._run("tmux", "-u", "-S", str(self.tmux_socket), *args, check=check)

    async def start(self, env: dict[str, str]) -> None:
        """Start Emacs; the init file in ``home`` is the user's. Returns once the
        harness's server answers."""
        if shutil.which("tmux") is None:
            pytest.fail("tmux is not installed (Debian: tmux; .ci/run installs it)")
        emacs()
        (self.workdir / "server").mkdir(parents=True, exist_ok=True)
        self.server_socket.parent.chmod(0o700)
        variables = [*(f"{k}={v}" for k, v in env.items()), f"HOME={self.home}", "LANG=C.UTF-8"]
        command = shlex.join(["env", *variables, "emacs", "-nw"])
        await self.tmux(
            "-f", "/dev/null", "new-session", "-d", "-s", "walk",
            "-x", str(self.columns), "-y", str(self.lines), command,
        )  # fmt: skip
        self.started = True
        await self.tmux("set-option", "-t", "walk", "status", "off")
        await self.wait(lambda: self.server_socket.exists(), "Emacs to start (its server socket)", timeout=60)

    async def stop(self) -> None:
        if self.started:
            await self.tmux("kill-server", check=False)
            self.started = False

    async def keys(self, *keys: str) -> None:
        """Send tmux key names: ``"C-c"``, ``"M-x"``, ``"Enter"``, ``"n"``."""
        await self.tmux("send-keys", "-t", "walk", *keys)

    async def type(self, text: str) -> None:
        """Type TEXT literally (no key names)."""
        await self.tmux("send-keys", "-t", "walk", "-l", "--", text)

    async def screen(self) -> str:
        return await self.tmux("capture-pane", "-p", "-t", "walk")

    async def wait(self, predicate: Callable[[], object], what: str, *, timeout: float = 8.0):
        """Poll PREDICATE (sync or async) until it is true; fail after TIMEOUT seconds."""
        try:
            return await wait_until(predicate, timeout=timeout, interval=0.05)
        except AssertionError:
            raise AssertionError(f"waited {timeout} s for {what}") from None

    async def wait_screen(self, check: Callable[[str], object], what: str, *, timeout: float = 8.0) -> str:
        """Wait until CHECK(screen text) is true; return that screen. The failure shows
        the last screen."""
        last = [""]

        async def seen():
            last[0] = await self.screen()
            return check(last[0])

        try:
            await self.wait(seen, what, timeout=timeout)
        except AssertionError as e:
            raise AssertionError(f"{e}; the screen was:\n{last[0]}") from None
        return last[0]

    async def wait_text(self, text: str, *, timeout: float = 8.0) -> str:
        return await self.wait_screen(lambda s: text in s, repr(text), timeout=timeout)

    async def wait_gone(self, text: str, *, timeout: float = 8.0) -> str:
        return await self.wait_screen(lambda s: text not in s, f"{text!r} to go", timeout=timeout)

    async def eval(self, form: str) -> str:
        """Evaluate FORM in the Emacs (through its server); return the printed value."""
        out = await self._run("emacsclient", "-s", str(self.server_socket), "--eval", form)
        return out.strip()

    async def state(self) -> dict:
        """What the harness knows: ``messages`` (``*Messages*``), ``errors`` (signalled
        by commands, or shown in ``*Messages*`` or ``*Warnings*``), ``kill`` (the head of
        the kill ring), ``buffers`` and ``windows`` (buffer name, width, side)."""
        self.state_file.unlink(missing_ok=True)
        await self.eval(f"(walk-write-state {json.dumps(str(self.state_file))})")
        return json.loads(self.state_file.read_text())
