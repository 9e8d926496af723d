"""The index store: files, headings, chunks, links, FTS5 and vectors in one SQLite file.

One :class:`Store` wraps one connection and is used from one thread at a time. The daemon
keeps a single writer (the indexer) and one reader per worker thread; WAL mode lets readers
run while the writer commits. Every value is bound as a parameter.

Vectors are keyed by the hash of the text they embed (table ``embeddings``), not by chunk,
so a chunk whose text did not change keeps its vector across re-indexing, identical texts
are embedded once, and a chunk is *pending* exactly when no vector exists for its hash.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DimensionMismatch, StoreError
from ..notes.records import Chunk, Heading, ParsedFile
from . import vectors
from .checkpoints import BackgroundCheckpointer
from .db import DatabaseError, connect, pack_vector, unpack_vector
from .migrations import migrate

VEC_TABLE = "vec_embeddings"
# The writer's page cache, against SQLite's 2 MB. With it, and savepoint journals in
# memory instead of a temporary file (each file is stored in its own savepoint), storing
# the 22,695 headings of a cold index took 1.51 s instead of 1.83 s; 8 MB gave 1.54-1.60 s
# and 32 MB no more than 16 (bench, this machine).
WRITER_CACHE_KIB = 16 * 1024
log = logging.getLogger(__name__)

# json.dumps with keyword arguments builds a new encoder per call (0.9 s of a profiled
# cold index of 22,695 headings: four calls per heading).
_to_json = json.JSONEncoder(ensure_ascii=False).encode


def _is_corruption(exc: Exception) -> bool:
    text = str(exc).lower()
    return any(m in text for m in ("not a database", "malformed", "corrupt", "disk image"))


@dataclass(frozen=True, slots=True)
class FileState:
    """What the store remembers of a file to decide whether to read it again."""

    path: str
    size: int
    mtime_ns: int
    hash: str


@dataclass(frozen=True, slots=True)
class EmbeddingModelInfo:
    """The embedding model recorded in ``meta``; ``dims`` is None until a vector is stored."""

    model: str | None
    dims: int | None
    prefixes: str | None


# snippet() of the body column: no highlight marks, an ellipsis, about 16 tokens.
_SNIPPET_ARGS = "2, '', '', ' … ', 16"
# The in-memory vector index's snapshot, beside the database (see VectorIndex.save).
VECTORS_SNAPSHOT_SUFFIX = "-vectors"


class Store:
    """Synchronous access to the index database. See the module docstring."""

    def __init__(self, conn, path: Path | str):
        self.conn = conn
        self.path = path
        self._checkpointer: BackgroundCheckpointer | None = None
        self._savepoints = 0
        # Heading id ranges inserted in the open transaction and not yet in headings_fts.
        self._fts_pending: list[tuple[int, int]] = []

    @classmethod
    def open(cls, path: Path | str, *, writer: bool = False) -> "Store":
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
            if str(path) == ":memory:" or not _is_corruption(exc):
                raise StoreError(f"cannot open index database {path}: {exc}") from exc
            log.warning("index database %s is unusable (%s): deleting it and rebuilding from the notes", path, exc)
            for suffix in ("", "-wal", "-shm", "-journal", VECTORS_SNAPSHOT_SUFFIX):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            try:
                store = cls._open(path)
            except DatabaseError as again:
                raise StoreError(f"cannot create index database {path}: {again}") from again
        if writer:
            store.conn.execute(f"PRAGMA cache_size = -{WRITER_CACHE_KIB}")
            store.conn.execute("PRAGMA temp_store = MEMORY")
            if str(path) != ":memory:":
                BackgroundCheckpointer.prepare_writer(store.conn)
                store._checkpointer = BackgroundCheckpointer(path)
        return store

    @classmethod
    def _open(cls, path: Path | str) -> "Store":
        conn = connect(path)
        try:
            migrate(conn)
            conn.execute("SELECT count(*) FROM files").fetchone()
        except BaseException:
            conn.close()
            raise
        return cls(conn, path)

    def close(self) -> None:
        """Close the connection; first write the vector index's snapshot if it is
        current and not saved yet (the next start then reads that, not every vector)."""
        index, snapshot = getattr(self, "_vindex", None), self._snapshot_path()
        if index is not None and snapshot is not None:
            try:
                token = self.get_meta(vectors.META_KEY) or ""
                index.sync(token, lambda: None)  # recorded changes only: never a reload here
                if index.generation == token:
                    index.save(snapshot)
            except (OSError, DatabaseError) as exc:
                log.warning("could not save the vector index snapshot %s: %s", snapshot, exc)
        if self._checkpointer is not None:
            self._checkpointer.close()
            self._checkpointer = None
        self.conn.close()

    # -- transactions and meta -------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolls back if the block raises.

        Nested inside another transaction it is a savepoint: the inner block's changes
        are undone alone if it raises, and become durable with the outer commit (the
        indexer commits a batch of files at once, each file in its own savepoint).
        Headings inserted in the transaction reach the FTS index just before it commits
        (see :meth:`_flush_fts`).
        """
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
        try:
            yield
            self._flush_fts()
        except BaseException:
            self._fts_pending.clear()
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        if self._checkpointer is not None:
            self._checkpointer.committed()

    def _flush_fts(self) -> None:
        """Add the headings inserted since the last flush to ``headings_fts``.

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
                "INSERT INTO headings_fts (rowid, title, olp_text, text)"
                " SELECT id, title, olp_text, text FROM headings WHERE id BETWEEN ? AND ?",
                (lo, hi),
            )

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def _set_meta(self, key: str, value: str | None) -> None:
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    # -- files -------------------------------------------------------------------------

    def file_states(self) -> dict[str, FileState]:
        """Every indexed file's path, size, mtime and content hash."""
        rows = self.conn.execute("SELECT path, size, mtime_ns, hash FROM files")
        return {r["path"]: FileState(r["path"], r["size"], r["mtime_ns"], r["hash"]) for r in rows}

    def touch_file(self, path: str, size: int, mtime_ns: int) -> None:
        """Record a new size/mtime for a file whose content hash did not change."""
        self.conn.execute(
            "UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path)
        )

    def replace_file(
        self,
        parsed: ParsedFile,
        *,
        size: int,
        mtime_ns: int,
        file_hash: str,
        chunks: Sequence[Sequence[Chunk]],
    ) -> int:
        """Replace everything stored for ``parsed.path`` in one transaction.

        ``chunks[i]`` are the chunks of ``parsed.headings[i]``. Vectors of texts that no
        chunk uses any more are deleted. Returns how many of the new chunks have no vector
        yet (the embedding work this change created).
        """
        if len(chunks) != len(parsed.headings):
            raise ValueError("one list of chunks per heading is required")
        with self.transaction():
            old_hashes = self._delete_file_rows(parsed.path)
            cur = self.conn.execute(
                "INSERT INTO files (path, size, mtime_ns, hash, title, file_node, problems) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (parsed.path, size, mtime_ns, file_hash, parsed.title, parsed.file_id, _to_json(parsed.problems)),
            )
            file_rowid = cur.lastrowid
            # Heading ids are chosen here (we hold the write lock) so that headings, chunks
            # and links each go in with one executemany.
            first = self.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM headings").fetchone()[0]
            ids = range(first, first + len(parsed.headings))
            self.conn.executemany(
                "INSERT INTO headings (id, file, node_id, own_id, level, title, olp, olp_text, tags, todo,"
                " properties, body, text, start_line, end_line, node_title, aliases, date, hash)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [_heading_row(heading_id, file_rowid, h) for heading_id, h in zip(ids, parsed.headings)],
            )
            if parsed.headings:
                self._fts_pending.append((ids[0], ids[-1]))
            self.conn.executemany(
                "INSERT INTO chunks (heading, ordinal, text, hash) VALUES (?, ?, ?, ?)",
                [(heading_id, c.ordinal, c.text, c.hash) for heading_id, cs in zip(ids, chunks) for c in cs],
            )
            self.conn.executemany(
                "INSERT INTO links (heading, src_node, dst_node) VALUES (?, ?, ?)",
                [(heading_id, h.node_id, dst) for heading_id, h in zip(ids, parsed.headings) for dst in h.links],
            )
            new_hashes = {c.hash for cs in chunks for c in cs}
            self._drop_unused_vectors(old_hashes - new_hashes)
            return self._count_unembedded(new_hashes)

    def delete_file(self, path: str) -> bool:
        """Delete a file and everything derived from it. Returns whether it was indexed."""
        with self.transaction():
            exists = self.conn.execute("SELECT 1 FROM files WHERE path = ?", (path,)).fetchone()
            self._drop_unused_vectors(self._delete_file_rows(path))
        return exists is not None

    def _delete_file_rows(self, path: str) -> set[str]:
        row = self.conn.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
        if row is None:
            return set()
        self._flush_fts()  # the delete trigger must find every heading in FTS
        hashes = {
            r[0]
            for r in self.conn.execute(
                "SELECT c.hash FROM chunks c JOIN headings h ON h.id = c.heading WHERE h.file = ?",
                (row[0],),
            )
        }
        # Cascades remove headings, chunks and links; the trigger keeps FTS in step.
        self.conn.execute("DELETE FROM files WHERE id = ?", (row[0],))
        self.conn.execute("DELETE FROM summaries WHERE file = ?", (path,))
        return hashes

    # -- vectors -----------------------------------------------------------------------

    def embedding_model(self) -> EmbeddingModelInfo:
        dims = self.get_meta("embed_dims")
        return EmbeddingModelInfo(
            self.get_meta("embed_model"), int(dims) if dims else None, self.get_meta("embed_prefixes")
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
            self._set_meta("embed_model", model)
            self._set_meta("embed_prefixes", prefixes)
            self._set_meta("embed_dims", None)
        return info.model is not None or force

    def has_vector_table(self) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (VEC_TABLE,)
        ).fetchone()
        return row is not None

    def store_vectors(self, items: Sequence[tuple[str, Sequence[float]]]) -> int:
        """Store one vector per text hash, in one transaction; returns how many were new.

        The first vector stored fixes the dimension (and creates the vector table). A
        vector of another length raises :class:`DimensionMismatch` and nothing of the
        batch is stored. Hashes no chunk uses any more (edited away meanwhile) are skipped.

        The vector table is a plain table of float32 blobs, not vec0: search runs on the
        in-memory :mod:`~arcology_oracle.vectors` index, and vec0 is ~10x slower to fill
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
                self._vectors_changed(added_ids=added_ids, added=[blob for _, blob in new], reset=dims is None)
        return len(added_ids)

    def _drop_unused_vectors(self, hashes: set[str]) -> None:
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
            self._vectors_changed(removed=removed)

    # The in-memory vector index (see arcology_oracle.vectors) follows these two.

    def _vector_index(self) -> vectors.VectorIndex:
        index = getattr(self, "_vindex", None)
        if index is None:
            key = str(self.path)
            key = f":memory:{id(self)}" if key == ":memory:" else str(Path(key).resolve())
            index = self._vindex = vectors.shared_index(key)
        return index

    def _vectors_changed(
        self, *, added_ids: Sequence[int] = (), added: Sequence[bytes] = (), removed: Sequence[int] = (), reset: bool = False
    ) -> None:
        """Inside the writing transaction: a new generation token, and the delta to it."""
        prev = self.get_meta(vectors.META_KEY) or ""
        new = vectors.new_token(prev)
        index = self._vector_index()
        if (len(removed) or index.saved_generation is not None) and (snapshot := self._snapshot_path()) is not None:
            # The snapshot would outlive vectors removed now (a note deleted or made private),
            # also when another process saved it.
            snapshot.unlink(missing_ok=True)
            index.saved_generation = None
        self._set_meta(vectors.META_KEY, new)
        rows = np.frombuffer(b"".join(added), dtype="<f4").reshape(len(added_ids), -1) if added_ids else np.empty((0, 0), np.float32)
        self._vector_index().record(
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
            if index.generation is None and snapshot is not None and index.restore(snapshot, generation):
                return
            dims = self.embedding_model().dims or 0
            # Not count(*) of the vector table: that walks every 3 KB row (30 s at 100k).
            count = self.conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
            cursor = self.conn.execute(f"SELECT rowid, embedding FROM {VEC_TABLE}")

            def batches():
                while rows := cursor.fetchmany(4096):
                    ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
                    yield ids, np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), dims)

            index.load(generation, dims, count, batches())
        finally:
            if own:
                self.conn.execute("COMMIT")

    def _count_unembedded(self, hashes: set[str]) -> int:
        if not hashes:
            return 0
        embedded = self.conn.execute(
            "SELECT count(*) FROM embeddings WHERE hash IN (SELECT value FROM json_each(?))",
            (json.dumps(list(hashes)),),
        ).fetchone()[0]
        return len(hashes) - embedded

    def pending_texts(self, limit: int, *, exclude: Sequence[str] = ()) -> list[tuple[str, str]]:
        """Up to ``limit`` distinct ``(hash, text)`` pairs that have no vector yet.

        Successive calls on one store continue after the last chunk returned (the
        embedder drains pending work in chunk order, and a scan from the start each time
        made draining quadratic: 20 s of 25 s at 11k chunks); only a call that finds too
        few after that point looks again from the start, for chunks that reused low ids.
        """
        excluded = set(exclude)
        start = getattr(self, "_pending_after", 0)
        out = self._pending_from(start, limit, excluded)
        if len(out) < limit and start > 0:
            seen = {h for h, _ in out} | excluded
            out += self._pending_from(0, limit - len(out), seen)
        return out

    def _pending_from(self, after: int, limit: int, excluded: set[str]) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        seen = set(excluded)
        cursor = self.conn.execute(
            "SELECT c.id, c.hash, c.text FROM chunks c WHERE c.id > ? "
            "AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash) ORDER BY c.id",
            (after,),
        )
        for chunk_id, text_hash, text in cursor:
            if text_hash in seen:
                continue
            seen.add(text_hash)
            out.append((text_hash, text))
            self._pending_after = chunk_id
            if len(out) >= limit:
                break
        cursor.close()
        return out

    def vectors_for_hashes(self, hashes: Sequence[str]) -> dict[str, list[float]]:
        """The stored vector of each hash that has one."""
        if not hashes or not self.has_vector_table():
            return {}
        out = {}
        for text_hash in hashes:
            row = self.conn.execute(
                f"SELECT e.hash, v.embedding FROM embeddings e JOIN {VEC_TABLE} v ON v.rowid = e.id "
                "WHERE e.hash = ?",
                (text_hash,),
            ).fetchone()
            if row is not None:
                out[row[0]] = unpack_vector(row[1])
        return out

    def node_vectors(self, node_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The normalised mean of the stored vectors of each node's chunks (its own
        headings and those below it without an ID of their own), in one query; nodes with
        no vector are absent. Each distinct text counts once, as in ``retrieval.stored_vector``."""
        if not node_ids or not self.has_vector_table():
            return {}
        # DISTINCT before the join: comparing 3 KB blobs for it cost half the query.
        rows = self.conn.execute(
            "SELECT d.node_id, v.embedding FROM (SELECT DISTINCT h.node_id, e.id FROM headings h"
            " JOIN chunks c ON c.heading = h.id JOIN embeddings e ON e.hash = c.hash"
            " WHERE h.node_id IN (SELECT value FROM json_each(?))) d"
            f" JOIN {VEC_TABLE} v ON v.rowid = d.id",
            (json.dumps(list(node_ids)),),
        ).fetchall()
        grouped: dict[str, list[bytes]] = {}
        for node_id, blob in rows:
            grouped.setdefault(node_id, []).append(blob)
        out = {}
        for node_id, blobs in grouped.items():
            total = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1).sum(axis=0, dtype=np.float64)
            norm = float(np.sqrt(total @ total))
            if norm:
                out[node_id] = total / norm
        return out

    def warm_vectors(self) -> None:
        """Bring the in-memory vector index up to date now (else the next knn does), and
        save its snapshot if it had to read every vector."""
        if self.has_vector_table():
            index = self._vector_index()
            index.sync(self.get_meta(vectors.META_KEY) or "", self._load_vectors)
            if (snapshot := self._snapshot_path()) is not None:
                try:
                    index.save(snapshot)
                except OSError as exc:
                    log.warning("could not save the vector index snapshot %s: %s", snapshot, exc)

    def _snapshot_path(self) -> Path | None:
        """Where the vector index's snapshot lives: beside the database (None in memory)."""
        return None if str(self.path) == ":memory:" else Path(f"{self.path}{VECTORS_SNAPSHOT_SUFFIX}")

    def knn(self, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest stored vectors as ``(text hash, L2 distance)``, nearest first.

        Candidates come from the in-memory index shared by this process's stores of the
        database (first brought up to date with what this connection sees); the best
        ``k`` plus a margin are re-scored exactly on their stored float32 vectors by
        sqlite-vec, in the statement that reads their text hashes, so quantisation never
        decides the order. (Reading the blobs into numpy instead took as long for 125
        candidates and up to twice as long for 400: BENCHMARKS.md, sqlite-vec.)
        """
        if not self.has_vector_table() or k <= 0:
            return []
        index = self._vector_index()
        index.sync(self.get_meta(vectors.META_KEY) or "", self._load_vectors)
        candidates = index.search(vector, int(k) + max(10, int(k) // 4))
        if not candidates:
            return []
        rows = self.conn.execute(
            f"SELECT e.hash, vec_distance_cosine(v.embedding, ?) AS d FROM {VEC_TABLE} v"
            " JOIN embeddings e ON e.id = v.rowid WHERE v.rowid IN (SELECT value FROM json_each(?))"
            " ORDER BY d, v.rowid LIMIT ?",
            (pack_vector(np.asarray(vector, np.float32)), json.dumps([rowid for rowid, _ in candidates]), int(k)),
        ).fetchall()
        # Unit vectors: |a - b|^2 = 2 (1 - cos) = 2 * cosine distance.
        return [(text_hash, math.sqrt(max(0.0, 2.0 * distance))) for text_hash, distance in rows]

    # -- reading ------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Files, headings, chunks, embedded and pending chunk counts."""
        one = lambda sql: self.conn.execute(sql).fetchone()[0]  # noqa: E731
        chunks = one("SELECT count(*) FROM chunks")
        embedded = one(
            "SELECT count(*) FROM chunks c WHERE EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash)"
        )
        return {
            "files": one("SELECT count(*) FROM files"),
            "headings": one("SELECT count(*) FROM headings"),
            "nodes": one("SELECT count(DISTINCT own_id) FROM headings WHERE own_id IS NOT NULL"),
            "chunks": chunks,
            "embedded": embedded,
            "pending": chunks - embedded,
        }

    def fts_search(self, match: str, k: int, *, snippets: bool = True) -> list[tuple[int, float, str | None]]:
        """Headings matching an FTS5 ``match`` expression: ``(heading id, bm25, snippet)``,
        the snippet None without ``snippets`` (each costs ~0.1 ms: most of the query).

        ``match`` must already be quoted (see ``retrieval.fts_query``). bm25 is negative;
        lower is better. Title and outline path weigh more than the body.
        """
        snippet = f"snippet(headings_fts, {_SNIPPET_ARGS})" if snippets else "NULL"
        rows = self.conn.execute(
            f"SELECT rowid, bm25(headings_fts, 4.0, 2.0, 1.0) AS rank, {snippet} AS snip"
            " FROM headings_fts WHERE headings_fts MATCH ? ORDER BY rank LIMIT ?",
            (match, int(k)),
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def fts_snippets(self, match: str, ids: Sequence[int]) -> dict[int, str]:
        """The snippets :meth:`fts_search` gives, for the headings ``ids`` only."""
        if not ids:
            return {}
        return dict(
            self.conn.execute(
                f"SELECT rowid, snippet(headings_fts, {_SNIPPET_ARGS}) FROM headings_fts"
                " WHERE headings_fts MATCH ? AND rowid IN (SELECT value FROM json_each(?))",
                (match, json.dumps(list(ids))),
            ).fetchall()
        )

    def headings_for_hashes(self, hashes: Sequence[str]) -> dict[str, list[int]]:
        """Heading ids whose chunks have each text hash (one query)."""
        out: dict[str, list[int]] = {text_hash: [] for text_hash in hashes}
        for text_hash, heading_id in self.conn.execute(
            "SELECT hash, heading FROM chunks WHERE hash IN (SELECT value FROM json_each(?))", (json.dumps(list(hashes)),)
        ):
            out[text_hash].append(heading_id)
        return out

    def headings(self, ids: Sequence[int]) -> dict[int, dict]:
        """Full heading rows (with the file path as ``file``) by heading id (one query)."""
        rows = self.conn.execute(
            "SELECT h.*, f.path AS file_path FROM headings h JOIN files f ON f.id = h.file"
            " WHERE h.id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(ids)),),
        ).fetchall()
        return {row["id"]: _heading_dict(row) for row in rows}

    def heading_owners(self, ids: Sequence[int]) -> dict[int, tuple[str | None, str]]:
        """``(node id or None, file path)`` by heading id: what grouping results by note
        needs, without reading (and decoding) whole rows."""
        return {
            r[0]: (r[1], r[2])
            for r in self.conn.execute(
                "SELECT h.id, h.node_id, f.path FROM headings h JOIN files f ON f.id = h.file"
                " WHERE h.id IN (SELECT value FROM json_each(?))",
                (json.dumps(list(ids)),),
            )
        }

    def node_headings(self, node_id: str) -> list[dict]:
        """Every heading that belongs to ``node_id``, in file order (the node's own first)."""
        rows = self.conn.execute(
            "SELECT h.*, f.path AS file_path FROM headings h JOIN files f ON f.id = h.file"
            " WHERE h.node_id = ? ORDER BY f.path, h.start_line",
            (node_id,),
        ).fetchall()
        return [_heading_dict(r) for r in rows]

    def node(self, node_id: str) -> dict | None:
        """The heading (or file record) that carries ``node_id`` as its own ID."""
        row = self.conn.execute(
            "SELECT h.*, f.path AS file_path FROM headings h JOIN files f ON f.id = h.file"
            " WHERE h.own_id = ? ORDER BY h.id LIMIT 1",
            (node_id,),
        ).fetchone()
        return None if row is None else _heading_dict(row)

    def heading_at(self, path: str, line: int) -> dict | None:
        """The heading of file ``path`` whose lines contain ``line`` (the deepest one)."""
        row = self.conn.execute(
            "SELECT h.*, f.path AS file_path FROM headings h JOIN files f ON f.id = h.file"
            " WHERE f.path = ? AND h.start_line <= ? ORDER BY h.start_line DESC LIMIT 1",
            (path, int(line)),
        ).fetchone()
        return None if row is None else _heading_dict(row)

    def file_headings(self, path: str) -> list[dict]:
        rows = self.conn.execute(
            "SELECT h.*, f.path AS file_path FROM headings h JOIN files f ON f.id = h.file"
            " WHERE f.path = ? ORDER BY h.start_line",
            (path,),
        ).fetchall()
        return [_heading_dict(r) for r in rows]

    def chunk_hashes(self, heading_ids: Sequence[int]) -> list[str]:
        out = []
        for heading_id in heading_ids:
            out.extend(
                r[0]
                for r in self.conn.execute(
                    "SELECT hash FROM chunks WHERE heading = ? ORDER BY ordinal", (heading_id,)
                )
            )
        return out

    def linked_nodes(self, node_id: str) -> set[str]:
        """Nodes linked from ``node_id`` or linking to it."""
        out = {r[0] for r in self.conn.execute("SELECT dst_node FROM links WHERE src_node = ?", (node_id,))}
        out |= {
            r[0]
            for r in self.conn.execute(
                "SELECT src_node FROM links WHERE dst_node = ? AND src_node IS NOT NULL", (node_id,)
            )
        }
        return out

    # -- summaries cache ---------------------------------------------------------------

    def cached_summary(self, key: str) -> str | None:
        row = self.conn.execute("SELECT summary FROM summaries WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def cache_summary(self, key: str, summary: str, file: str | None = None) -> None:
        """Cache a summary; with ``file``, it is dropped when that file is re-indexed or
        deleted (so a summary never outlives the text it was made from)."""
        self.conn.execute(
            "INSERT OR REPLACE INTO summaries (key, file, summary, created_at) VALUES (?, ?, ?, ?)",
            (key, file, summary, time.time()),
        )

    def checkpoint(self) -> None:
        """Fold the WAL into the database and truncate it (best effort while readers run),
        so overwritten text does not linger in old WAL frames."""
        if self._checkpointer is None:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return
        with self._checkpointer.lock:  # not "busy" because the background one is running
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _heading_row(heading_id: int, file_rowid: int, h: Heading) -> tuple:
    return (
        heading_id,
        file_rowid,
        h.node_id,
        h.own_id,
        h.level,
        h.title,
        _json_list(h.olp),
        " / ".join(h.olp),
        _json_list(h.tags),
        h.todo,
        _to_json(h.properties) if h.properties else "{}",
        h.body,
        h.text,
        h.start_line,
        h.end_line,
        h.node_title,
        _json_list(h.aliases),
        h.date,
        h.content_hash(),
    )


def _json_list(values: Sequence[str]) -> str:
    return _to_json(list(values)) if values else "[]"


def _heading_dict(row) -> dict:
    d = dict(row)
    d["file"] = d.pop("file_path")
    d["olp"] = json.loads(d["olp"])
    d["tags"] = json.loads(d["tags"])
    d["properties"] = json.loads(d["properties"])
    d["aliases"] = json.loads(d["aliases"])
    return d
