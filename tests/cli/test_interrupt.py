"""C-c in the middle of `arcology-oracle index`: it stops at the next commit, says so,
and the next index goes on, nothing lost (index/indexer.py Indexer.stop)."""

from __future__ import annotations

import asyncio
import os
import pty
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from arcology_oracle.store.db import connect
from tests.index.test_give_way import write_notes
from tests.runners import REPO, run_cli, wait_until


def stored_files(db) -> int:
    if not db.exists():
        return 0
    conn = connect(db, readonly=True)
    try:
        return conn.execute("SELECT count(*) FROM files").fetchone()[0]
    except Exception:  # (not created yet)
        return 0
    finally:
        conn.close()


@asynccontextmanager
async def index_process(roam, db, *args: str, stderr=asyncio.subprocess.PIPE
                        ) -> AsyncIterator[asyncio.subprocess.Process]:  # fmt: skip
    """``arcology-oracle index ROAM --db DB --no-embed ARGS`` as a process (stdout piped),
    killed at the end of the block if it still runs."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arcology_oracle", "index", str(roam), "--db", str(db), "--no-embed", *args,
        stdout=asyncio.subprocess.PIPE, stderr=stderr, cwd=REPO,
    )  # fmt: skip
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_ctrl_c_in_index_says_so_and_the_next_index_goes_on(tmp_path):
    roam, db = tmp_path / "notes", tmp_path / "i.db"
    roam.mkdir()
    write_notes(roam, 1500)
    async with index_process(roam, db) as proc:
        await wait_until(lambda: stored_files(db) > 0 or proc.returncode is not None, timeout=60)
        proc.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 130, err
    assert "interrupted: what was stored is kept" in err.decode() and "Traceback" not in err.decode(), err
    code, out, err = await run_cli("index", str(roam), "--db", str(db), "--no-embed")
    assert code == 0 and "1500 files" in out and "0 failed" in out, (out, err)
    code, out, err = await run_cli("doctor", str(roam), "--db", str(db))
    assert code == 0 and "agrees" in out, (out, err)


async def test_ctrl_c_with_the_progress_bar_drawn_says_so_on_a_line_of_its_own(tmp_path):
    """On a terminal, the "interrupted" line followed the bar's on the same line."""
    roam, db = tmp_path / "notes", tmp_path / "i.db"
    roam.mkdir()
    write_notes(roam, 1500)
    terminal, stderr = pty.openpty()
    seen = bytearray()
    loop = asyncio.get_running_loop()

    def read() -> None:
        try:
            seen.extend(os.read(terminal, 65536))
        except OSError:  # (EIO: the process has ended, the terminal's other end is closed)
            loop.remove_reader(terminal)

    loop.add_reader(terminal, read)
    try:
        async with index_process(roam, db, stderr=stderr) as proc:
            os.close(stderr)
            await wait_until(lambda: b"reading  [" in seen or proc.returncode is not None, timeout=60)
            proc.send_signal(signal.SIGINT)
            await asyncio.wait_for(proc.wait(), 60)
            await wait_until(lambda: b"interrupted" in seen, timeout=10)
    finally:
        loop.remove_reader(terminal)
        os.close(terminal)
    text = seen.decode()
    assert proc.returncode == 130, text
    before, _, _ = text.partition("arcology-oracle: interrupted")
    assert "reading  [" in before and before.endswith("\n"), repr(text[-300:])


def test_ctrl_c_under_another_commands_bar_leaves_the_terminal_on_a_line_of_its_own(tmp_path, monkeypatch):
    """`import` says nothing on C-c: the shell's prompt came on the bar's line."""
    import io

    from arcology_oracle import cli_import
    from arcology_oracle.cli import main
    from arcology_oracle.cli_progress import ProgressBar

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    def interrupted(settings, args) -> int:
        ProgressBar("importing").update(1, 3)
        raise KeyboardInterrupt

    monkeypatch.setattr(sys, "stderr", terminal := Terminal())
    monkeypatch.setattr(cli_import, "cmd_import", interrupted)
    assert main(["import", "chatgpt", str(tmp_path / "conversations.json"), "--into", str(tmp_path)]) == 130
    assert terminal.getvalue().startswith("\rimporting [") and terminal.getvalue().endswith("\n"), terminal.getvalue()
