"""Opening the index database, transactions, ``meta`` and checkpoints: the base of
:class:`~arcology_oracle.store.index.Store` that every other part builds on.

One store wraps one connection and is used from one thread at a time. The daemon keeps a
single writer (the indexer) and one reader per worker thread; WAL mode lets readers run
while the writer commits. Every value is bound as a parameter, but a row limit, an int
written as SQL text (:func:`.db.limit`).
"""

from __future__ import annotations

import functools
import logging
import secrets
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Self, TypeVar

from ..errors import StoreError
from .checkpoints import BackgroundCheckpointer
from .db import DatabaseError, connect, is_corruption
from .migrate import migrate
from .generation_cache import WRITE_GENERATION
from .note_changes import NOTES_CHANGED, appended, since
from .withheld import hide_notes

# The writer's page cache, against SQLite's 2 MB. With it, and savepoint journals in
# memory instead of a temporary file (each file is stored in its own savepoint), storing
# the 22,695 headings of a cold index took 1.51 s instead of 1.83 s; 8 MB gave 1.54-1.60 s
# and 32 MB no more than 16 (bench, this machine).
WRITER_CACHE_KIB = 16 * 1024
log = logging.getLogger(__name__)
T = TypeVar("T")


def in_snapshot(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn(store, ...)`` with its reads in one :meth:`StoreBase.snapshot` of ``store``."""

    @functools.wraps(fn)
    def run(store: "StoreBase", *args, **kwargs) -> T:
        with store.snapshot():
            return fn(store, *args, **kwargs)

    return run


# The in-memory vector index's snapshot beside the database (see vector_sync.py).
VECTORS_SNAPSHOT_SUFFIX = "-vectors"
# Renewed (in ``meta``) by a transaction that inserts or deletes headings, and only by
# one: what derives from the headings alone (``LinkGraph.node_count``) outlives the
# writes of vectors, a batch of which commits every few hundred milliseconds while
# notes are embedded.
NODES_GENERATION = "nodes_generation"


class StoreBase:
    """One connection to the index database: opening, transactions, ``meta``."""

    def __init__(self, conn, path: Path | str):
        self.conn = conn
        self.path = path
        self._checkpointer: BackgroundCheckpointer | None = None
        self._savepoints = 0
        # Heading id ranges inserted in the open transaction and not yet in headings_fts.
        self._fts_pending: list[tuple[int, int]] = []
        self._headings_changed = False  # in the open transaction: NODES_GENERATION is renewed
        self._notes_changed: set[str] | None = set()  # their notes' keys (None: every note)
        self._hidden: frozenset[str] = frozenset()  # notes this (reader) connection does not show
        self._remembered: dict[tuple, object] | None = None  # in a read snapshot: see snapshot()
        self.marks_none_pending = False  # the writer: see VectorSync._none_pending_upto

    @classmethod
    def open(cls, path: Path | str, *, writer: bool = False) -> Self:
        """Open (creating and migrating if needed) the database at ``path``.

        ``writer`` marks the one store of a process that does the bulk writing (the
        indexer's). Its WAL checkpoints run on a thread of their own instead of inside its
        commits (:mod:`~arcology_oracle.store.checkpoints`), and it keeps a larger page
        cache and its savepoint journals in memory (:data:`WRITER_CACHE_KIB`).

        A file that is not a usable SQLite database (corrupt, truncated, overwritten) is
        deleted with a logged warning and a fresh database is created: the index is a
        cache that the notes rebuild, and a broken copy of note text is not kept around.
        Other errors (locked, unwritable directory) raise :class:`StoreError`.
        """
        try:
            store = cls._open(path)
        except DatabaseError as exc:
            if str(path) == ":memory:" or not is_corruption(exc):
                raise StoreError(f"cannot open index database {path}: {exc}") from exc
            log.warning("index database %s is unusable (%s): deleting it and rebuilding from the notes", path, exc)
            for suffix in ("", "-wal", "-shm", "-journal", VECTORS_SNAPSHOT_SUFFIX):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            try:
                store = cls._open(path)
            except DatabaseError as again:
                raise StoreError(f"cannot create index database {path}: {again}") from again
        if writer:
            store.marks_none_pending = True
            store.conn.execute(f"PRAGMA cache_size = -{WRITER_CACHE_KIB}")
            store.conn.execute("PRAGMA temp_store = MEMORY")
            if str(path) != ":memory:":
                BackgroundCheckpointer.prepare_writer(store.conn)
                store._checkpointer = BackgroundCheckpointer(path)
        return store

    @classmethod
    def _open(cls, path: Path | str) -> Self:
        conn = connect(path)
        try:
            if migrate(conn) and str(path) != ":memory:":
                # A migration may delete what must not linger (m031: private files'
                # rows): the log is folded into the file now, over the old pages
                # (secure_delete), not whenever a change of the notes next does it.
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("SELECT count(*) FROM files").fetchone()
        except BaseException:
            conn.close()
            raise
        return cls(conn, path)

    def hide(self, paths: frozenset[str]) -> Self:
        """Show none of the rows of the notes ``paths`` from now on (a reader's store: see
        :mod:`.withheld`); the notes hidden before and not in ``paths`` are shown again.
        Returns this store."""
        if paths != self._hidden:
            hide_notes(self.conn, paths)
            self._hidden = paths
        return self

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.close()
            self._checkpointer = None
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolls back if the block raises.

        Nested inside another transaction it is a savepoint: the inner block's changes
        are undone alone if it raises, and become durable with the outer commit (the
        indexer commits a batch of files at once, each file in its own savepoint).
        Headings inserted in the transaction reach the FTS index just before it commits
        (see :meth:`_flush_fts`).
        """
        if self._remembered is not None:
            raise RuntimeError("a write inside a read snapshot (StoreBase.snapshot)")
        if self.conn.in_transaction:
            self._savepoints += 1
            name = f"sp{self._savepoints}"
            fts_pending = list(self._fts_pending)
            self.conn.execute(f"SAVEPOINT {name}")
            try:
                yield
            except BaseException:
                self.conn.execute(f"ROLLBACK TO {name}")
                self.conn.execute(f"RELEASE {name}")
                # FTS and headings are back as they were at the savepoint, and so is
                # what was inserted before it without reaching FTS yet.
                self._fts_pending = fts_pending
                raise
            self.conn.execute(f"RELEASE {name}")
            return
        self.conn.execute("BEGIN IMMEDIATE")
        self._headings_changed = False
        self._notes_changed = set()
        try:
            yield
            self._flush_fts()
            # Whatever this transaction changed, what readers derived from the old state
            # (the notes' mean vectors, store/node_means.py) is now stale.
            self._set_meta(WRITE_GENERATION, secrets.token_hex(8))
            if self._headings_changed:  # (a savepoint rolled back may leave it set: a recount more)
                token = secrets.token_hex(8)
                self._set_meta(NOTES_CHANGED, appended(self._read_meta(NOTES_CHANGED), token, self._notes_changed))
                self._set_meta(NODES_GENERATION, token)
        except BaseException:
            self._fts_pending.clear()
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        if self._checkpointer is not None and self._checkpointer.committed():
            self._checkpointer.catch_up(self.conn)  # the thread's fell behind (see checkpoints.py)

    def _headings_of(self, notes: Iterable[str] | None) -> None:
        """In a write transaction: headings of ``notes`` (their keys as
        :mod:`.note_changes` records them; None: of any note) are inserted or deleted.
        What inserts or deletes headings says so here, or the caches of :mod:`.note_changes`
        keep what the notes held before."""
        self._headings_changed = True
        if notes is None or self._notes_changed is None:
            self._notes_changed = None
        else:
            self._notes_changed.update(notes)

    def _flush_fts(self) -> None:
        """Add the headings inserted since the last flush to ``headings_fts`` and
        ``headings_exact``.

        FTS5 writes its pending terms out as a new segment at every statement that
        changes it inside a transaction, so a trigger per inserted row (and a savepoint
        per file) made inserting 22,695 headings take 3.2 s, against 1.5 s with one
        ``INSERT ... SELECT`` per batch of new headings. Ranges may hold ids whose rows
        a savepoint rolled back: they select nothing. Must run before any of those
        headings is deleted, since the delete trigger removes a heading's terms from FTS.
        """
        if not self._fts_pending:
            return
        ranges = sorted(self._fts_pending)
        self._fts_pending.clear()
        merged = [list(ranges[0])]
        for lo, hi in ranges[1:]:
            if lo <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        for lo, hi in merged:
            self.conn.execute(
                "INSERT INTO headings_fts (rowid, title, olp_text, text, cjk_head, cjk_text)"
                " SELECT id, title, olp_text, text, cjk_head, cjk_text FROM headings WHERE id BETWEEN ? AND ?",
                (lo, hi),
            )
            self.conn.execute(
                "INSERT INTO headings_exact (rowid, title, olp_text, text, cjk_head, cjk_text)"
                " SELECT id, title, olp_text, text, cjk_head, cjk_text FROM headings WHERE id BETWEEN ? AND ?",
                (lo, hi),
            )

    @contextmanager
    def lock_wait(self, ms: int | None) -> Iterator[None]:
        """Inside the block, a statement that finds the database locked by another
        connection waits at most ``ms`` milliseconds for it, then raises OperationalError,
        instead of waiting the connection's busy timeout (restored after; None: unchanged)."""
        if ms is None:
            yield
            return
        before = self.conn.execute("PRAGMA busy_timeout").fetchone()[0]
        self.conn.execute(f"PRAGMA busy_timeout = {int(ms)}")
        try:
            yield
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {int(before)}")

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """The block's reads (one request's) in one read transaction: every statement sees
        the index as one commit left it, so what cannot change inside it is read once
        (:meth:`remembered`: ``meta``'s values, whether the vector table exists). No write
        may run in the block (:meth:`transaction` raises). Inside a transaction already
        (the writer's, or an enclosing snapshot) the block just runs in it.

        Why: a ``/similar`` ran ~13 statements asking ``meta`` or ``sqlite_master`` the
        same thing, each also a read transaction of its own; remembering them across
        autocommit statements would change what a request racing a write sees (a vector
        table dropped by a model reset, then used); in a snapshot nothing can change
        (BENCHMARKS.md, issue 30, thirty-third round)."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN")
        self._remembered = {}
        try:
            yield
        except BaseException:
            self._remembered = None
            if self.conn.in_transaction:  # (an error may have ended it already)
                self.conn.execute("ROLLBACK")
            raise
        self._remembered = None
        self.conn.execute("COMMIT")

    def remembered(self, key: tuple, read):
        """``read()``, once per :meth:`snapshot` for ``key`` (every call outside one)."""
        if self._remembered is None:
            return read()
        if key not in self._remembered:
            self._remembered[key] = read()
        return self._remembered[key]

    @property
    def shares_reads(self) -> bool:
        """Whether what this store reads may be shared with the process's other stores
        (the caches of :mod:`.generation_cache`): outside a transaction or in a read
        :meth:`snapshot`; not in a write transaction, which may see its own uncommitted
        writes."""
        return not self.conn.in_transaction or self._remembered is not None

    def get_meta(self, key: str) -> str | None:
        return self.remembered(("meta", key), lambda: self._read_meta(key))

    def _read_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def write_generation(self) -> str | None:
        """The token every write transaction replaces (:data:`.generation_cache.WRITE_GENERATION`):
        two reads that see the same token saw the same index."""
        return self.get_meta(WRITE_GENERATION)

    def nodes_generation(self) -> str | None:
        """The token every transaction that inserts or deletes headings replaces
        (:data:`NODES_GENERATION`): two reads that see the same token saw the same headings."""
        return self.get_meta(NODES_GENERATION)

    def notes_changed_since(self, token: str | None) -> frozenset[str] | None:
        """The keys of the notes whose headings changed after the :meth:`nodes_generation`
        ``token``, or None if the record cannot tell (:func:`.note_changes.since`)."""
        return since(self.get_meta(NOTES_CHANGED), self.nodes_generation(), token)

    def _set_meta(self, key: str, value: str | bytes | None) -> None:
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def checkpoint(self) -> None:
        """Fold the WAL into the database and truncate it (best effort while readers run),
        so overwritten text does not linger in old WAL frames."""
        if self._checkpointer is None:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return
        with self._checkpointer.lock:  # not "busy" because the background one is running
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
