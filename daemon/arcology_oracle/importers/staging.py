"""The staging folders of imports (:mod:`.writing` stages an import's files in one, in
the roam directory): which folders are one, and removing those a killed import left,
which hold copies of chats, private ones too.

A staging folder is named :data:`STAGING_PREFIX` and the 8 characters
:func:`tempfile.mkdtemp` draws (``[a-z0-9_]``), and holds nothing but regular files
named ``N.tmp`` (``N`` digits). Anything else, whatever its name (a folder of the user's
called ``.arcology-import-archive``, one holding another file, a link or a folder), is
never touched.

A commit renames its ``N.tmp`` to ``N.swap`` (:func:`~.placing.swap_name`) before it
swaps it with the note, so the note's old version, or a version a sync tool had just put
there, lands at ``N.swap``, and one an interrupted commit leaves there (killed before the
swap back) makes the folder the user's. Older versions swapped ``N.tmp`` itself: in a
folder one of them left, an ``N.tmp`` may be the user's version. So a folder is removed
only when each ``N.tmp`` in it is still, byte for byte, what an import renders
(:func:`~.render.unchanged_since_import`: its ``:IMPORT_HASH:`` matches), as every file
an import stages is; a version the user or a sync tool wrote (any byte not the import's)
keeps its folder, and the log names the folder, never what it holds.

An import that ends (:func:`remove_batch`) removes the files it wrote there, each only
while it is the file written (its inode, size and time), then the folder if it is empty:
anything else put there meanwhile (a user's file a commit swapped out and could not give
back among them) stays, and the log names the folder, never what it holds.

A running import holds an exclusive ``flock`` on its folder (the kernel releases it
however the import ends): :func:`remove_stale_staging` never removes one it cannot lock.
It removes one it can when the folder (a file made, renamed or removed in it) did not
change for :data:`STALE_SECONDS` (an import does that before it stages) or, at the
daemon's start, for :data:`RECENT_SECONDS`: an import of an older version, which took no
lock, may be writing one changed later. Where the file system has no locks, only the
hour tells.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import stat
import time
from pathlib import Path

from .placing import identity, swap_name
from .render import unchanged_since_import

log = logging.getLogger(__name__)

STAGING_PREFIX = ".arcology-import-"
# A staging folder unchanged this long is a killed import's: the next import removes it.
STALE_SECONDS = 3600
# At the daemon's start, one no import holds is removed once unchanged this long.
RECENT_SECONDS = 600

_NAME = re.compile(re.escape(STAGING_PREFIX) + r"[a-z0-9_]{8}\Z")
_FILE = re.compile(r"[0-9]+\.tmp\Z")


def remove_stale_staging(roam: Path, now: float | None = None, *, any_age: bool = False) -> list[Path]:
    """Remove the staging folders (as the module docstring says what one is) below
    ``roam`` that no running import holds and that did not change for
    :data:`STALE_SECONDS`, or with ``any_age`` (the daemon's start, where the file system
    has locks) for :data:`RECENT_SECONDS`. Returns the paths removed."""
    now, removed = time.time() if now is None else now, []
    for path in roam.glob(STAGING_PREFIX + "*"):
        if not _NAME.match(path.name):
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue  # gone meanwhile, a file, a symlink
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                locks = True
            except BlockingIOError:
                continue  # a running import's
            except OSError:
                locks = False  # no locks on this file system
            names = _staged_files(fd)
            if names is None:
                continue  # not only an import's files: the user's
            if now - os.fstat(fd).st_mtime > (RECENT_SECONDS if any_age and locks else STALE_SECONDS):
                renderings = [_rendering(fd, name) for name in names]
                if None in renderings:  # (an older version's swap): the user's version
                    log.warning("left the import's staging folder %s: it holds a file the import did not render", path)
                    continue
                for name, made in zip(names, renderings):  # locked: no new import takes it meanwhile
                    if identity(os.lstat(name, dir_fd=fd)) != made:
                        raise OSError("changed since it was read")  # left, as a folder holding the user's
                    os.unlink(name, dir_fd=fd)
                os.rmdir(path)
                removed.append(path)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


def remove_batch(folder: Path, written: list[tuple[Path, tuple[int, int, int, int]]]) -> None:
    """Remove from the staging ``folder`` each file of ``written`` (its path, and its
    :func:`~.placing.identity` as written) still there as written, then the folder, unless
    it holds anything else: then it stays, and the log says so (see the module docstring)."""
    for tmp, made in written:
        for name in (tmp, swap_name(tmp)):  # (a commit interrupted just before a swap)
            with contextlib.suppress(OSError):
                st = os.lstat(name)
                if stat.S_ISREG(st.st_mode) and identity(st) == made:
                    os.unlink(name)
    try:
        os.rmdir(folder)
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("left the import's staging folder %s: it holds what the import did not write (%s)",
                    folder, exc.strerror or exc)  # fmt: skip


def _rendering(folder: int, name: str) -> tuple[int, int, int, int] | None:
    """The :func:`~.placing.identity` of the file ``name`` in the folder open as
    ``folder`` when its bytes are an import's rendering as written, else None."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    except OSError:
        return None
    try:
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read()
        st = os.fstat(fd)
    finally:
        os.close(fd)
    if not stat.S_ISREG(st.st_mode) or not unchanged_since_import(data.decode("utf-8", "surrogateescape")):
        return None
    return identity(st)


def _staged_files(fd: int) -> list[str] | None:
    """The names of the files in the folder open as ``fd``; None unless it holds
    nothing but regular files named ``N.tmp``."""
    names = []
    with os.scandir(fd) as entries:
        for entry in entries:
            if not (_FILE.match(entry.name) and stat.S_ISREG(entry.stat(follow_symlinks=False).st_mode)):
                return None
            names.append(entry.name)
    return names
