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
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import DimensionMismatch, StoreError
from ..notes import Chunk, Heading, ParsedFile
from .db import DatabaseError, connect, pack_vector, unpack_vector
from .migrations import migrate

VEC_TABLE = "vec_embeddings"


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


class Store:
    """Synchronous access to the index database. See the module docstring."""

    def __init__(self, conn, path: Path | str):
        self.conn = conn
        self.path = path

    @classmethod
    def open(cls, path: Path | str) -> "Store":
        """Open (creating and migrating if needed) the database at ``path``."""
        try:
            conn = connect(path)
            migrate(conn)
        except DatabaseError as exc:
            raise StoreError(f"cannot open index database {path}: {exc}") from exc
        return cls(conn, path)

    def close(self) -> None:
        self.conn.close()

    # -- transactions and meta -------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolls back if the block raises."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

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
                (
                    parsed.path,
                    size,
                    mtime_ns,
                    file_hash,
                    parsed.title,
                    parsed.file_id,
                    json.dumps(parsed.problems, ensure_ascii=False),
                ),
            )
            file_rowid = cur.lastrowid
            new_hashes: set[str] = set()
            for heading, heading_chunks in zip(parsed.headings, chunks):
                heading_rowid = self._insert_heading(file_rowid, heading)
                self.conn.executemany(
                    "INSERT INTO chunks (heading, ordinal, text, hash) VALUES (?, ?, ?, ?)",
                    [(heading_rowid, c.ordinal, c.text, c.hash) for c in heading_chunks],
                )
                new_hashes.update(c.hash for c in heading_chunks)
                if heading.links:
                    self.conn.executemany(
                        "INSERT INTO links (heading, src_node, dst_node) VALUES (?, ?, ?)",
                        [(heading_rowid, heading.node_id, dst) for dst in heading.links],
                    )
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

    def _insert_heading(self, file_rowid: int, h: Heading) -> int:
        cur = self.conn.execute(
            "INSERT INTO headings (file, node_id, own_id, level, title, olp, olp_text, tags, todo,"
            " properties, body, text, start_line, end_line, node_title, aliases, date, hash)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                file_rowid,
                h.node_id,
                h.own_id,
                h.level,
                h.title,
                json.dumps(list(h.olp), ensure_ascii=False),
                " / ".join(h.olp),
                json.dumps(list(h.tags), ensure_ascii=False),
                h.todo,
                json.dumps(h.properties, ensure_ascii=False),
                h.body,
                h.text,
                h.start_line,
                h.end_line,
                h.node_title,
                json.dumps(list(h.aliases), ensure_ascii=False),
                h.date,
                h.content_hash(),
            ),
        )
        return cur.lastrowid

    # -- vectors -----------------------------------------------------------------------

    def embedding_model(self) -> EmbeddingModelInfo:
        dims = self.get_meta("embed_dims")
        return EmbeddingModelInfo(
            self.get_meta("embed_model"), int(dims) if dims else None, self.get_meta("embed_prefixes")
        )

    def ensure_embedding_model(self, model: str, prefixes: str) -> bool:
        """Record ``model`` (and its prefixes) as the one vectors come from.

        When a different model or different prefixes were recorded, every vector is
        dropped (with the vec0 table, whose dimension may differ) so all chunks become
        pending: vectors of two models are never mixed. Returns True when it reset.
        """
        info = self.embedding_model()
        if info.model == model and info.prefixes == prefixes:
            return False
        with self.transaction():
            self.conn.execute(f"DROP TABLE IF EXISTS {VEC_TABLE}")
            self.conn.execute("DELETE FROM embeddings")
            self._set_meta("embed_model", model)
            self._set_meta("embed_prefixes", prefixes)
            self._set_meta("embed_dims", None)
        return info.model is not None

    def has_vector_table(self) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (VEC_TABLE,)
        ).fetchone()
        return row is not None

    def store_vectors(self, items: Sequence[tuple[str, Sequence[float]]]) -> int:
        """Store one vector per text hash, in one transaction; returns how many were new.

        The first vector stored fixes the dimension (and creates the vec0 table). A
        vector of another length raises :class:`DimensionMismatch` and nothing of the
        batch is stored. Hashes no chunk uses any more (edited away meanwhile) are skipped.
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
        stored = 0
        with self.transaction():
            if dims is None:
                self.conn.execute(
                    f"CREATE VIRTUAL TABLE IF NOT EXISTS {VEC_TABLE} "
                    f"USING vec0(embedding float[{int(expected)}])"
                )
                self._set_meta("embed_dims", str(expected))
            for text_hash, vector in items:
                if not self.conn.execute("SELECT 1 FROM chunks WHERE hash = ? LIMIT 1", (text_hash,)).fetchone():
                    continue
                cur = self.conn.execute(
                    "INSERT INTO embeddings (hash) VALUES (?) ON CONFLICT(hash) DO NOTHING", (text_hash,)
                )
                if cur.rowcount == 0:
                    continue
                self.conn.execute(
                    f"INSERT INTO {VEC_TABLE} (rowid, embedding) VALUES (?, ?)",
                    (cur.lastrowid, pack_vector(vector)),
                )
                stored += 1
        return stored

    def _drop_unused_vectors(self, hashes: Iterable[str]) -> None:
        has_vec = self.has_vector_table()
        for text_hash in hashes:
            if self.conn.execute("SELECT 1 FROM chunks WHERE hash = ? LIMIT 1", (text_hash,)).fetchone():
                continue
            row = self.conn.execute("SELECT id FROM embeddings WHERE hash = ?", (text_hash,)).fetchone()
            if row is None:
                continue
            self.conn.execute("DELETE FROM embeddings WHERE id = ?", (row[0],))
            if has_vec:
                self.conn.execute(f"DELETE FROM {VEC_TABLE} WHERE rowid = ?", (row[0],))

    def _count_unembedded(self, hashes: set[str]) -> int:
        return sum(
            1
            for h in hashes
            if self.conn.execute("SELECT 1 FROM embeddings WHERE hash = ?", (h,)).fetchone() is None
        )

    def pending_texts(self, limit: int, *, exclude: Sequence[str] = ()) -> list[tuple[str, str]]:
        """Up to ``limit`` distinct ``(hash, text)`` pairs that have no vector yet."""
        excluded = set(exclude)
        rows = self.conn.execute(
            "SELECT c.hash, min(c.text) AS text FROM chunks c "
            "WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash) "
            "GROUP BY c.hash ORDER BY min(c.id) LIMIT ?",
            (limit + len(excluded),),
        ).fetchall()
        return [(r[0], r[1]) for r in rows if r[0] not in excluded][:limit]

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

    def knn(self, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest stored vectors as ``(text hash, L2 distance)``, nearest first."""
        if not self.has_vector_table() or k <= 0:
            return []
        rows = self.conn.execute(
            f"SELECT e.hash, v.distance FROM {VEC_TABLE} v JOIN embeddings e ON e.id = v.rowid "
            "WHERE v.embedding MATCH ? AND k = ? ORDER BY v.distance",
            (pack_vector(vector), int(k)),
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

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

    def fts_search(self, match: str, k: int) -> list[tuple[int, float, str]]:
        """Headings matching an FTS5 ``match`` expression: ``(heading id, bm25, snippet)``.

        ``match`` must already be quoted (see ``retrieval.fts_query``). bm25 is negative;
        lower is better. Title and outline path weigh more than the body.
        """
        rows = self.conn.execute(
            "SELECT rowid, bm25(headings_fts, 4.0, 2.0, 1.0) AS rank,"
            " snippet(headings_fts, 2, '', '', ' … ', 16) AS snip"
            " FROM headings_fts WHERE headings_fts MATCH ? ORDER BY rank LIMIT ?",
            (match, int(k)),
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def headings_for_hashes(self, hashes: Sequence[str]) -> dict[str, list[int]]:
        """Heading ids whose chunks have each text hash."""
        out: dict[str, list[int]] = {}
        for text_hash in hashes:
            out[text_hash] = [
                r[0] for r in self.conn.execute("SELECT heading FROM chunks WHERE hash = ?", (text_hash,))
            ]
        return out

    def headings(self, ids: Sequence[int]) -> dict[int, dict]:
        """Full heading rows (with the file path as ``file``) by heading id."""
        out = {}
        for heading_id in ids:
            row = self.conn.execute(
                "SELECT h.*, f.path AS file_path FROM headings h JOIN files f ON f.id = h.file"
                " WHERE h.id = ?",
                (heading_id,),
            ).fetchone()
            if row is not None:
                out[heading_id] = _heading_dict(row)
        return out

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
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _heading_dict(row) -> dict:
    d = dict(row)
    d["file"] = d.pop("file_path")
    d["olp"] = json.loads(d["olp"])
    d["tags"] = json.loads(d["tags"])
    d["properties"] = json.loads(d["properties"])
    d["aliases"] = json.loads(d["aliases"])
    return d
