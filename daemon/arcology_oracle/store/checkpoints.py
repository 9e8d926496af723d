"""WAL checkpoints on a thread of their own, so that the writer never waits for them.

A checkpoint copies the pages committed to the write-ahead log into the database file and
syncs both (with ``synchronous = NORMAL`` that is the only place SQLite syncs). Left to
SQLite's autocheckpoint, it runs inside the writer's ``COMMIT`` whenever the log is long
enough, and the writer thread stops there to copy and fsync tens of megabytes: storing the
22,695 vectors of a cold index took 1.08 s, 0.41 s of it in ``COMMIT`` and 0.3 s of that
in syncs (bench, this machine).

:class:`BackgroundCheckpointer` turns the writer's autocheckpoint off and runs ``PASSIVE``
checkpoints on a connection of its own once the log file has grown past ``wal_bytes``. A
passive checkpoint never blocks the writer, which goes on committing meanwhile; after a
complete one, the writer's next commit starts the log again from its beginning and, with
``journal_size_limit = 0``, truncates the file, so its size measures the log since then.

A writer that never pauses defeats that: each passive checkpoint ends behind the commits
made while it ran, none is ever complete, and the log never starts over. The cold index
of a million headings (bench_query.py's build, a reconcile of 119,000 files without a
pause) grew its log to 18 GB in 12 minutes, against a 3 GB database. So past
``wal_limit`` (:data:`WAL_LIMIT`) :meth:`BackgroundCheckpointer.committed` tells the
writer to :meth:`~BackgroundCheckpointer.catch_up`: a passive checkpoint on its own
connection, between two of its transactions, where no commit can get ahead of it. It
never waits for readers (one still reading older pages only stops it short, and the
next commit tries again), and the writer's next transaction starts the log over.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from .db import DatabaseError, connect

log = logging.getLogger(__name__)

# Checkpoint once the log passes 16 MB (4,000 pages). Smaller logs mean more syncs for
# the same pages, larger ones more copies of the same hot index pages left in the log.
WAL_BYTES = 16 * 1024 * 1024
# The log's bound: 16 times what starts a passive checkpoint, so a writer that pauses now
# and then leaves it to them, and a bounded cost to the disk when it does not.
WAL_LIMIT = 16 * WAL_BYTES


class BackgroundCheckpointer:
    """Checkpoints the database at ``path`` from a daemon thread (see the module docstring).

    The writer calls :meth:`committed` after each commit (and :meth:`catch_up` when it
    says so) and :meth:`close` before closing its own connection. Anyone else who checkpoints
    the same database in this process must hold :attr:`lock`: SQLite lets one checkpoint
    run at a time and answers a second with "busy" rather than waiting for it.
    """

    def __init__(self, path: Path | str, *, wal_bytes: int = WAL_BYTES, wal_limit: int = WAL_LIMIT) -> None:
        self.path = path
        self.wal_bytes = wal_bytes
        self.wal_limit = wal_limit
        self.lock = threading.Lock()
        self.checkpoints = 0  # completed by this thread, for tests and logs
        self._wal = f"{path}-wal"
        self._wake = threading.Event()
        self._done = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="oracle-checkpoint", daemon=True)
        self._thread.start()

    @staticmethod
    def prepare_writer(conn) -> None:
        """Make the writer's connection leave checkpoints to this thread."""
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        conn.execute("PRAGMA journal_size_limit = 0")

    def committed(self) -> bool:
        """The writer committed: check the log's size soon. Never blocks. True when the
        log has outgrown ``wal_limit``: the writer should :meth:`catch_up` now."""
        self._wake.set()
        return self._wal_size() > self.wal_limit

    def catch_up(self, conn) -> None:
        """On the writer's connection ``conn``, between its transactions: a passive
        checkpoint of the whole log (see the module docstring)."""
        with self.lock:  # not "busy" because the thread's own is running
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def wait_checkpoints(self, count: int, timeout: float) -> bool:
        """Wait until this thread has completed ``count`` checkpoints; False on timeout."""
        with self._done:
            return self._done.wait_for(lambda: self.checkpoints >= count, timeout)

    def close(self) -> None:
        """Stop the thread (after the checkpoint it may be running) and close its connection."""
        self._closing = True
        self._wake.set()
        self._thread.join()

    def _wal_size(self) -> int:
        try:
            return os.stat(self._wal).st_size
        except FileNotFoundError:
            return 0

    def _run(self) -> None:
        conn = None
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._closing:
                    return
                if self._wal_size() < self.wal_bytes:
                    continue
                try:
                    if conn is None:
                        conn = connect(self.path)
                    with self.lock:
                        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except DatabaseError as exc:  # the next commit tries again
                    log.warning("background checkpoint of %s failed: %s", self.path, exc)
                    continue
                except Exception:  # never let the thread die: the writer relies on it
                    log.exception("background checkpoint of %s failed", self.path)
                    continue
                with self._done:
                    self.checkpoints += 1
                    self._done.notify_all()
        finally:
            if conn is not None:
                conn.close()
