"""Vectors in the database and the in-memory index kept in step with them: the embedding
model, storing and dropping vectors, pending texts, loading the in-memory index.

Vectors are keyed by the hash of the text they embed (table ``embeddings``), not by
chunk, so a chunk whose text did not change keeps its vector across re-indexing,
identical texts are embedded once, and a chunk is *pending* exactly when no vector exists
for its hash. Every change to the vectors records a new generation token in ``meta`` and
its delta (:mod:`~arcology_oracle.store.vectors`), which the other stores of the process
apply to the shared in-memory index.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DimensionMismatch
from . import vector_snapshot, vectors
from .connection import VECTORS_SNAPSHOT_SUFFIX, StoreBase
from .db import EMBED_MODEL, DatabaseError, OperationalError, pack_vector
from .generation_cache import NONE_PENDING, WRITE_GENERATION
from .shared import PerDatabase

log = logging.getLogger(__name__)

VEC_TABLE = "vec_embeddings"


@dataclass(frozen=True, slots=True)
class EmbeddingModelInfo:
    """The embedding model recorded in ``meta``; ``dims`` is None until a vector is stored."""

    model: str | None
    dims: int | None
    prefixes: str | None


class _PendingCursor:
    """Where the last pending read stopped (a chunk id), shared by a database's stores."""

    after = 0


_cursors = PerDatabase(_PendingCursor)


class VectorSync(StoreBase):
    """The vector half of a store (see the module docstring)."""

    def embedding_model(self) -> EmbeddingModelInfo:
        dims = self.get_meta("embed_dims")
        return EmbeddingModelInfo(
            self.get_meta(EMBED_MODEL), int(dims) if dims else None, self.get_meta("embed_prefixes")
        )

    def ensure_embedding_model(self, model: str, prefixes: str, *, force: bool = False) -> bool:
        """Record ``model`` (and its prefixes) as the one vectors come from.

        When a different model or different prefixes were recorded (or ``force``: the
        model changed under the same name), every vector is dropped (with the vector
        table, whose dimension may differ) so all chunks become pending: vectors of two
        models are never mixed. Returns True when it reset.
        """
        info = self.embedding_model()
        if info.model == model and info.prefixes == prefixes and not force:
            return False
        with self.transaction():
            self.conn.execute(f"DROP TABLE IF EXISTS {VEC_TABLE}")
            self.conn.execute("DELETE FROM embeddings")
            self._set_meta(EMBED_MODEL, model)
            self._set_meta("embed_prefixes", prefixes)
            self._set_meta("embed_dims", None)
        return info.model is not None or force

    def has_vector_table(self) -> bool:
        """Whether the vector table exists (read once per :meth:`~.connection.StoreBase.snapshot`)."""
        return self.remembered(("vector table",), lambda: self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (VEC_TABLE,)
        ).fetchone() is not None)

    def store_vectors(self, items: Sequence[tuple[str, Sequence[float]]]) -> int:
        """Store one vector per text hash, in one transaction; returns how many were new.

        The first vector stored fixes the dimension (and creates the vector table). A
        vector of another length raises :class:`DimensionMismatch` and nothing of the
        batch is stored. Hashes no chunk uses any more (edited away meanwhile) are skipped.

        The vector table is a plain table of float32 blobs, not vec0: search runs on the
        in-memory :mod:`~arcology_oracle.store.vectors` index, and vec0 is ~10x slower to fill
        and far slower to read back (see BENCHMARKS.md). A vec0 table made by an older
        version keeps working.
        """
        if not items:
            return 0
        lengths = {len(v) for _, v in items}
        dims = self.embedding_model().dims
        expected = dims if dims is not None else next(iter(lengths))
        if lengths != {expected} or expected == 0:
            raise DimensionMismatch(
                f"embedding model returned vectors of length {sorted(lengths)}, expected {expected}"
            )
        with self.transaction():
            if dims is None or not self.has_vector_table():
                self.conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {VEC_TABLE} (rowid INTEGER PRIMARY KEY, embedding BLOB NOT NULL)"
                )
                self._set_meta("embed_dims", str(expected))
            # A few statements per batch, not three per vector.
            in_use = {
                r[0]
                for r in self.conn.execute(
                    "SELECT DISTINCT hash FROM chunks WHERE hash IN (SELECT value FROM json_each(?))",
                    (json.dumps([text_hash for text_hash, _ in items]),),
                )
            }
            inserted = dict(
                self.conn.execute(
                    "INSERT INTO embeddings (hash) SELECT value FROM json_each(?) WHERE true"
                    " ON CONFLICT(hash) DO NOTHING RETURNING hash, id",
                    (json.dumps([text_hash for text_hash, _ in items if text_hash in in_use]),),
                ).fetchall()
            )
            new = [(inserted.pop(text_hash), pack_vector(v)) for text_hash, v in items if text_hash in inserted]
            self.conn.executemany(f"INSERT INTO {VEC_TABLE} (rowid, embedding) VALUES (?, ?)", new)
            added_ids = [rowid for rowid, _ in new]
            if added_ids or dims is None:
                self.vectors_changed(added_ids=added_ids, added=[blob for _, blob in new], reset=dims is None)
        return len(added_ids)

    def drop_unused_vectors(self, hashes: Iterable[str]) -> None:
        """Inside a writing transaction: delete the vectors of those ``hashes`` that no
        chunk uses any more (and tell the in-memory index)."""
        if not hashes:
            return
        has_vec = self.has_vector_table()
        removed: list[int] = []
        for text_hash in hashes:
            if self.conn.execute("SELECT 1 FROM chunks WHERE hash = ? LIMIT 1", (text_hash,)).fetchone():
                continue
            row = self.conn.execute("SELECT id FROM embeddings WHERE hash = ?", (text_hash,)).fetchone()
            if row is None:
                continue
            self.conn.execute("DELETE FROM embeddings WHERE id = ?", (row[0],))
            if has_vec:
                self.conn.execute(f"DELETE FROM {VEC_TABLE} WHERE rowid = ?", (row[0],))
                removed.append(row[0])
        if removed:
            self.vectors_changed(removed=removed)

    # The in-memory vector index (see arcology_oracle.store.vectors) follows these two.

    def _vector_index(self) -> vectors.VectorIndex:
        index = getattr(self, "_vindex", None)
        if index is None:
            index = self._vindex = vectors.shared_index(self._shared_key())
        return index

    def _shared_key(self) -> str:
        """What the in-memory state shared by this database's stores is keyed by."""
        key = str(self.path)
        return f":memory:{id(self)}" if key == ":memory:" else str(Path(key).resolve())

    def vectors_changed(
        self, *, added_ids: Sequence[int] = (), added: Sequence[bytes] = (), removed: Sequence[int] = (), reset: bool = False
    ) -> None:
        """Inside the writing transaction: a new generation token, and the delta to it
        (``reset``: every reader reloads the in-memory index from the table)."""
        prev = self.get_meta(vectors.META_KEY) or ""
        new = _new_token(prev)
        self._set_meta(vectors.META_KEY, new)
        index = self._vector_index()
        if (len(removed) or index.saved_generation is not None) and (snapshot := self._snapshot_path()) is not None:
            # The snapshot would outlive vectors removed now (a note deleted or made private),
            # also when another process saved it.
            snapshot.unlink(missing_ok=True)
            index.saved_generation = None
        rows = np.frombuffer(b"".join(added), dtype="<f4").reshape(len(added_ids), -1) if added_ids else np.empty((0, 0), np.float32)
        index.record(
            vectors.Delta(prev, new, np.asarray(removed, np.int64), np.asarray(added_ids, np.int64), rows, reset)
        )

    def _load_vectors(self) -> None:
        """Load every vector into the in-memory index, in one read snapshot."""
        index = self._vector_index()
        own = not self.conn.in_transaction
        if own:
            self.conn.execute("BEGIN")
        try:
            generation = self.get_meta(vectors.META_KEY) or ""
            snapshot = self._snapshot_path()
            if index.generation is None and snapshot is not None and vector_snapshot.restore(index, snapshot, generation):
                return
            dims = self.embedding_model().dims or 0
            # Not count(*) of the vector table: that walks every 3 KB row (30 s at 100k).
            count = self.conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
            cursor = self.conn.execute(f"SELECT rowid, embedding FROM {VEC_TABLE}")

            def batches():
                while rows := cursor.fetchmany(vectors.LOAD_BLOCK):
                    ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
                    yield ids, np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), dims)

            index.load(generation, dims, count, batches())
        finally:
            if own:
                self.conn.execute("COMMIT")

    def warm_vectors(self) -> None:
        """Bring the in-memory vector index up to date now (else the next knn does), save
        its snapshot if it had to read every vector, have the OS read the snapshot's
        pages (:func:`vector_snapshot.prefetch`: the index maps them) and map in those
        every query reads (:meth:`~.vectors.VectorIndex.fault_in`)."""
        if self.has_vector_table():
            index = self._vector_index()
            index.sync(self.get_meta(vectors.META_KEY) or "", self._load_vectors)
            self._save_snapshot()
            snapshot = self._snapshot_path()
            if snapshot is not None:
                vector_snapshot.prefetch(snapshot)
            index.fault_in()

    # A snapshot of the in-memory index beside the database lets a restart skip reading
    # every vector (0.6-2.5 s at 100k; see vector_snapshot.py and BENCHMARKS.md).

    def _snapshot_path(self) -> Path | None:
        return None if str(self.path) == ":memory:" else Path(f"{self.path}{VECTORS_SNAPSHOT_SUFFIX}")

    def _save_snapshot(self) -> None:
        """Save the in-memory index if it is current and not saved yet; never reloads."""
        index, snapshot = getattr(self, "_vindex", None), self._snapshot_path()
        if index is None or snapshot is None:
            return
        try:
            token = self.get_meta(vectors.META_KEY) or ""
            index.sync(token, lambda: None)  # recorded changes only
            if index.generation == token:
                vector_snapshot.save(index, snapshot)
        except (OSError, DatabaseError) as exc:
            log.warning("could not save the vector index snapshot %s: %s", snapshot, exc)

    def close(self) -> None:
        """Save the vector index's snapshot (see above), then close the connection."""
        self._save_snapshot()
        super().close()

    def _count_unembedded(self, hashes: set[str]) -> int:
        if not hashes:
            return 0
        embedded = self.conn.execute(
            "SELECT count(*) FROM embeddings WHERE hash IN (SELECT value FROM json_each(?))",
            (json.dumps(list(hashes)),),
        ).fetchone()[0]
        return len(hashes) - embedded

    def pending_texts(
        self, limit: int, *, exclude: Sequence[str] = (), below: bool = True, withheld: Collection[str] = ()
    ) -> list[tuple[str, str]]:
        """Up to ``limit`` distinct ``(hash, text)`` pairs that have no vector yet, none
        of a chunk of the notes ``withheld`` (paths: the notes the store could not take,
        whose old rows may hold a heading made private since; store/withheld.py).

        Successive calls continue after the last chunk returned, by any store of this
        database in the process (the embedder drains pending work in chunk order through
        whichever reader is free, and a scan from the start each time made draining
        quadratic: 20 s of 25 s at 11k chunks). Only a call that finds nothing after that
        point looks again, from the start up to it, for chunks below it: ids reused after
        a file was rewritten, vectors dropped, a batch that failed. Looking again whenever
        fewer than ``limit`` were found cost a scan of every chunk each time the embedding
        caught up with a cold index's reconcile: 10% of the CPU of ``index`` at 100k
        headings (BENCHMARKS.md, issue 30). ``below=False`` never looks below: for a
        caller that will ask with True before it stops (the cold index, whose embedding
        catches up with the reconcile after each commit: one such look each time was
        still 16% of its CPU at 300k).

        The first look of a process (the cursor at the start) asks first whether any chunk
        is pending at all (:meth:`_none_pending_upto`), and when none is, moves the cursor
        past the last chunk: at every start of the daemon the embedding looks, and most
        often every chunk has its vector. Reading every chunk in id order for that took
        2.9 s at a million chunks, on a core the first queries needed; the question,
        answered from the hashes' index, 0.5 s. And a look that finds none pending,
        every chunk looked at, records it for the next start (:meth:`_mark_none_pending`).
        """
        generation = self._read_meta(WRITE_GENERATION) if self.marks_none_pending else None  # before the look
        seen = set(exclude)  # one copy, shared by both reads (the first found nothing to add)
        cursor = getattr(self, "_pending_cursor", None)
        if cursor is None:
            cursor = self._pending_cursor = _cursors.get(self._shared_key())
        if cursor.after == 0:
            last = self._none_pending_upto()
            if last is not None:
                cursor.after = max(cursor.after, last)  # shared: another reader may have moved it
                return []
        start = cursor.after
        hidden = json.dumps(sorted(withheld)) if withheld else None
        out = self._pending_from(start, None, limit, seen, cursor, hidden)
        if not out and start > 0 and below:
            out = self._pending_from(0, start, limit, seen, cursor, hidden)
        if not out and (start == 0 or below) and not exclude and not withheld:  # every chunk looked at
            self._mark_none_pending(generation)
        return out

    def _none_pending_upto(self) -> int | None:
        """The last chunk id when no chunk is pending (0 for none at all), None when some
        chunk is: in one statement, so both are of one state of the database. Chunks
        written later get higher ids, or reuse ids below, which the look below the cursor
        finds (:meth:`pending_texts`).

        Not asked while the write generation is one at which none was pending
        (:meth:`_mark_none_pending`: no write since, by any process): the question read
        every chunk's hash, 0.5-2.4 s at a million chunks on the writer thread at each start of
        the daemon, beside its first queries (BENCHMARKS.md, issue 30, fortieth round)."""
        row = self.conn.execute(
            "SELECT (SELECT value FROM meta WHERE key = ?) = (SELECT value FROM meta WHERE key = ?),"
            " (SELECT coalesce(max(id), 0) FROM chunks)",
            (NONE_PENDING, WRITE_GENERATION),
        ).fetchone()
        if row[0]:
            return row[1]
        row = self.conn.execute(
            "SELECT EXISTS (SELECT 1 FROM chunks c INDEXED BY chunks_hash"
            "  WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash)),"
            " (SELECT coalesce(max(id), 0) FROM chunks), (SELECT value FROM meta WHERE key = ?)",
            (WRITE_GENERATION,),
        ).fetchone()
        if row[0]:
            return None
        self._mark_none_pending(row[2])
        return row[1]

    def _mark_none_pending(self, generation: str | None) -> None:
        """Record that no chunk was pending at the write ``generation`` (:data:`NONE_PENDING`),
        if it is still the database's (no commit since it was read, by any process). By
        the writer only, outside any transaction, and without a generation of its own: the
        record changes nothing a reader derives.

        A record that cannot be written at once (another program writing, a full disk) is
        not kept, without a wait or an error: the look it follows has its answer, and a
        later look records it. (It waited the busy timeout, 10 s, on the writer thread,
        then failed the look, which the daemon's worker logged as an error.)"""
        if self.marks_none_pending and generation is not None and not self.conn.in_transaction:
            try:
                with self.lock_wait(0):
                    self.conn.execute(
                        "INSERT OR REPLACE INTO meta (key, value) SELECT ?1, ?2"
                        " WHERE (SELECT value FROM meta WHERE key = ?3) = ?2"
                        " AND (SELECT value FROM meta WHERE key = ?1) IS NOT ?2",  # (no write when it is recorded)
                        (NONE_PENDING, generation, WRITE_GENERATION),
                    )
            except OperationalError as exc:
                log.debug("no record that none was pending: %s", exc)

    def _pending_from(
        self, after: int, upto: int | None, limit: int, seen: set[str], cursor: _PendingCursor, hidden: str | None
    ) -> list[tuple[str, str]]:
        """Pending chunks with ids in (``after``, ``upto``], in order, their hashes not in
        ``seen`` (which gets each one returned), none of the notes of ``hidden`` (a JSON
        list of paths, or None); ``cursor`` follows the last. A chunk left out is below
        the cursor once the note is taken, and found by the look below it."""
        out: list[tuple[str, str]] = []
        sql = (
            "SELECT c.id, c.hash, c.text FROM chunks c WHERE c.id > ? AND c.id <= ? "
            "AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash)"
        )
        params: tuple = (after, upto if upto is not None else 2**63 - 1)
        if hidden is not None:
            sql += (
                " AND c.heading NOT IN (SELECT h.id FROM main.headings h JOIN main.files f ON f.id = h.file"
                " WHERE f.path IN (SELECT value FROM json_each(?)))"
            )
            params += (hidden,)
        rows = self.conn.execute(sql + " ORDER BY c.id", params)
        for chunk_id, text_hash, text in rows:
            if text_hash in seen:
                continue
            seen.add(text_hash)
            out.append((text_hash, text))
            cursor.after = chunk_id
            if len(out) >= limit:
                break
        rows.close()
        return out


def _new_token(prev: str) -> str:
    """A generation token following ``prev``: a counter (for people) and random bits
    (so that writers in two processes never make the same token)."""
    counter = prev.split("-", 1)[0]
    number = int(counter) + 1 if counter.isdigit() else 1
    return f"{number}-{secrets.token_hex(6)}"
