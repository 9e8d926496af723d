"""A daemon killed (SIGKILL) in the middle of a forget, then started again: the note ends
byte for byte as the forget makes it, before the index reads it; a note changed after the
kill is left alone and the original bytes kept aside; a record torn by the kill is set
aside and the daemon starts.

The real daemon runs the forget (``POST /forget``); :func:`install_pause` makes it stop
at one step of the rewrite (the note's ``pwrite``, ``ftruncate`` or ``fsync``, or the
record's write), say so on a pipe and wait there for ever: the test kills it at that
moment (no sleeps) and starts a plain daemon on the same notes and database.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import aiohttp
import pytest

from arcology_oracle.index import note_io
from arcology_oracle.notes.capture import make_capture, plan_forget, render_capture
from tests.emacs_batch import emacs_env
from tests.org_reading import OrgProcess
from tests.runners import REPO, Daemon, free_port, start_daemon, stop_process, wait_indexed, wait_until

REL = "daily/2026-03-14.org"
NODE = "c0ffee00-0000-4000-8000-000000000001"
USER_TEXT = b"* Written after the capture\nThe user goes on writing below it.\n" + b"a line of the user's own\n" * 60

CHILD = """
import sys
from tests.index.test_forget_kill import install_pause
install_pause(sys.argv[1], sys.argv[2], int(sys.argv[3]))
from arcology_oracle.cli import main
sys.exit(main(["serve", *sys.argv[4:]]))
"""


def install_pause(point: str, roam: str, signal_fd: int) -> None:
    """In the daemon about to be killed: make the forget stop at ``point`` (see the
    module docstring), writing a line to ``signal_fd`` first."""
    real_pwrite, real_ftruncate, real_fsync = os.pwrite, os.ftruncate, os.fsync
    inside = os.path.realpath(roam) + os.sep
    truncated = threading.Event()

    def kind(fd: int) -> str | None:
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return None
        return "note" if path.startswith(inside) else "record" if os.path.basename(path).startswith("forget-journal.") else None

    def pause() -> None:
        os.write(signal_fd, b"paused\n")
        threading.Event().wait()  # until the test kills this process

    def pwrite(fd, data, offset):
        what = kind(fd)
        if (point, what) == ("before-write", "note"):
            pause()
        if (point, what) in (("mid-tail", "note"), ("mid-record", "record")):
            real_pwrite(fd, bytes(data)[: len(data) // 2], offset)
            real_fsync(fd)
            pause()
        return real_pwrite(fd, data, offset)

    def ftruncate(fd, length):
        if kind(fd) == "note":
            if point == "before-truncate":
                pause()
            truncated.set()
        return real_ftruncate(fd, length)

    def fsync(fd):
        real_fsync(fd)
        if point == "after-truncate" and truncated.is_set() and kind(fd) == "note":
            pause()

    os.pwrite, os.ftruncate, os.fsync = pwrite, ftruncate, fsync


def write_note(roam: Path, eol: bytes, rel: str = REL, first: bytes = b"") -> tuple[bytes, bytes]:
    """The note ``rel``: ``first``, the user's text, a capture, the user's text after it
    (as the daemon would have written the capture). Returns its bytes and the forget's result."""
    note_io.prepare_leases()
    (roam / "daily").mkdir(parents=True)
    (roam / rel).write_bytes(first + b"* Morning" + eol + b"Coffee and the tide tables." + eol)
    entry = make_capture("remember the kinkajou at the harbour", title=None, tags=(),
                         now=datetime.datetime(2026, 3, 14, 9, 26), node_id=NODE)  # fmt: skip
    note_io.append_note(roam, rel, lambda e, lead, real: render_capture(entry, rel=real, eol=e, lead=lead), None)
    with open(roam / rel, "ab") as fh:
        fh.write(USER_TEXT.replace(b"\n", eol))
    data = (roam / rel).read_bytes()
    removal = plan_forget(data, rel, NODE)
    return data, data[: removal.start] + data[removal.end :]


async def killed_mid_forget(tmp_path: Path, roam: Path, ollama_url: str, point: str) -> str:
    """Start a daemon that stops at ``point`` of its forget, ask it to forget the capture,
    kill it there; its log."""
    read_end, write_end = os.pipe()
    port = free_port()
    log_path = tmp_path / f"killed-{point}.log"
    args = ["--roam-dir", str(roam), "--db", str(tmp_path / "daemon.sqlite3"), "--port", str(port),
            "--ollama-host", ollama_url]  # fmt: skip
    env = {**os.environ, "ARCOLOGY_ORACLE_DEBOUNCE_SECONDS": "0.1", "ARCOLOGY_ORACLE_RETRY_MAX_SECONDS": "0.5"}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-c", CHILD, point, str(roam), str(write_end), *args], cwd=REPO,
                                env=env, stdout=log, stderr=subprocess.STDOUT, pass_fds=(write_end,))  # fmt: skip
    os.close(write_end)  # the pipe reads empty once the daemon is gone
    daemon = Daemon(proc, f"http://127.0.0.1:{port}", log_path, None)
    paused = asyncio.ensure_future(asyncio.to_thread(os.read, read_end, 64))
    try:

        async def healthy():
            assert proc.poll() is None, daemon.log()
            try:
                return (await daemon.get_json("/health"))[0] == 200
            except aiohttp.ClientConnectionError:
                return False

        await wait_until(healthy, timeout=30)
        await wait_indexed(daemon)  # the capture is indexed, and nothing reads the note any more

        async def forget():
            async with aiohttp.ClientSession() as session, session.post(daemon.url + "/forget", json={"id": NODE}) as resp:
                return resp.status, await resp.text()

        forgetting = asyncio.ensure_future(forget())
        done, _ = await asyncio.wait({paused, forgetting}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        assert paused in done and paused.result() == b"paused\n", (
            f"the forget was not stopped at {point}: {forgetting.result() if forgetting.done() else 'no answer'}"
        )
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        forgetting.cancel()
        await asyncio.gather(forgetting, return_exceptions=True)
    finally:
        stop_process(proc)
        await asyncio.gather(paused, return_exceptions=True)
        os.close(read_end)
    return daemon.log()


async def started_again(tmp_path: Path, roam: Path, ollama_url: str) -> str:
    """A plain daemon on the same notes and database, once its first index is done; its log."""
    daemon = await start_daemon(tmp_path, roam_dir=roam, ollama_url=ollama_url)
    try:
        await wait_until(lambda: "initial index of" in daemon.log(), timeout=30, interval=0.05)
        return daemon.log()
    finally:
        daemon.stop()


def record_path(tmp_path: Path) -> Path:
    return Path(os.path.realpath(tmp_path)) / "forget-journal.daemon.sqlite3"


def aside(tmp_path: Path, kind: str) -> list[Path]:
    return sorted(p for p in Path(os.path.realpath(tmp_path)).iterdir() if p.name.startswith(f"forget-journal.daemon.sqlite3.{kind}-"))


@pytest.mark.parametrize(
    ("point", "eol"),
    [("before-write", b"\n"), ("mid-tail", b"\n"), ("before-truncate", b"\n"), ("after-truncate", b"\n"),
     ("mid-tail", b"\r\n")],  # fmt: skip
)
async def test_a_forget_killed_in_its_rewrite_is_finished_at_the_next_start(tmp_path, fake_ollama, point, eol):
    roam = tmp_path / "roam"
    data, forgotten = write_note(roam, eol)
    await killed_mid_forget(tmp_path, roam, fake_ollama.url, point)
    assert record_path(tmp_path).exists()  # on disk before the note's first byte changed, until its last
    left = (roam / REL).read_bytes()
    if point == "mid-tail":  # the kill left part of the note twice
        assert left != data and left != forgotten and len(left) == len(data)
    log = await started_again(tmp_path, roam, fake_ollama.url)
    assert (roam / REL).read_bytes() == forgotten  # every byte: the forget's result, nothing twice, nothing lost
    assert not record_path(tmp_path).exists() and aside(tmp_path, "kept") == aside(tmp_path, "damaged") == []
    (tmp_path / "emacs").mkdir()
    with OrgProcess(emacs_env(tmp_path / "emacs")) as org:  # as Emacs's Org reads the note: the user's two headings
        read = org.read(roam / REL)
    assert [h.title for h in read.headings] == ["Morning", "Written after the capture"]
    assert read.eol == (1 if eol == b"\r\n" else 0)
    if point != "after-truncate":
        repaired = f"repaired {REL}: a forget there was interrupted"
        assert repaired in log and log.index(repaired) < log.index("initial index of"), log  # before the index reads it
    assert "Traceback" not in log, log


async def test_a_note_changed_after_the_kill_is_left_alone_and_its_bytes_kept_aside(tmp_path, fake_ollama):
    roam = tmp_path / "roam"
    data, _ = write_note(roam, b"\n")
    await killed_mid_forget(tmp_path, roam, fake_ollama.url, "mid-tail")
    with open(roam / REL, "ab") as fh:  # another program writes the note before the daemon is back
        fh.write(b"* Typed in Emacs after the crash\n")
    edited = (roam / REL).read_bytes()
    log = await started_again(tmp_path, roam, fake_ollama.url)
    assert (roam / REL).read_bytes() == edited  # not touched
    kept = aside(tmp_path, "kept")
    assert len(kept) == 1 and not record_path(tmp_path).exists()
    start = plan_forget(data, REL, NODE).start
    assert data[start:] in kept[0].read_bytes()  # the note's bytes from the capture on, as they were
    assert f"a forget in {REL} was interrupted, but it was changed since: the note was not touched" in log, log
    assert str(kept[0]) in log and "Traceback" not in log, log


async def test_a_record_torn_by_the_kill_is_set_aside_and_the_daemon_starts(tmp_path, fake_ollama):
    roam = tmp_path / "roam"
    data, _ = write_note(roam, b"\n")
    await killed_mid_forget(tmp_path, roam, fake_ollama.url, "mid-record")
    assert (roam / REL).read_bytes() == data and record_path(tmp_path).exists()  # the forget had not begun
    log = await started_again(tmp_path, roam, fake_ollama.url)
    assert (roam / REL).read_bytes() == data  # the capture is still there, nothing else changed
    damaged = aside(tmp_path, "damaged")
    assert len(damaged) == 1 and not record_path(tmp_path).exists()
    assert "is damaged (cut short by a crash while it was written" in log and str(damaged[0]) in log, log
    assert "listening on" in log and "Traceback" not in log, log


async def test_a_capture_into_the_note_of_an_unfinished_forget_finishes_it_first_or_is_refused(tmp_path, fake_ollama):
    roam = tmp_path / "roam"
    today = f"daily/{datetime.date.today():%Y-%m-%d}.org"  # where the daemon's captures go
    data, forgotten = write_note(roam, b"\n", today)
    await killed_mid_forget(tmp_path, roam, fake_ollama.url, "mid-tail")
    held = os.open(roam / today, os.O_RDONLY)  # a pager has the note open when the daemon starts
    daemon = await start_daemon(tmp_path, roam_dir=roam, ollama_url=fake_ollama.url)
    try:
        await wait_until(lambda: "initial index of" in daemon.log(), timeout=30, interval=0.05)
        left = (roam / today).read_bytes()
        assert record_path(tmp_path).exists() and left not in (data, forgotten)  # it could not be finished
        async with aiohttp.ClientSession() as session:
            async with session.post(daemon.url + "/memorize", json={"text": "buy more coffee"}) as resp:
                assert resp.status == 409, await resp.text()
                assert f"an earlier forget in {today} is unfinished" in await resp.text()
            assert (roam / today).read_bytes() == left  # nothing written
            os.close(held)
            held = None
            async with session.post(daemon.url + "/memorize", json={"text": "buy more coffee"}) as resp:
                assert resp.status == 200, await resp.text()
        got = (roam / today).read_bytes()
        assert got.startswith(forgotten) and b"buy more coffee" in got[len(forgotten) :]  # finished, then captured
        assert got.count(b"a line of the user's own\n") == 60 and not record_path(tmp_path).exists()
        assert aside(tmp_path, "kept") == [] and "Traceback" not in daemon.log(), daemon.log()
    finally:
        if held is not None:
            os.close(held)
        daemon.stop()


async def test_a_private_note_repaired_at_the_next_start_is_not_named_in_the_log(tmp_path, fake_ollama):
    # The forget began with the note held by no index (private): the start that finishes
    # it says a note was repaired, not which (as the forget itself would have logged it).
    roam = tmp_path / "roam"
    data, forgotten = write_note(roam, b"\n", first=b"#+filetags: :private:\n")
    (roam / "public.org").write_bytes(b"* A public note\nSo the index holds something.\n")
    killed = await killed_mid_forget(tmp_path, roam, fake_ollama.url, "mid-tail")
    log = await started_again(tmp_path, roam, fake_ollama.url)
    assert (roam / REL).read_bytes() == forgotten
    assert "repaired a note the index does not hold (not named: it may be private): a forget there" in log, log
    assert REL not in killed + log and "2026-03-14" not in killed + log, log
