"""The record of the notes and folders a capture created, so that forgetting every
capture of a note takes the note (and the folders made for it) away again, in whatever
order the captures are forgotten.

A capture into a note that does not exist creates it with a head (a file-level ``:ID:``
and ``#+title:``, :func:`~arcology_oracle.notes.capture.new_file_head`), and the folders
the note's path needs. The first capture's hash covers that head: forgotten while it is
the file's only text, the file goes (``Removal.whole_file``). Forgotten first, it takes
that proof with it, and the head would stay once the other captures are forgotten, while
forgetting them newest first removes the file. So the head written and the folders made
are recorded (:class:`CreatedNotes`), and a forget that would leave a file holding
exactly the head recorded for it, byte for byte (the same ID: org-roam writes heads that
look the same), removes the file instead (:meth:`Memory.forget`; Emacs holding it is
refused before, as for any forget; a file with another name, a hard link, is not deleted:
the capture is taken out and the head stays, or that name would keep the captured text).
Folders go only when recorded as made by the daemon and empty, deepest first, after
their note went.

The record is kept beside the database, ``capture-created.<database's name>`` (as
:mod:`.capture_places`' record, replaced whole the same way): for each real notes
directory, each note created (its real path relative to it) with its head, and the
folders made. It holds only what the daemon wrote (heads: an ID and a date or
``Inbox``) and names of notes and folders. It is written after the note (a note written
and not recorded keeps its head when its captures are forgotten: what the user may have
linked to, or written, is never taken on a guess); when it cannot be written or read,
that is logged and the heads stay. A note gone (removed by hand) leaves its entry at the
next write.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path, PurePosixPath

from .capture_places import read_roots, record_path, replace_record

log = logging.getLogger(__name__)

PREFIX = "capture-created."
VERSION = 1


class CreatedNotes:
    """The notes and folders captures created below ``root``, recorded beside the
    database ``db_path`` (module docstring). Thread-safe; its methods read and write
    files (call them from a worker thread)."""

    def __init__(self, root: Path, db_path: Path | str):
        self.root = root
        self.path = record_path(db_path, PREFIX)
        self._key = os.path.realpath(root)
        self._lock = threading.Lock()
        self._all: dict | None = None  # real notes directory -> {"notes": {rel: head}, "folders": [rel]}

    def head_of(self, rel: str) -> bytes | None:
        """The head the daemon wrote when it created the note ``rel`` (real, relative to
        the notes directory), or None when the record says it did not."""
        with self._lock:
            head = self._mine().get("notes", {}).get(rel)
        return None if head is None else head.encode("utf-8", "surrogateescape")

    def add(self, rel: str, head: bytes, folders: list[str]) -> None:
        """Record that the daemon created the note ``rel`` with ``head``, and the
        ``folders`` (all relative to the notes directory) for it. Logged, not raised,
        when it cannot be written: the head then stays after the forgets."""
        with self._lock:
            mine = self._mine()
            notes = {n: h for n, h in mine.get("notes", {}).items() if os.path.lexists(self.root / n)}
            notes[rel] = head.decode("utf-8", "surrogateescape")
            made = list(dict.fromkeys([*mine.get("folders", []), *folders]))
            made = [f for f in made if os.path.isdir(self.root / f)]
            self._save({"notes": notes, "folders": made})

    def forgotten(self, rel: str) -> None:
        """The note ``rel`` is gone: remove the folders the daemon made that hold it and
        are empty now, deepest first, and drop them and the note from the record."""
        with self._lock:
            mine = self._mine()
            made = list(mine.get("folders", []))
            parents = [p.as_posix() for p in PurePosixPath(rel).parents][:-1]  # deepest first, not the root
            gone = []
            for folder in parents:
                if folder not in made:
                    break
                try:
                    os.rmdir(self.root / folder)
                except OSError:
                    break  # not empty (or not there): it stays, and so do those above
                gone.append(folder)
            notes = {n: h for n, h in mine.get("notes", {}).items() if n != rel}
            if gone or len(notes) != len(mine.get("notes", {})):
                self._save({"notes": notes, "folders": [f for f in made if f not in gone]})
        if gone:
            log.info("removed %d empty folder(s) a capture had made", len(gone))

    def _mine(self) -> dict:
        if self._all is None:
            self._all = self._read()
        return self._all.get(self._key, {})

    def _save(self, mine: dict) -> None:
        new = {**(self._all or {}), self._key: mine}
        if self.path is not None:
            try:
                replace_record(self.path, {"version": VERSION, "roots": new})
            except OSError as exc:
                log.warning("cannot write %s (%s): the heads of the notes captures created stay when they are "
                            "forgotten", self.path, exc.strerror or exc)  # fmt: skip
                return
        self._all = new

    def _read(self) -> dict:
        if self.path is None:
            return {}
        try:
            return {
                str(root): {"notes": {str(n): str(h) for n, h in mine["notes"].items()},
                            "folders": [str(f) for f in mine["folders"]]}
                for root, mine in read_roots(self.path, VERSION).items()
            }  # fmt: skip
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.error("cannot read %s (%s): the notes captures created keep their heads when forgotten", self.path, exc)
            return {}
