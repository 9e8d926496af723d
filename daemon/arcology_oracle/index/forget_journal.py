"""The forget journal: a record that lets a forget killed in the middle of its rewrite be
finished at the daemon's next start, instead of leaving part of the note twice.

A forget (:func:`.note_io.remove_from_note`) rewrites the note in place: the bytes after
the capture are written down over it, then the file is cut to its new size. A kill in
between leaves the note's bytes up to the capture, then some of those after it twice.

**Contract.** Before the first byte of the note is written, :meth:`Journal.write` puts a
record beside the database (``<database>.forget-journal``, never in the notes
directory), on disk (the file and its directory synced): the note's real roam directory
and path, its identity (device, inode), where the capture starts and ends, the size of
the note, the SHA-256 of its bytes before the capture, and its bytes from the capture's
start to its end (they hold everything the rewrite moves). The record is removed (again
on disk) once the rewritten note is synced, or once it is put back as it was. A record
ends with its own length (in its header) and SHA-256, so a record torn by a kill while it
was written is known as such: its forget had not begun, so no note was touched.

:func:`settle` (at the daemon's start, holding its locks, before the index reads the
notes; and before each forget, when an earlier one left its record) opens the note under
a write lease, as a forget does, and finds it:

- **unfinished**: the same file, byte for byte a state the rewrite passes through (as it
  was, the bytes after the capture partly or wholly written down, not yet cut; or cut
  with some of them not yet on disk, after a power loss): the rewrite is finished
  (written, cut, synced), the record removed, and one warning names the note repaired;
- **finished**: the note is exactly the forget's result: the record is removed;
- **anything else** (edited, replaced, moved or deleted since, or below another notes
  directory than the daemon's): the note is not touched; the record, which holds the
  note's bytes from the capture on, is moved aside to ``<record>.kept-<time>`` and a
  warning names it. A damaged record goes to ``<record>.damaged-<time>`` alike;
- **open in another program** (no lease): nothing changes; the record stays for the
  next start or forget (a forget is refused meanwhile: 409, try again).

:func:`settle` never raises for a record, damaged or not (:func:`settle_at_start` logs
anything unforeseen and lets the daemon start).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import Conflict
from .leases import LEASE_ATTEMPTS, prepare_leases, release_lease, take_lease
from .note_files import open_note, read_all, write_all

log = logging.getLogger(__name__)

SUFFIX = ".forget-journal"
MAGIC = b"arcology-oracle forget record 1\n"
_SHA_TAG = b"sha256:"
_TRAILER = len(_SHA_TAG) + 64 + 1

_places: dict[str, Path] = {}  # real notes directory -> its record's path
_locks: dict[Path, threading.Lock] = {}
_locks_lock = threading.Lock()


def journal_path(db_path: Path | str) -> Path | None:
    """Where the record of forgets is kept for the database ``db_path`` (beside its real
    path, as the daemon's ``<database>.lock``); None for an in-memory database."""
    if str(db_path) == ":memory:":
        return None
    return Path(os.path.realpath(db_path) + SUFFIX)


def register(roam_dir: Path, db_path: Path | str) -> None:
    """Journal the forgets in the notes below ``roam_dir`` beside ``db_path`` (the index
    calls it when it starts: every forget goes through a started index)."""
    path = journal_path(db_path)
    if path is not None:
        _places[os.path.realpath(roam_dir)] = path


@dataclass(frozen=True)
class Record:
    """A parsed record: the note ``rel`` below the real notes directory ``root``, file
    ``(dev, ino)`` of ``size`` bytes, the capture at ``[start, end)``, ``prefix_sha256``
    of the bytes before it, ``rest`` its bytes from ``start`` on."""

    root: str
    rel: str
    dev: int
    ino: int
    start: int
    end: int
    size: int
    prefix_sha256: str
    rest: bytes

    @property
    def tail(self) -> bytes:
        """What the rewrite writes at ``start``: the bytes after the capture."""
        return self.rest[self.end - self.start :]


def encode(record: Record) -> bytes:
    """``record`` as its file holds it: :data:`MAGIC`, one line of JSON (the fields but
    ``rest``, and ``rest_length``), ``rest``, then ``sha256:`` and the hex SHA-256 of all
    that, and a line ending."""
    header = {k: getattr(record, k) for k in ("root", "rel", "dev", "ino", "start", "end", "size", "prefix_sha256")}
    body = MAGIC + json.dumps({**header, "rest_length": len(record.rest)}, sort_keys=True).encode() + b"\n" + record.rest
    return body + _SHA_TAG + hashlib.sha256(body).hexdigest().encode() + b"\n"


def decode(data: bytes) -> Record | None:
    """The record ``data`` holds, or None when it is torn or damaged."""
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + _TRAILER:
        return None
    body, trailer = data[:-_TRAILER], data[-_TRAILER:]
    if trailer != _SHA_TAG + hashlib.sha256(body).hexdigest().encode() + b"\n":
        return None
    line_end = body.find(b"\n", len(MAGIC))
    if line_end < 0:
        return None
    try:
        header = json.loads(body[len(MAGIC) : line_end])
        rest = body[line_end + 1 :]
        numbers = (int(header[k]) for k in ("dev", "ino", "start", "end", "size"))
        record = Record(str(header["root"]), str(header["rel"]), *numbers, str(header["prefix_sha256"]), rest)
    except (ValueError, KeyError, TypeError):
        return None
    if header.get("rest_length") != len(rest) or not 0 <= record.start <= record.end <= record.size:
        return None
    return record if record.size - record.start == len(rest) else None


def state_of(found: bytes, record: Record) -> str:
    """``"finished"``, ``"unfinished"`` or ``"other"``: what the note's bytes ``found``
    are to the forget of ``record`` (see the module docstring)."""
    start, rest, tail = record.start, record.rest, record.tail
    if len(found) < start or hashlib.sha256(found[:start]).hexdigest() != record.prefix_sha256:
        return "other"
    now = found[start:]
    if now == tail:
        return "finished"
    n = len(tail)
    if len(now) == len(rest) and now[n:] == rest[n:] and _old_or_new(now[:n], rest[:n], tail):
        return "unfinished"  # not cut yet
    if len(now) == n and _old_or_new(now, rest[:n], tail):
        return "unfinished"  # cut, some written bytes lost with the power
    return "other"


def _old_or_new(found: bytes, old: bytes, new: bytes) -> bool:
    """Whether each byte of ``found`` is the one of ``old`` or of ``new`` at its place."""
    step = 1 << 16
    for i in range(0, len(found), step):
        f, o, n = found[i : i + step], old[i : i + step], new[i : i + step]
        if f != o and f != n and any(a != b and a != c for a, b, c in zip(f, o, n)):
            return False
    return True


class Journal:
    """The record of one notes directory's forgets, at ``path`` (None: not journaled, the
    methods do nothing); see :func:`journal_for`."""

    def __init__(self, path: Path | None, root: Path):
        self.path = path
        self.root = root

    def write(self, rel: str, fd: int, data: bytes, start: int, end: int) -> None:
        """Put the record of a forget removing ``[start, end)`` of the note ``rel`` (open
        as ``fd``, bytes ``data``) on disk; Conflict (the note not changed) when it
        cannot be."""
        if self.path is None:
            return
        st = os.fstat(fd)
        record = Record(os.path.realpath(self.root), rel, st.st_dev, st.st_ino, start, end, len(data),
                        hashlib.sha256(data[:start]).hexdigest(), data[start:])  # fmt: skip
        try:
            out = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
            try:
                write_all(out, encode(record), 0)
                os.fsync(out)
            finally:
                os.close(out)
            _sync_directory(self.path.parent)
        except OSError as exc:
            _remove(self.path)
            raise Conflict(f"cannot write the record that lets a forget be finished after a crash ({self.path}: "
                           f"{exc.strerror or exc}): {rel} not changed") from None  # fmt: skip

    def clear(self) -> None:
        """Remove the record (the note is as the forget left it, or as it was)."""
        if self.path is not None:
            _remove(self.path)


@contextmanager
def journal_for(root: Path) -> Iterator[Journal]:
    """The :class:`Journal` of the notes directory ``root`` (one that records nothing
    when none is registered), held for one forget at a time; a record an earlier forget
    left is settled first (Conflict when it cannot be now)."""
    path = _places.get(os.path.realpath(root))
    if path is None:
        yield Journal(None, root)
        return
    with _locks_lock:
        lock = _locks.setdefault(path, threading.Lock())
    with lock:
        if os.path.lexists(path):
            settle(path, root)
            if os.path.lexists(path):
                raise Conflict("an earlier forget was interrupted and cannot be finished now (its note may be open in "
                               "another program; the daemon's log says why): not changed; try again")  # fmt: skip
        yield Journal(path, root)


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
    record), ``"repaired"``, ``"finished"``, ``"kept"``, ``"damaged"``, ``"busy"`` or
    ``"error"`` (an I/O error: the record stays, logged)."""
    try:
        with open(path, "rb") as fh:
            record = decode(fh.read())
    except FileNotFoundError:
        return "none"
    except OSError as exc:
        log.error("cannot read the forget record %s (%s): left as it is", path, exc.strerror or exc)
        return "error"
    if record is None:
        try:
            aside = _move_aside(path, "damaged")
        except OSError as exc:
            log.error("the forget record %s is damaged and cannot be moved aside (%s)", path, exc.strerror or exc)
            return "error"
        log.warning("the forget record %s is damaged (cut short by a crash while it was written, before its forget "
                    "touched any note): moved to %s; no note was changed", path, aside)  # fmt: skip
        return "damaged"
    if record.root != os.path.realpath(root):
        return _keep(path, record, f"it is below another notes directory ({record.root})")
    if not os.path.isdir(os.path.dirname(os.path.join(record.root, record.rel))):
        return _keep(path, record, "it no longer exists")  # (open_note would make its directory anew)
    try:
        opened = open_note(Path(record.root), record.rel, append=False, create=False)
    except Conflict as exc:
        return _keep(path, record, str(exc))
    if opened is None:
        return _keep(path, record, "it no longer exists")
    fd, st, _ = opened
    try:
        if (st.st_dev, st.st_ino) != (record.dev, record.ino):
            return _keep(path, record, "another file has its name now")
        if not take_lease(fd, LEASE_ATTEMPTS):
            log.warning("a forget in %s was interrupted, and the note is open in another program: it will be finished "
                        "at the next start or forget (the record is %s)", record.rel, path)  # fmt: skip
            return "busy"
        try:
            state = state_of(read_all(fd), record)
            if state == "other":
                return _keep(path, record, "it was changed since")
            if state == "unfinished":
                write_all(fd, record.tail, record.start)
                os.ftruncate(fd, record.start + len(record.tail))
                os.fsync(fd)
                log.warning("repaired %s: a forget there was interrupted (the daemon was stopped in the middle of its "
                            "rewrite); it is finished now, so no text is there twice", record.rel)  # fmt: skip
        finally:
            release_lease(fd)
    except OSError as exc:
        log.error("cannot finish the interrupted forget in %s (%s): the record %s stays for the next start",
                  record.rel, exc.strerror or exc, path)  # fmt: skip
        return "error"
    finally:
        os.close(fd)
    _remove(path)
    return "repaired" if state == "unfinished" else "finished"


def _keep(path: Path, record: Record, why: str) -> str:
    try:
        aside = _move_aside(path, "kept")
    except OSError as exc:
        log.error("a forget in %s was interrupted, but %s: the note was not touched, and its record %s cannot be "
                  "moved aside (%s)", record.rel, why, path, exc.strerror or exc)  # fmt: skip
        return "error"
    log.warning("a forget in %s was interrupted, but %s: the note was not touched; its bytes from byte %d on, as they "
                "were before the forget, are kept in %s", record.rel, why, record.start, aside)  # fmt: skip
    return "kept"


def _move_aside(path: Path, kind: str) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime())
    aside = path.with_name(f"{path.name}.{kind}-{stamp}")
    n = 1
    while os.path.lexists(aside):
        n += 1
        aside = path.with_name(f"{path.name}.{kind}-{stamp}-{n}")
    os.rename(path, aside)
    _sync_directory(path.parent)
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
    _sync_directory(path.parent)


def _sync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a directory
    finally:
        os.close(fd)
