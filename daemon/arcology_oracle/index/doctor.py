"""Checking the index against the notes, and repairing it.

:func:`diagnose` is read-only: it lists every way the store disagrees with itself or with
the org files. :func:`repair` fixes them with the same writer the daemon uses: orphan rows
are deleted, the FTS index rebuilt, changed files re-read; a database SQLite itself
finds corrupt is deleted and rebuilt from the notes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from ..config import Settings
from ..notes.files import iter_org_files
from ..store import Store
from ..store.db import DatabaseError
from ..store.index import VEC_TABLE
from .indexer import Indexer

# A vector of another dimension than the model's, counted by sqlite-vec's vec_length;
# a blob that is not whole float32s at all (vec_length refuses it) counts too.
WRONG_SIZE = "CASE WHEN length(embedding) % 4 != 0 THEN 1 ELSE vec_length(embedding) != ? END"


@dataclass
class Diagnosis:
    """What :func:`diagnose` found; ``ok`` when nothing."""

    integrity: str = "ok"
    fts: str = "ok"
    missing_files: list[str] = field(default_factory=list)  # indexed, gone from disk
    new_files: list[str] = field(default_factory=list)  # on disk, not indexed
    changed_files: list[str] = field(default_factory=list)  # content differs from the index
    orphan_embeddings: int = 0  # vectors no chunk uses
    vectors_without_rows: int = 0  # vector table rows with no embeddings row
    rows_without_vectors: int = 0  # embeddings rows with no vector
    wrong_size_vectors: int = 0
    duplicate_headings: int = 0

    @property
    def ok(self) -> bool:
        return self.problems() == []

    def problems(self) -> list[str]:
        out = []
        if self.integrity != "ok":
            out.append(f"SQLite integrity check: {self.integrity}")
        if self.fts != "ok":
            out.append(f"full-text index: {self.fts}")
        for name, files in (("missing from disk", self.missing_files), ("not indexed", self.new_files), ("changed since indexed", self.changed_files)):
            if files:
                shown = ", ".join(files[:5]) + (" ..." if len(files) > 5 else "")
                out.append(f"{len(files)} file(s) {name}: {shown}")
        for name in ("orphan_embeddings", "vectors_without_rows", "rows_without_vectors", "wrong_size_vectors", "duplicate_headings"):
            if getattr(self, name):
                out.append(f"{getattr(self, name)} {name.replace('_', ' ')}")
        return out

    def as_dict(self) -> dict:
        return {"ok": self.ok, "problems": self.problems()}


def diagnose(settings: Settings, store: Store) -> Diagnosis:
    """Compare the store with itself and with the files under ``settings.roam_dir``."""
    d = Diagnosis()
    q = store.conn.execute
    d.integrity = "; ".join(r[0] for r in q("PRAGMA quick_check").fetchall())
    try:
        q("INSERT INTO headings_fts(headings_fts, rank) VALUES ('integrity-check', 1)")
    except DatabaseError as exc:
        d.fts = str(exc)
    known = store.file_states()
    if settings.roam_dir.is_dir():
        on_disk = dict(iter_org_files(settings.roam_dir, settings.exclude_globs))
        d.missing_files = sorted(known.keys() - on_disk.keys())
        d.new_files = sorted(on_disk.keys() - known.keys())
        for rel in sorted(on_disk.keys() & known.keys()):
            try:
                digest = hashlib.sha256(on_disk[rel].read_bytes()).hexdigest()
            except OSError:
                continue
            if digest != known[rel].hash:
                d.changed_files.append(rel)
    d.orphan_embeddings = q(
        "SELECT count(*) FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.hash = e.hash)"
    ).fetchone()[0]
    if store.has_vector_table():
        d.vectors_without_rows = q(
            f"SELECT count(*) FROM {VEC_TABLE} v WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.id = v.rowid)"
        ).fetchone()[0]
        d.rows_without_vectors = q(
            f"SELECT count(*) FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM {VEC_TABLE} v WHERE v.rowid = e.id)"
        ).fetchone()[0]
        dims = store.embedding_model().dims
        if dims:
            d.wrong_size_vectors = q(
                f"SELECT count(*) FROM {VEC_TABLE} WHERE {WRONG_SIZE}", (dims,)
            ).fetchone()[0]
    else:
        d.rows_without_vectors = q("SELECT count(*) FROM embeddings").fetchone()[0]
    d.duplicate_headings = q(
        "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM headings GROUP BY file, start_line HAVING n > 1)"
    ).fetchone()[0]
    return d


def repair(settings: Settings, store: Store) -> tuple[Diagnosis, Diagnosis]:
    """Fix what :func:`diagnose` finds; returns the diagnoses before and after.

    The caller must be the only writer (the daemon stopped, or this run on its writer).
    """
    before = diagnose(settings, store)
    if before.integrity != "ok":
        raise DatabaseError(f"database is corrupt ({before.integrity}); delete it to rebuild from the notes")
    q = store.conn.execute
    with store.transaction():
        if before.fts != "ok":
            q("INSERT INTO headings_fts(headings_fts) VALUES ('rebuild')")
        if store.has_vector_table():
            q(f"DELETE FROM {VEC_TABLE} WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.id = {VEC_TABLE}.rowid)")
            q(f"DELETE FROM embeddings WHERE NOT EXISTS (SELECT 1 FROM {VEC_TABLE} v WHERE v.rowid = embeddings.id)")
            dims = store.embedding_model().dims
            if dims:
                bad = [r[0] for r in q(f"SELECT rowid FROM {VEC_TABLE} WHERE {WRONG_SIZE}", (dims,))]
                for rowid in bad:
                    q(f"DELETE FROM {VEC_TABLE} WHERE rowid = ?", (rowid,))
                    q("DELETE FROM embeddings WHERE id = ?", (rowid,))
        else:
            q("DELETE FROM embeddings")
        orphans = [r[0] for r in q("SELECT hash FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.hash = e.hash)")]
        store._drop_unused_vectors(orphans)
        # Rows were deleted behind the in-memory vector index: make every reader reload.
        store._vectors_changed(reset=True)
        # Duplicated headings can only come from a bug; re-reading their files fixes them.
        dup_files = [r[0] for r in q(
            "SELECT DISTINCT f.path FROM headings h JOIN files f ON f.id = h.file"
            " GROUP BY h.file, h.start_line HAVING count(*) > 1"
        )]  # fmt: skip
        for path in dup_files + before.changed_files:
            q("UPDATE files SET size = -1, hash = '' WHERE path = ?", (path,))
    Indexer(settings, store).reconcile()
    return before, diagnose(settings, store)
