"""Checking the index database against itself and removing what does not add up:
SQLite's quick check, the FTS index, orphan and misshapen vectors, duplicated headings.

Comparing the index with the org files, and re-reading them, is the doctor's job
(:mod:`arcology_oracle.index.doctor`); this module only reads and fixes rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .db import DatabaseError
from .vector_sync import VEC_TABLE, VectorSync

# The keyword indexes over headings (migrations m005 and m008) and turns (m011), checked
# and rebuilt alike.
FTS_TABLES = ("headings_fts", "headings_exact", "turns_fts")

# A vector of another dimension than the model's, counted by sqlite-vec's vec_length;
# a blob that is not whole float32s at all (vec_length refuses it) counts too.
WRONG_SIZE = "CASE WHEN length(embedding) % 4 != 0 THEN 1 ELSE vec_length(embedding) != ? END"


@dataclass
class IntegrityReport:
    """What :meth:`Integrity.check_integrity` found ("ok" and zeros when nothing)."""

    integrity: str = "ok"
    fts: str = "ok"
    orphan_embeddings: int = 0  # vectors no chunk uses
    vectors_without_rows: int = 0  # vector table rows with no embeddings row
    rows_without_vectors: int = 0  # embeddings rows with no vector
    wrong_size_vectors: int = 0
    duplicate_headings: int = 0


class Integrity(VectorSync):
    """Self-checks of the index (see the module docstring)."""

    def check_integrity(self) -> IntegrityReport:
        """Read-only: every way the rows disagree with each other."""
        r = IntegrityReport()
        q = self.conn.execute
        r.integrity = "; ".join(row[0] for row in q("PRAGMA quick_check").fetchall())
        try:
            for table in FTS_TABLES:
                q(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
        except DatabaseError as exc:
            r.fts = str(exc)
        r.orphan_embeddings = q(
            "SELECT count(*) FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.hash = e.hash)"
        ).fetchone()[0]
        if self.has_vector_table():
            r.vectors_without_rows = q(
                f"SELECT count(*) FROM {VEC_TABLE} v WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.id = v.rowid)"
            ).fetchone()[0]
            r.rows_without_vectors = q(
                f"SELECT count(*) FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM {VEC_TABLE} v WHERE v.rowid = e.id)"
            ).fetchone()[0]
            dims = self.embedding_model().dims
            if dims:
                r.wrong_size_vectors = q(
                    f"SELECT count(*) FROM {VEC_TABLE} WHERE {WRONG_SIZE}", (dims,)
                ).fetchone()[0]
        else:
            r.rows_without_vectors = q("SELECT count(*) FROM embeddings").fetchone()[0]
        r.duplicate_headings = q(
            "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM headings GROUP BY file, start_line HAVING n > 1)"
        ).fetchone()[0]
        return r

    def repair_integrity(self, *, rebuild_fts: bool, reread: Iterable[str] = ()) -> None:
        """In one transaction: rebuild the FTS index (when ``rebuild_fts``), delete orphan
        and misshapen vectors, and mark the files in ``reread`` and those holding
        duplicated headings as changed (so the next reconcile reads them again).

        The caller must be the only writer.
        """
        q = self.conn.execute
        with self.transaction():
            if rebuild_fts:
                for table in FTS_TABLES:
                    q(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
            if self.has_vector_table():
                q(f"DELETE FROM {VEC_TABLE} WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.id = {VEC_TABLE}.rowid)")
                q(f"DELETE FROM embeddings WHERE NOT EXISTS (SELECT 1 FROM {VEC_TABLE} v WHERE v.rowid = embeddings.id)")
                dims = self.embedding_model().dims
                if dims:
                    bad = [r[0] for r in q(f"SELECT rowid FROM {VEC_TABLE} WHERE {WRONG_SIZE}", (dims,))]
                    for rowid in bad:
                        q(f"DELETE FROM {VEC_TABLE} WHERE rowid = ?", (rowid,))
                        q("DELETE FROM embeddings WHERE id = ?", (rowid,))
            else:
                q("DELETE FROM embeddings")
            orphans = [r[0] for r in q("SELECT hash FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.hash = e.hash)")]
            self.drop_unused_vectors(orphans)
            # Rows were deleted behind the in-memory vector index: make every reader reload.
            self.vectors_changed(reset=True)
            # Duplicated headings can only come from a bug; re-reading their files fixes them.
            dup_files = [r[0] for r in q(
                "SELECT DISTINCT f.path FROM headings h JOIN files f ON f.id = h.file"
                " GROUP BY h.file, h.start_line HAVING count(*) > 1"
            )]  # fmt: skip
            for path in dup_files + list(reread):
                q("UPDATE files SET size = -1, hash = '' WHERE path = ?", (path,))
