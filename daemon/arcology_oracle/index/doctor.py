"""Checking the index against the notes, and repairing it.

:func:`diagnose` is read-only: it lists every way the store disagrees with itself or with
the org files. :func:`repair` fixes them with the same writer the daemon uses: orphan rows
are deleted, the FTS index rebuilt, changed files re-read; a database SQLite itself
finds corrupt is deleted and rebuilt from the notes.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..config import Settings
from ..notes.files import iter_org_files, notes_dir_problem
from ..store import Store
from ..store.db import DatabaseError
from ..store.integrity import IntegrityReport
from .indexer import Indexer
from .parsing import ParseOptions, kept_out_whole
from .regular_files import read_regular_file


@dataclass
class Diagnosis(IntegrityReport):
    """What :func:`diagnose` found; ``ok`` when nothing. The counts are the store's own
    (:class:`~arcology_oracle.store.integrity.IntegrityReport`); the file lists compare
    it with the notes."""

    notes_dir_missing: str | None = None  # the notes directory, when it is none (missing, a file)
    other_notes_dir: str | None = None  # the index's own notes directory, when another was given
    given_dir: str | None = None  # the directory given, when it is another
    missing_files: list[str] = field(default_factory=list)  # indexed, gone from disk
    new_files: list[str] = field(default_factory=list)  # on disk, not indexed, not private
    changed_files: list[str] = field(default_factory=list)  # content differs from the index

    @property
    def ok(self) -> bool:
        return self.problems() == []

    def problems(self) -> list[str]:
        out = []
        if self.integrity != "ok":
            out.append(f"SQLite integrity check: {self.integrity}")
        if self.fts != "ok":
            out.append(f"full-text index: {self.fts}")
        if self.notes_dir_missing:
            said = notes_dir_problem(Path(self.notes_dir_missing)) or f"the notes directory {self.notes_dir_missing} was missing"
            out.append(f"{said}: nothing was compared with the notes")
        if self.other_notes_dir:
            out.append(f"the index holds the notes of {self.other_notes_dir}, not of {self.given_dir}: nothing was "
                       f"compared (give {self.other_notes_dir}, or `arcology-oracle index {self.given_dir}` to index these)")
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
    """Compare the store with itself and with the files under ``settings.roam_dir``
    (a problem of its own when that directory does not exist: an unmounted disk or a
    mistyped path is no agreement; and when the index holds another directory's notes
    (:meth:`~arcology_oracle.store.Store.notes_dir`): comparing would call every note of
    it missing, and a repair would throw them away)."""
    d = Diagnosis(**asdict(store.check_integrity()))
    known = store.file_states()
    own = store.notes_dir()
    if not settings.roam_dir.is_dir():
        d.notes_dir_missing = str(settings.roam_dir)
    elif known and own is not None and own != os.path.realpath(settings.roam_dir):
        d.other_notes_dir, d.given_dir = own, str(settings.roam_dir)
    else:
        on_disk = dict(iter_org_files(settings.roam_dir, settings.exclude_globs))
        d.missing_files = sorted(known.keys() - on_disk.keys())
        options, real_root = Indexer(settings, store).parse_options, os.path.realpath(settings.roam_dir)
        d.new_files = sorted(rel for rel in on_disk.keys() - known.keys() if _not_indexed(real_root, on_disk[rel], rel, options))
        for rel in sorted(on_disk.keys() & known.keys()):
            try:  # read as the indexer reads (a link may lead to a FIFO)
                read = read_regular_file(real_root, on_disk[rel])
            except OSError:
                continue
            if read is None or hashlib.sha256(read[0]).hexdigest() != known[rel].hash:
                d.changed_files.append(rel)  # (no regular file now: the next reconcile takes it out)
    return d


def _not_indexed(real_root: str, path: Path, rel: str, options: ParseOptions) -> bool:
    """Whether the file ``rel``, which the index does not hold, is a note it should hold:
    not when the privacy rule keeps it out whole (nothing of it is ever stored), nor when
    it is no regular file inside the notes directory (``real_root``). It is read as the
    indexer reads it, without blocking: a link may lead to a FIFO."""
    try:
        read = read_regular_file(real_root, path)
    except OSError:
        return True  # it cannot be read: not indexed
    return read is not None and not kept_out_whole(read[0], rel, options)


def repair(settings: Settings, store: Store) -> tuple[Diagnosis, Diagnosis]:
    """Fix what :func:`diagnose` finds; returns the diagnoses before and after.

    The caller must be the only writer (the daemon stopped, or this run on its writer).
    """
    before = diagnose(settings, store)
    if before.integrity != "ok":
        raise DatabaseError(f"database is corrupt ({before.integrity}); delete it to rebuild from the notes")
    store.repair_integrity(rebuild_fts=before.fts != "ok", reread=before.changed_files)
    if not before.other_notes_dir:  # (another directory's notes would replace the index's)
        Indexer(settings, store).reconcile()
    return before, diagnose(settings, store)
