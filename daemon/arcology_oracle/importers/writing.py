"""Writing an import's org files: staged first, renamed into place at the end, never over
the user's edits.

:class:`ImportBatch` takes the rendered files of an export one at a time
(:meth:`~ImportBatch.stage`): each is compared with the file of the same ``:ID:`` below
the target directory (found by reading the file-level drawers there once), and only a
new or changed file is written, to a temporary file in a hidden staging directory of the
roam directory (which neither the walker nor the watcher reads). Nothing under the
target changes until :meth:`~ImportBatch.commit`, which the command calls only after the
whole export was read and rendered: an export that turns out malformed half-way imports
nothing (:meth:`~ImportBatch.discard` removes the staging directory; one left by a killed
import is removed by the next after an hour). Commit renames each
staged file over its target (same file system, so each file is whole or absent), keeping
the old file's permission bits.

Skipped, with the reason in :attr:`ImportSummary.skipped`: a file edited since it was
imported (its ``:IMPORT_HASH:`` no longer matches: the user's edits win; delete the file
to import it again), a file of the chosen name that is not this conversation's, a file
Emacs holds the lock of (unsaved edits), and a file that changed between staging and
commit.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..notes.disk import emacs_holds_lock, read_text, umask
from .render import RenderedFile, file_id_of, unchanged_since_import

HEAD_BYTES = 4096
STAGING_PREFIX = ".arcology-import-"
# A staging directory this old is a killed import's: the next import removes it.
STALE_SECONDS = 3600


class DuplicateConversation(ValueError):
    """Two conversations of one export map to the same file (the same id)."""


@dataclass
class ImportSummary:
    """What an import did, by root-relative path."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class _Staged:
    tmp: Path
    before: os.stat_result | None


class ImportBatch:
    """The files of one import, staged below ``roam_dir`` and written into ``target``
    (a directory inside ``roam_dir``) by :meth:`commit`."""

    def __init__(self, roam_dir: Path, target: Path):
        self.roam = roam_dir.resolve()
        self.target = target
        self.existing = existing_ids(target)
        self.summary = ImportSummary()
        self._staging: Path | None = None
        self._pending: dict[Path, _Staged] = {}
        self._seen: set[str] = set()
        remove_stale_staging(self.roam)

    def rel(self, path: Path) -> str:
        return path.resolve().relative_to(self.roam).as_posix()

    def stage(self, rendered: RenderedFile) -> None:
        """Compare ``rendered`` with its file on disk and stage it when it is new or changed."""
        if rendered.id in self._seen:
            raise DuplicateConversation(f"two conversations have the same id (file ID {rendered.id})")
        self._seen.add(rendered.id)
        path = self.existing.get(rendered.id) or self.target / rendered.filename
        rel = self.rel(path)
        try:
            before = os.stat(path)
            old: str | None = read_text(path)
        except FileNotFoundError:
            before, old = None, None
        if old is not None:
            if old == rendered.text:
                self.summary.unchanged.append(rel)
                return
            if file_id_of(old) != rendered.id:
                self.summary.skipped[rel] = "a file of that name holds another note"
                return
            if not unchanged_since_import(old):
                self.summary.skipped[rel] = "edited since it was imported (your edits stay; delete the file to import it again)"
                return
        if self._staging is None:
            self._staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=self.roam))
        tmp = self._staging / f"{len(self._pending)}.tmp"
        tmp.write_bytes(rendered.text.encode("utf-8", "surrogateescape"))
        self._pending[path] = _Staged(tmp, before)

    def commit(self) -> ImportSummary:
        """Rename every staged file into place (see the module docstring); return the summary."""
        try:
            new_mode = 0o666 & ~umask()
            for path, staged in self._pending.items():
                rel = self.rel(path)
                if emacs_holds_lock(path):
                    self.summary.skipped[rel] = "Emacs has unsaved edits of it (save them, then import again)"
                    continue
                try:
                    now: os.stat_result | None = os.stat(path)
                except FileNotFoundError:
                    now = None
                if _identity(now) != _identity(staged.before):
                    self.summary.skipped[rel] = "it changed while importing (import again)"
                    continue
                path.parent.mkdir(parents=True, exist_ok=True)
                os.chmod(staged.tmp, (staged.before.st_mode & 0o7777) if staged.before else new_mode)
                os.replace(staged.tmp, path)
                (self.summary.updated if staged.before else self.summary.added).append(rel)
        finally:
            self.discard()
        return self.summary

    def discard(self) -> None:
        """Forget everything staged (nothing under the target was touched)."""
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None
        self._pending.clear()


def remove_stale_staging(roam: Path, now: float | None = None) -> None:
    """Remove staging directories older than :data:`STALE_SECONDS` (left by a killed import)."""
    now = time.time() if now is None else now
    for path in roam.glob(STAGING_PREFIX + "*"):
        try:
            if path.is_dir() and not path.is_symlink() and now - path.stat().st_mtime > STALE_SECONDS:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            continue


def existing_ids(target: Path) -> dict[str, Path]:
    """File-level ``:ID:`` -> path of the org files below ``target`` (hidden ones left out;
    of two files with one ID, the first in sorted order)."""
    found: dict[str, Path] = {}
    if not target.is_dir():
        return found
    for path in sorted(target.rglob("*.org")):
        if any(part.startswith(".") for part in path.relative_to(target).parts) or not path.is_file():
            continue
        try:
            with open(path, "rb") as fh:
                head = fh.read(HEAD_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        file_id = file_id_of(head)
        if file_id:
            found.setdefault(file_id, path)
    return found


def _identity(st: os.stat_result | None) -> tuple[int, int, int] | None:
    return None if st is None else (st.st_size, st.st_mtime_ns, st.st_ino)
