"""Which notes directory is being written into a database: one at a time.

Every process that reads notes into a database (``arcology-oracle index``, the daemon)
holds, while it runs, a shared ``flock`` on ``<database>.notes-lock``, whose content is
the real path of its notes directory. Processes of the same directory share it (an
``index`` beside the daemon of its notes); one of another directory is refused, whichever
started first: two reconciles of different directories into one database each removed
the other's notes and put back their own, a mix of both. The kernel releases the lock
when a process ends, however it ends; the path left in the file then means nothing.

The content changes only under the exclusive lock, which is taken only when no one holds
the shared one: while any process holds the shared lock, every holder's directory is the
one the file names.
"""

from __future__ import annotations

import fcntl
import logging
import os
from pathlib import Path

from ..errors import OracleError
from ..store.db import open_lock_file

log = logging.getLogger(__name__)

UNGUARDED = "nothing keeps the notes of another directory out of this database"
ATTEMPTS = 3  # (another process may be writing its claim at the instant one looks)


class NotesClaimed(OracleError):
    """The database is being written from another notes directory, ``holder`` (its real path)."""

    def __init__(self, holder: str):
        super().__init__(f"the notes of {holder} are being written into this database")
        self.holder = holder


def claim_notes(db_path: Path | str, roam_dir: Path | str) -> int | None:
    """Hold the claim of ``roam_dir`` on the database at ``db_path``: the descriptor to
    close to let it go. :class:`NotesClaimed` while a process of another directory holds
    one (StoreError when the database's folder cannot be made); None, with a warning,
    where locks cannot be taken (nothing is kept out then)."""
    if str(db_path) == ":memory:":
        return None
    path, fd = open_lock_file(db_path, ".notes-lock", UNGUARDED)
    if fd is None:
        return None
    mine = os.fsencode(os.path.realpath(roam_dir))
    try:
        holder = _claim(fd, mine)
    except OSError as exc:  # a file system without locks (some network ones)
        os.close(fd)
        log.warning("cannot lock %s (%s): %s", path, exc.strerror or exc, UNGUARDED)
        return None
    if holder is not None:
        os.close(fd)
        raise NotesClaimed(os.fsdecode(holder))
    return fd


def _claim(fd: int, mine: bytes) -> bytes | None:
    """Take the shared lock of ``fd`` naming ``mine``: None once held, else the directory
    the holders write. (A conversion between shared and exclusive lets go of the lock
    first: another process may claim in between, so the content is read again after.)"""
    named = b""
    for _ in range(ATTEMPTS):
        fcntl.flock(fd, fcntl.LOCK_SH)  # waits only while a claim is being written
        named = os.pread(fd, 65536, 0)
        if named == mine:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # (only when no one else holds it)
        except BlockingIOError:
            continue
        os.ftruncate(fd, 0)
        os.pwrite(fd, mine, 0)
        fcntl.flock(fd, fcntl.LOCK_SH)
        if (named := os.pread(fd, 65536, 0)) == mine:
            return None
    return named
