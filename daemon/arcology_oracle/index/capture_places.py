"""Where a forget finds a capture again, and the record of the folders outside the
index's reach that captures were written to.

A capture may go into a file the index never reads: Emacs sends its
``org-roam-dailies-directory`` as ``dailies_dir``, and that folder may be hidden
(``.journal``) or left out by ``exclude_globs`` (the user keeps the journal from the AI).
The capture is the user's text, sent by the user: it is written there and never indexed
(:func:`left_out` says why, and the answer's ``note`` says so). Nothing the index leaves
out is read into it.

**Finding a capture** (:func:`files_holding`). The index places every heading it holds.
A capture it does not hold (tagged private, or in a left-out file) is looked for on
disk, in the notes that hold its ID: the capture inbox, the notes directly in the
configured dailies folder and in each recorded folder (newest name first; named as an
org note or as ``daily_file_format`` names a daily), then, when
none of those holds it, every note the index reads. Only the bytes of those notes are read, and only the ID is looked
for; which of them the forget may change is decided by its own checks
(:func:`~arcology_oracle.notes.capture.plan_forget`: only a heading the daemon wrote,
byte for byte as written), so looking in a recorded folder never makes a heading of the
user's there forgettable, nor tells that it exists.

**The record** (:class:`CapturePlaces`). Before a capture is written into a left-out
file, the folder it is in (relative to the notes directory) is added to a record
beside the database, ``capture-places.<database's name>`` (never in the notes
directory; ``rm index.sqlite3*`` leaves it, as it leaves the forget journal), so that a
forget still looks there after the daemon started again. It is JSON: for each real notes
directory, its folders. It holds folder names only, never a note's text, and grows by
one line for each new folder. It is replaced whole (written to ``.<its name>.tmp``,
synced, renamed over, the folder synced): a crash leaves the old record or the new one.
When it cannot be written, the capture is refused (409) before a byte of the note is
written: a capture the daemon writes can always be forgotten. A record that cannot be
read (damaged by hand) is logged and counts as empty: the next capture into a left-out
folder replaces it, with the folders known since. For an in-memory database the folders
are kept in memory only.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from ..config import Settings
from ..errors import Conflict
from ..notes.disk import sync_directory
from ..notes.files import is_excluded, is_indexable_path, iter_org_files
from .note_files import leads_out, read_note, write_all

log = logging.getLogger(__name__)

PREFIX = "capture-places."
VERSION = 1


def record_path(db_path: Path | str, prefix: str = PREFIX) -> Path | None:
    """Where the record named ``prefix`` is kept for the database ``db_path``; None for
    an in-memory one."""
    if str(db_path) == ":memory:":
        return None
    real = Path(os.path.realpath(db_path))
    return real.with_name(prefix + real.name)


def read_roots(path: Path, version: int) -> dict:
    """The ``roots`` of the record ``path`` (real notes directory -> what it records),
    {} when there is none; ValueError (or OSError, KeyError, TypeError) when it cannot
    be read or is of another ``version``."""
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    if data.get("version") != version:
        raise ValueError(f"version {data.get('version')!r}")
    return data["roots"]


def left_out(root: Path, rel: str, exclude_globs: Sequence[str]) -> str | None:
    """Why the index never reads the note ``rel`` (relative to the notes directory
    ``root``; it need not exist), as the index decides it (:func:`~arcology_oracle.notes.files.iter_org_files`):
    ``"exclude_globs"`` by its path or its real path through symlinks, ``"a hidden
    folder or file"`` or ``"a name that is not an org note's"`` by its path alone (a
    visible link to a hidden file is read); None when the index reads it, or when its
    real path is outside ``root`` (the write refuses that)."""
    real = os.path.relpath(os.path.realpath(root / rel), os.path.realpath(root)).replace(os.sep, "/")
    if real == os.pardir or real.startswith(os.pardir + "/"):
        return None
    if any(is_excluded(path, exclude_globs) for path in dict.fromkeys([rel, real])):
        return "exclude_globs"
    if any(part.startswith(".") for part in PurePosixPath(rel).parts):
        return "a hidden folder or file"
    if not is_indexable_path(rel):
        return "a name that is not an org note's"
    return None


def left_out_note(rel: str, why: str) -> str:
    """The answer's ``note`` for a capture written into the left-out note ``rel``."""
    return f"{rel} is left out of the index ({why}): written there, never indexed, so never recalled; forgetting it by its ID takes it back"


class CapturePlaces:
    """The left-out folders captures went to, for the notes directory ``root``, kept in
    the record of the database ``db_path`` (see the module docstring). Thread-safe; its
    methods read and write files (call them from a worker thread)."""

    def __init__(self, root: Path, db_path: Path | str):
        self.root = root
        self.path = record_path(db_path)
        self._key = os.path.realpath(root)
        self._lock = threading.Lock()
        self._all: dict[str, list[str]] | None = None  # real notes directory -> folders

    def folders(self) -> list[str]:
        """The folders recorded for this notes directory, oldest first."""
        with self._lock:
            return list(self._load().get(self._key, []))

    def add(self, folder: str) -> None:
        """Record ``folder`` (relative to the notes directory), on disk before it
        returns; Conflict, the record as it was, when it cannot be written."""
        folder = PurePosixPath(folder).as_posix()
        with self._lock:
            places = self._load()
            if folder in places.get(self._key, []):
                return
            new = {**places, self._key: [*places.get(self._key, []), folder]}
            if self.path is not None:
                self._write(new)
            self._all = new
        log.info("captures go to %s too, which the index leaves out: recorded in %s", folder, self.path or "memory")

    def _load(self) -> dict[str, list[str]]:
        if self._all is None:
            self._all = self._read()
        return self._all

    def _read(self) -> dict[str, list[str]]:
        if self.path is None:
            return {}
        try:
            return {str(root): [str(f) for f in folders] for root, folders in read_roots(self.path, VERSION).items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.error("cannot read %s (%s): forgets look only in the inbox, the dailies folder and the notes the "
                      "index reads until a capture into a left-out folder writes it anew", self.path, exc)  # fmt: skip
            return {}

    def _write(self, places: dict[str, list[str]]) -> None:
        assert self.path is not None
        try:
            replace_record(self.path, {"version": VERSION, "roots": places})
        except OSError as exc:
            raise Conflict(f"cannot record where the capture goes ({self.path}: {exc.strerror or exc}), so it could "
                           "not be forgotten after a restart: nothing was written", retry=False) from None  # fmt: skip


def replace_record(path: Path, record: dict) -> None:
    """Replace the record ``path`` (beside the database) with ``record`` as JSON, whole:
    written to ``.<its name>.tmp``, synced, renamed over, the folder synced; OSError
    (the record as it was) when it cannot be. One name: only the daemon holding the
    database's lock writes it, and a copy a crash left is written over by the next."""
    data = json.dumps(record, indent=1, sort_keys=True).encode() + b"\n"
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            write_all(fd, data, 0)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    sync_directory(path.parent)


def files_holding(settings: Settings, places: CapturePlaces, node_id: str) -> list[str]:
    """The notes (paths relative to the notes directory) whose bytes hold ``node_id``,
    in the order of the module docstring: the inbox and the notes directly in the
    dailies folder and each recorded folder first; the notes the index reads only when
    none of those holds it. Reads files: call it from a worker thread."""
    root = settings.roam_dir
    needle = node_id.encode("utf-8", "surrogateescape")

    def holds(rel: str) -> bool:
        data = read_note(root, rel)
        return data is not None and needle in data

    first = [PurePosixPath(settings.capture_inbox).as_posix()]
    # A daily named as daily_file_format says, though not an org note's name (".txt").
    names = dict.fromkeys(["*.org", "*" + PurePosixPath(settings.daily_file_format).suffix])
    for folder in [settings.dailies_dir, *places.folders()]:
        directory = root / folder
        if directory.is_dir() and not leads_out(root, str(folder)):
            dailies = {p for name in names if name != "*" for p in directory.glob(name)}
            first += [p.relative_to(root).as_posix() for p in sorted(dailies, reverse=True)]
    first = list(dict.fromkeys(first))
    found = [rel for rel in first if holds(rel)]
    if not found:
        seen = set(first)
        found = [rel for rel, _ in iter_org_files(root, settings.exclude_globs) if rel not in seen and holds(rel)]
    return found
