"""The forget journal: a record that lets a forget killed in the middle of its rewrite be
finished at the daemon's next start, instead of leaving part of the note twice (a
forget, :func:`.note_io.remove_from_note`, writes the bytes after the capture down over
it, then cuts the file).

**Contract.** Before the first byte of the note is written, :meth:`Journal.write` puts a
record in the database's real folder (``forget-journal.<database's name>``, which ``rm
index.sqlite3*`` does not match; never in the notes directory), on disk (file and
folder synced): the note's real roam directory and path, its inode (and device number,
not compared: a drive mounted again may get another), where the capture starts and
ends, the note's size, the SHA-256 of its bytes before the capture, and its bytes from
the capture on. It is removed (on disk) once the rewritten note is synced, or put back.
A record ends with its length and SHA-256: one torn by a kill is known as such.

:func:`settle` (at the daemon's start, holding its locks, before the index reads the
notes; before a forget, and before a capture, when a record is there: see
:func:`.note_io.journal_for` and :func:`.note_io.settled_for`) opens the note under a
write lease, as a forget does, and finds it:

- **unfinished**: the same file (inode), byte for byte a state the rewrite passes
  through: its size, its bytes before the capture, the first ``j`` bytes after it, then
  its own from ``start + j`` on. The rewrite is finished (written, cut, synced), the
  record removed, and a warning names the note repaired. Nothing else is: a note a
  capture shorter, or whose bytes are each the old or new one, may be the user's edit;
- **finished**: exactly the forget's result: the record is removed;
- **other** (other bytes, another file or a directory at its name, deleted from its
  folder, or below another notes directory): the note is not touched; the record, which
  holds its bytes from the capture on, goes to ``<record>.kept-<time>``, with a warning.
  A damaged record, or anything but a regular file at its path (a FIFO, a symbolic link:
  never followed nor waited on), goes to ``<record>.damaged-<time>`` (the path renamed).
  Either is removed at a start :data:`KEEP_DAYS` days later (:mod:`.journal_copies`);
- **not to be had now** (open in another program, read-only, on a read-only file
  system, its folder or the notes directory missing or empty, as a drive not mounted
  yet, an I/O error): nothing changes; a warning says the note may hold part of its
  text twice until the record, which stays, is settled at the next start, forget or
  capture into it (a forget is refused meanwhile, as a capture into that note: 409).
  :func:`settle` never raises (:func:`settle_at_start` logs anything unforeseen).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import stat
import threading
import time
from pathlib import Path

from ..errors import Conflict
from ..notes.disk import sync_directory
from .forget_record import MAGIC, Record, decode, encode, state_of  # noqa: F401 (part of this module's interface)
from .leases import LEASE_ATTEMPTS, prepare_leases, release_lease, take_lease
from .note_files import read_all, real_path_of, write_all

log = logging.getLogger(__name__)

PREFIX = "forget-journal."
KEEP_DAYS = 30  # a record set aside is removed at a start this long after (.journal_copies)

_places: dict[str, Path] = {}  # real notes directory -> its record's path
_locks: dict[Path, threading.Lock] = {}
_locks_lock = threading.Lock()


def journal_path(db_path: Path | str) -> Path | None:
    """Where the record of forgets is kept for the database ``db_path`` (see the module
    docstring); None for an in-memory database."""
    if str(db_path) == ":memory:":
        return None
    real = Path(os.path.realpath(db_path))
    return real.with_name(PREFIX + real.name)


def register(roam_dir: Path, db_path: Path | str) -> None:
    """Journal the forgets in the notes below ``roam_dir`` beside ``db_path`` (the index
    calls it when it starts: every forget goes through a started index)."""
    path = journal_path(db_path)
    if path is not None:
        _places[os.path.realpath(roam_dir)] = path


class Journal:
    """The record of one notes directory's forgets, at ``path`` (None: not journaled, the
    methods do nothing); see :func:`.note_io.journal_for`."""

    def __init__(self, path: Path | None, root: Path):
        self.path = path
        self.root = root

    def write(self, rel: str, fd: int, data: bytes, start: int, end: int, *, named: bool = False) -> None:
        """Put the record of a forget removing ``[start, end)`` of the note ``rel`` (open
        as ``fd``, bytes ``data``) on disk; Conflict (the note not changed) when it
        cannot be. ``named``: the log may name the note (the index holds it as public),
        as a start that settles the record then does."""
        if self.path is None:
            return
        st = os.fstat(fd)
        record = Record(os.path.realpath(self.root), rel, st.st_dev, st.st_ino, start, end, len(data),
                        hashlib.sha256(data[:start]).hexdigest(), data[start:], named)  # fmt: skip
        mine = False  # a regular file at the path, truncated here: only then is it removed again
        try:
            out = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
            try:
                if not (mine := stat.S_ISREG(os.fstat(out).st_mode)):
                    raise OSError(errno.EEXIST, "not a regular file")
                write_all(out, encode(record), 0)
                os.fsync(out)
            finally:
                os.close(out)
            sync_directory(self.path.parent)
        except OSError as exc:
            if mine:
                _remove(self.path)
            raise Conflict(f"cannot write the record that lets a forget be finished after a crash ({self.path}: "
                           f"{exc.strerror or exc}): {rel} not changed", retry=False) from None  # fmt: skip

    def clear(self) -> None:
        """Remove the record (the note is as the forget left it, or as it was)."""
        if self.path is not None:
            _remove(self.path)


def place_of(root: Path) -> tuple[Path, threading.Lock] | None:
    """The record's path for the notes directory ``root``, and the lock a forget (and a
    capture that finds a record) holds; None when forgets in ``root`` are not journaled."""
    path = _places.get(os.path.realpath(root))
    if path is None:
        return None
    with _locks_lock:
        return path, _locks.setdefault(path, threading.Lock())


def pending(path: Path) -> Record | None:
    """The record at ``path``, when there is one that can be read."""
    found = _read(path)
    return found if isinstance(found, Record) else None


def settle_at_start(db_path: Path | str, roam_dir: Path) -> str:
    """At the daemon's start (its locks held, on the main thread): :func:`settle` the
    record of ``db_path``'s forgets, if any; never raises."""
    try:
        prepare_leases()
        path = journal_path(db_path)
        return settle(path, roam_dir) if path is not None and os.path.lexists(path) else "none"
    except Exception:  # never keep the daemon from starting
        log.exception("could not look at the forget record of %s", db_path)
        return "error"


def settle(path: Path, root: Path) -> str:
    """Finish, drop or move aside the record at ``path`` (see the module docstring);
    ``root`` is the daemon's notes directory. Returns what was done: ``"none"`` (no
    record), ``"repaired"``, ``"finished"``, ``"kept"``, ``"damaged"``, ``"busy"`` (the
    note cannot be had now: the record stays) or ``"error"`` (an I/O error: the record
    stays, logged)."""
    record = _read(path)
    if isinstance(record, str):
        return record
    if record is None:
        try:
            aside = _move_aside(path, "damaged")
        except OSError as exc:
            log.error("the forget record %s is damaged and cannot be moved aside (%s)", path, exc.strerror or exc)
            return "error"
        log.warning("the forget record %s is damaged (cut short by a crash while it was written, before its forget "
                    "touched any note), or is no record at all: moved to %s (kept %d days); no note was changed",
                    path, aside, KEEP_DAYS)  # fmt: skip
        return "damaged"
    if record.root != os.path.realpath(root):
        return _keep(path, record, f"it is below another notes directory ({record.root})")
    opened = _open_note(record)
    if isinstance(opened, tuple):
        kind, why = opened
        return _keep(path, record, why) if kind == "other" else _wait(path, record, why, "busy")
    fd, state = opened, "other"
    try:
        if not take_lease(fd, LEASE_ATTEMPTS):
            return _wait(path, record, "it is open in another program", "busy")
        try:
            state = state_of(read_all(fd), record)
            if state == "unfinished":
                write_all(fd, record.tail, record.start)
                os.ftruncate(fd, record.start + len(record.tail))
                os.fsync(fd)
                log.warning("repaired %s: a forget there was interrupted (the daemon was stopped in the middle of its "
                            "rewrite); it is finished now, so no text is there twice", record.shown)  # fmt: skip
        finally:
            release_lease(fd)
    except OSError as exc:
        return _wait(path, record, f"it cannot be read or written: {exc.strerror or exc}", "error")
    finally:
        os.close(fd)
    if state == "other":
        return _keep(path, record, "it was changed since")
    _remove(path)
    return "repaired" if state == "unfinished" else "finished"


def _read(path: Path) -> Record | str | None:
    """The record at ``path``; None when it is damaged or not a regular file (never
    opened through a symbolic link, never waited on); ``"none"`` when there is none,
    ``"error"`` (logged) when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        return "none"
    except OSError as exc:  # ELOOP: a symbolic link; ENXIO: a socket; the others: a device
        return None if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EOPNOTSUPP, errno.ENODEV) else _unreadable(path, exc)
    try:
        return decode(read_all(fd)) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except OSError as exc:
        return _unreadable(path, exc)
    finally:
        os.close(fd)


def _unreadable(path: Path, exc: OSError) -> str:
    log.error("cannot read the forget record %s (%s): left as it is", path, exc.strerror or exc)
    return "error"


def _open_note(record: Record) -> int | tuple[str, str]:
    """The record's note open for writing, when it is the same file (its inode); else
    ``("other", why)`` when something else positively is there, or ``("busy", why)``
    when it cannot be had now (the record stays)."""
    note = os.path.join(record.root, record.rel)
    try:
        fd = os.open(note, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        if os.path.isdir(os.path.dirname(note)) and not os.path.lexists(note) and _holds_anything(record.root):
            return "other", "it no longer exists"  # (a link to nothing: maybe a drive not mounted yet)
        return "busy", "it, its folder or the notes directory is not there, or is empty (a drive not mounted yet?)"
    except IsADirectoryError:
        return "other", "a directory has its name now"
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
            return "busy", "another program holds it"
        return "busy", f"it cannot be opened for writing: {exc.strerror or exc}"
    try:
        st = os.fstat(fd)
        why = ("busy", "it is read-only (no write permission)") if not st.st_mode & 0o222 else None
        if not stat.S_ISREG(st.st_mode):
            why = ("other", "it is not a regular file now")
        elif Path(real_path_of(Path(record.root), fd, record.rel)).parts[:1] == (os.pardir,):
            why = ("other", "it is a link to a file outside the notes directory now")
        elif st.st_ino != record.ino:
            why = ("other", "another file has its name now")
    except OSError as exc:
        why = ("busy", exc.strerror or str(exc))
    if why is None:
        return fd
    os.close(fd)
    return why


def _holds_anything(directory: str) -> bool:
    try:
        with os.scandir(directory) as entries:
            return next(entries, None) is not None
    except OSError:
        return False


def _wait(path: Path, record: Record, why: str, state: str) -> str:
    log.warning("a forget in %s was interrupted and cannot be finished now (%s): the note may hold part of its text "
                "twice until it is; the record %s stays, for the next start, forget or capture into it",
                record.shown, why, path)  # fmt: skip
    return state


def _keep(path: Path, record: Record, why: str) -> str:
    try:
        aside = _move_aside(path, "kept")
    except OSError as exc:
        log.error("a forget in %s was interrupted, but %s: the note was not touched, and its record %s cannot be "
                  "moved aside (%s)", record.shown, why, path, exc.strerror or exc)  # fmt: skip
        return "error"
    log.warning("a forget in %s was interrupted, but %s: the note was not touched; its bytes from byte %d on, as they "
                "were before the forget, are kept in %s for %d days", record.shown, why, record.start, aside, KEEP_DAYS)  # fmt: skip
    return "kept"


def _move_aside(path: Path, kind: str) -> Path:
    stamp, n = time.strftime("%Y%m%dT%H%M%S", time.localtime()), 1
    aside = path.with_name(f"{path.name}.{kind}-{stamp}")
    while os.path.lexists(aside):
        n += 1
        aside = path.with_name(f"{path.name}.{kind}-{stamp}-{n}")
    os.rename(path, aside)
    # Set aside now: kept KEEP_DAYS from now (.journal_copies, which reads the time in the
    # name too: the times of another user's record cannot be set).
    with contextlib.suppress(OSError):
        os.utime(aside, follow_symlinks=False)
    sync_directory(path.parent)
    return aside


def _remove(path: Path) -> None:
    """Remove the record (on disk); a failure is logged: the next :func:`settle` finds
    the note finished and removes it then."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        log.error("cannot remove the forget record %s (%s)", path, exc.strerror or exc)
        return
    sync_directory(path.parent)
