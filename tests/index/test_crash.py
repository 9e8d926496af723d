"""``kill -9`` of the real daemon mid-work, then a restart: the index must end up exactly
as a clean index of the same files (same files, headings, chunks, links and vectors, by
path, line and hash; no duplicates, no orphans) and nothing is lost or doubled.

SQLite's atomic commits and the indexer's one-transaction-per-file are what make this
hold; these tests kill at the moments where it could break: in the middle of the first
full index, while pending chunks are being embedded, and while the watcher re-indexes a
burst of edits (with more edits made while the daemon is down).
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from pathlib import Path

import pytest

from arcology_oracle.index.indexer import FILES_PER_COMMIT
from tests.corpus_tools import clean_snapshot, edit_burst, index_snapshot, write_corpus
from tests.runners import Daemon, start_daemon, wait_until

pytestmark = pytest.mark.timeout(180)


async def status(daemon: Daemon) -> dict:
    code, body = await daemon.get_json("/status")
    assert code == 200, body
    return body


def kill(daemon: Daemon) -> None:
    daemon.proc.kill()  # SIGKILL: no cleanup, no checkpoint, no close
    daemon.proc.wait()


def _stat(proc: Path) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state, ppid, ...), or
    None once the process is gone."""
    try:
        return (proc / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    return {int(p.name) for p in Path("/proc").glob("[0-9]*") if (f := _stat(p)) and int(f[1]) == pid}


def alive(pid: int) -> bool:
    fields = _stat(Path(f"/proc/{pid}"))
    return fields is not None and fields[0] != "Z"


async def wait_settled(daemon: Daemon, timeout: float = 60) -> dict:
    """Until the startup reconcile has finished and nothing is pending."""

    async def settled():
        if "initial index of" not in daemon.log():
            return None
        st = await status(daemon)
        ok = not st["indexing"]["running"] and st["pending"] == 0 and st["embedder"]["reachable"]
        return st if ok else None

    return await wait_until(settled, timeout=timeout, interval=0.05)


def assert_same_as_clean(db_path, clean) -> None:
    snap = index_snapshot(db_path)
    assert snap.problems == []
    all_chunk_hashes = frozenset(c[3] for c in clean.chunks)
    assert snap.embedded == all_chunk_hashes, "every chunk embedded once, no vector left over"
    # The clean index was built without embedding; the daemon's must hold every vector.
    clean.embedded = all_chunk_hashes
    assert snap.content() == clean.content(), snap.diff(clean)


async def test_kill_during_cold_index_and_during_embedding(tmp_path, make_settings, fake_ollama):
    roam = tmp_path / "vault"
    write_corpus(roam, FILES_PER_COMMIT + 300, seed=1)  # the kill lands after the first commit
    clean = await clean_snapshot(make_settings(roam_dir=roam, db_path=tmp_path / "clean.sqlite3"), embed=False)
    db = tmp_path / "daemon.sqlite3"

    # 1. Killed in the middle of the first full index.
    daemon = await start_daemon(tmp_path, roam_dir=roam, ollama_url=fake_ollama.url)
    try:

        async def mid_index():
            st = await status(daemon)
            # Past the first batch of files, which is committed when the next one starts.
            done = st["indexing"]["done"]
            return st if st["indexing"]["phase"] == "indexing" and done > FILES_PER_COMMIT else None

        seen = await wait_until(mid_index, timeout=60, interval=0.01)
        workers = children(daemon.proc.pid)  # parse workers (and multiprocessing's tracker)
        kill(daemon)
    finally:
        daemon.stop()
    if (os.cpu_count() or 1) >= 2:
        assert workers, "a reconcile this large parses in a worker process"
    # They go with the daemon, instead of blocking for ever on a pipe nobody reads.
    await wait_until(lambda: not any(alive(pid) for pid in workers), timeout=30)
    assert seen["indexing"]["done"] < seen["indexing"]["total"] == len(clean.files)
    killed = index_snapshot(db)
    assert killed.problems == []
    assert 0 < len(killed.files) < len(clean.files), "the kill landed before the index was complete"
    assert killed.files <= clean.files and killed.headings <= clean.headings and killed.chunks <= clean.chunks
    indexed_before_kill = len(killed.files)

    # 2. Restarted: killed again once the index is complete but vectors are still coming.
    daemon = await start_daemon(tmp_path, roam_dir=roam, ollama_url=fake_ollama.url)
    try:

        async def mid_embedding():
            if "initial index of" not in daemon.log():
                return None
            st = await status(daemon)
            return st if st["embedded"] > 0 and st["pending"] > 0 else None

        seen = await wait_until(mid_embedding, timeout=60, interval=0.01)
        kill(daemon)
    finally:
        daemon.stop()
    assert seen["chunks"] == len(clean.chunks)
    killed = index_snapshot(db)
    assert killed.problems == []
    assert 0 < len(killed.embedded) < len(clean.chunks), "the kill landed while embedding"
    # The restart read only what the kill had left unread: each file exactly once overall.
    report = re.search(r"initial index of .*: (\d+) files, (\d+) indexed, (\d+) unchanged", daemon.log())
    assert report and [int(n) for n in report.groups()] == [
        len(clean.files), len(clean.files) - indexed_before_kill, indexed_before_kill,
    ]  # fmt: skip

    # 3. Restarted again: it finishes, and the result is the clean index.
    daemon = await start_daemon(tmp_path, roam_dir=roam, ollama_url=fake_ollama.url)
    try:
        st = await wait_settled(daemon)
        assert st["files"] == len(clean.files) and st["chunks"] == len(clean.chunks)
    finally:
        daemon.stop()
    assert_same_as_clean(db, clean)


def stored_counts(db) -> tuple[int, ...]:
    """The files, headings and chunks the database ``db`` holds, read as another program would."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return tuple(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in ("files", "headings", "chunks"))
    finally:
        conn.close()


def file_hashes(root) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.org")
    }


async def test_kill_during_a_burst_of_edits(tmp_path, make_settings, fake_ollama):
    roam = tmp_path / "vault"
    corpus = write_corpus(roam, 150, seed=2)
    db = tmp_path / "daemon.sqlite3"
    daemon = await start_daemon(tmp_path, roam_dir=roam, ollama_url=fake_ollama.url)
    try:
        await wait_settled(daemon)
        old = file_hashes(roam)
        edit_burst(corpus, 200)
        after_burst = file_hashes(roam)
        changed = {rel for rel, h in after_burst.items() if old.get(rel) != h}
        gone = old.keys() - after_burst.keys()
        assert changed and gone

        stored = stored_counts(db)

        async def reindexing():
            # In the database, not /status: a rescan withholds the notes changed since
            # before it writes anything (LiveIndex._withhold_unread), and /status counts
            # what is served.
            return stored_counts(db) != stored

        await wait_until(reindexing, timeout=30, interval=0.01)
        kill(daemon)
    finally:
        daemon.stop()

    killed = index_snapshot(db)
    assert killed.problems == []
    in_db = {path: h for path, h, *_ in killed.files}
    caught_up = {rel for rel in changed if in_db.get(rel) == after_burst[rel]} | (gone - in_db.keys())
    assert 0 < len(caught_up) < len(changed | gone), "the kill landed in the middle of re-indexing the burst"

    # More edits while the daemon is down; the restart's reconcile must see them all.
    edit_burst(corpus, 40)
    daemon = await start_daemon(tmp_path, roam_dir=roam, ollama_url=fake_ollama.url)
    try:
        await wait_settled(daemon)
        for rel, word in list(corpus.files.items())[-3:]:
            code, body = await daemon.get_json("/search", q=word, k="3")
            assert code == 200 and body["results"][0]["file"] == rel
    finally:
        daemon.stop()
    clean = await clean_snapshot(make_settings(roam_dir=roam, db_path=tmp_path / "clean.sqlite3"), embed=False)
    assert len(clean.files) == len(corpus.files)
    assert_same_as_clean(db, clean)
