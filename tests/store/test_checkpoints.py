"""The writer's WAL is checkpointed on a thread of its own, and the log stays bounded."""

from __future__ import annotations

import os
import shutil

from arcology_oracle.store import Store
from arcology_oracle.store.checkpoints import WAL_BYTES, BackgroundCheckpointer
from arcology_oracle.store.db import connect

WAIT = 30.0  # seconds; only reached when the thread never checkpoints


def _rows_in_database_file_alone(db, tmp_path) -> int:
    """Rows of ``t`` in the main database file, ignoring what is still only in the WAL."""
    alone = tmp_path / "alone.sqlite3"
    shutil.copyfile(db, alone)  # without its -wal file: only checkpointed pages
    conn = connect(alone)
    try:
        exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 't'").fetchone()
        return conn.execute("SELECT count(*) FROM t").fetchone()[0] if exists else 0
    finally:
        conn.close()


def test_commits_reach_the_database_file_through_the_thread_and_the_log_restarts(tmp_path):
    db = tmp_path / "db.sqlite3"
    conn = connect(db)
    BackgroundCheckpointer.prepare_writer(conn)
    assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    wal_bytes = 256 * 1024
    checkpointer = BackgroundCheckpointer(db, wal_bytes=wal_bytes)
    try:
        conn.execute("CREATE TABLE t (b BLOB)")
        for round_ in range(1, 21):
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT INTO t VALUES (?)", [(os.urandom(4000),) for _ in range(80)])  # > wal_bytes
            conn.execute("COMMIT")
            checkpointer.committed()
            assert checkpointer.wait_checkpoints(round_, WAIT), f"no checkpoint after commit {round_}"
        # The writer never checkpoints (autocheckpoint is off): the rows got into the
        # database file through the thread.
        assert _rows_in_database_file_alone(db, tmp_path) == 20 * 80
        # 20 commits of more than wal_bytes each, yet the log restarted after each
        # checkpoint instead of growing to 20 times that; and the next commit, a small
        # one, cut the file back, so that its size measures the log again.
        assert os.path.getsize(f"{db}-wal") < 3 * wal_bytes
        conn.execute("INSERT INTO t VALUES (x'00')")
        assert os.path.getsize(f"{db}-wal") < wal_bytes // 4
    finally:
        checkpointer.close()
        conn.close()


def test_the_writer_store_checkpoints_in_the_background_and_stops_on_close(tmp_path):
    db = tmp_path / "index.sqlite3"
    store = Store.open(db, writer=True)
    checkpointer = store._checkpointer
    assert store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    assert store.conn.execute("PRAGMA temp_store").fetchone()[0] == 2  # memory
    with store.transaction():
        store.conn.execute("CREATE TABLE t (b BLOB)")
        store.conn.executemany("INSERT INTO t VALUES (?)", [(os.urandom(1 << 20),) for _ in range(WAL_BYTES >> 20)])
    assert checkpointer.wait_checkpoints(1, WAIT), "the store's commit did not wake the thread"
    assert _rows_in_database_file_alone(db, tmp_path) == WAL_BYTES >> 20

    store.checkpoint()  # the explicit one, on the writer, truncates the log
    assert os.path.getsize(f"{db}-wal") == 0
    store.close()
    assert not checkpointer._thread.is_alive()


def test_readers_keep_sqlites_own_checkpoints(tmp_path):
    store = Store.open(tmp_path / "index.sqlite3")
    try:
        assert store._checkpointer is None
        assert store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] > 0
    finally:
        store.close()


def test_a_writer_that_never_pauses_still_keeps_the_log_bounded(tmp_path, monkeypatch):
    """Passive checkpoints that never complete (a writer committing while each one runs:
    here they do nothing at all) must not let the log grow without end: past
    ``wal_limit`` the writer's own commit checkpoints and the log starts over."""
    db = tmp_path / "index.sqlite3"
    store = Store.open(db, writer=True)
    checkpointer = store._checkpointer
    checkpointer.wal_limit = 512 * 1024
    checkpointer.wal_bytes = 1 << 62  # the background thread never checkpoints
    sizes = []
    try:
        with store.transaction():
            store.conn.execute("CREATE TABLE t (b BLOB)")
        for _ in range(40):  # 40 commits of ~200 KB: 8 MB of log without the bound
            with store.transaction():
                store.conn.executemany("INSERT INTO t VALUES (?)", [(os.urandom(4000),) for _ in range(50)])
            sizes.append(os.path.getsize(f"{db}-wal"))
        assert max(sizes) <= checkpointer.wal_limit + 300 * 1024, sizes
        assert _rows_in_database_file_alone(db, tmp_path) >= 40 * 50 - 3 * 50  # checkpointed by the writer
        assert checkpointer.checkpoints == 0
    finally:
        store.close()


def test_a_reader_on_old_pages_never_makes_the_writer_wait(tmp_path):
    """Past the bound the writer checkpoints without waiting for readers: one still on
    older pages only stops that checkpoint short. (A checkpoint that waited would hold
    every commit for the busy timeout, here ten minutes.)"""
    import threading

    db = tmp_path / "index.sqlite3"
    store = Store.open(db, writer=True)
    store.conn.execute("PRAGMA busy_timeout = 600000")
    checkpointer = store._checkpointer
    checkpointer.wal_limit = 256 * 1024
    checkpointer.wal_bytes = 1 << 62
    with store.transaction():
        store.conn.execute("CREATE TABLE t (b BLOB)")
    reader = connect(db)
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM t").fetchone()[0] == 0  # holds this snapshot

    def commits():
        for _ in range(10):
            with store.transaction():
                store.conn.executemany("INSERT INTO t VALUES (?)", [(os.urandom(4000),) for _ in range(50)])

    writer = threading.Thread(target=commits)
    writer.start()
    writer.join(WAIT)
    try:
        assert not writer.is_alive(), "the writer waited for the reader"
        assert reader.execute("SELECT count(*) FROM t").fetchone()[0] == 0  # its snapshot, still
        reader.execute("COMMIT")
        with store.transaction():
            store.conn.execute("INSERT INTO t VALUES (x'00')")
        with store.transaction():  # the log starts over: the reader no longer holds it
            store.conn.execute("INSERT INTO t VALUES (x'00')")
        assert os.path.getsize(f"{db}-wal") < checkpointer.wal_limit
        assert store.conn.execute("SELECT count(*) FROM t").fetchone()[0] == 502
    finally:
        reader.close()  # first: a writer that waited for it goes on
        writer.join()
        store.close()
