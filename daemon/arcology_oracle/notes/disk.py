"""Note files on disk as Emacs leaves them: its lock, or an auto-save file newer than the
note, on a note with unsaved edits; text that survives a rewrite byte for byte, the
permission bits a new file gets, a read that a FIFO in a note's place cannot hang, and a
folder's new names made lasting.

Shared by the daemon's own writes (:mod:`arcology_oracle.index.memory`) and the import
(:mod:`arcology_oracle.importers.writing`).
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path


def emacs_holds_lock(path: Path) -> bool:
    """Whether Emacs holds ``path``'s lock (``.#NAME``: unsaved edits).

    Emacs puts the lock beside the file's true name (``buffer-file-truename``, every
    symlink resolved: checked with Emacs 28), so a note reached through a symlink, as a
    daily linked into the dailies folder, is locked beside its target, under the
    target's name: both places are looked at.
    A lock naming this host and a process that no longer exists is stale (Emacs crashed)
    and does not count, as Emacs itself decides. A lock that cannot be looked at (a name
    too long to hold ``.#``, a directory that cannot be searched) is no lock: Emacs could
    not have made it, and the write itself then reports what is wrong with the path."""
    try:
        true_name = Path(os.path.realpath(path))
    except (OSError, ValueError):
        true_name = path
    return any(_lock_held(p) for p in dict.fromkeys([path, true_name]))


def emacs_holds(path: Path) -> bool:
    """Whether Emacs holds ``path`` with unsaved edits: its lock (:func:`emacs_holds_lock`),
    or, for an Emacs that makes no lock file (``create-lockfiles`` nil), an auto-save file
    newer than the note (:func:`emacs_auto_saved_since`). Either way a write now would be
    dropped, or fought over, at Emacs's next save of its buffer."""
    return emacs_holds_lock(path) or emacs_auto_saved_since(path)


def emacs_auto_saved_since(path: Path) -> bool:
    """Whether Emacs's auto-save file of ``path`` (``#NAME#`` beside it, as Emacs names it
    by default) is newer than ``path``: Emacs auto-saved edits it has not saved (a save
    deletes the auto-save file). Looked for beside the name and beside the true name, as
    :func:`emacs_holds_lock` does; an auto-save file of a note not yet made counts (a new
    buffer's edits). One that cannot be looked at is none."""
    try:
        true_name = Path(os.path.realpath(path))
    except (OSError, ValueError):
        true_name = path
    return any(_auto_saved_since(p) for p in dict.fromkeys([path, true_name]))


def _auto_saved_since(path: Path) -> bool:
    try:
        saved = os.stat(path.with_name("#" + path.name + "#")).st_mtime_ns
    except (OSError, ValueError):
        return False
    try:
        return saved > os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False


def _lock_held(path: Path) -> bool:
    """Whether a live Emacs lock for ``path`` stands beside it (see :func:`emacs_holds_lock`)."""
    lock = path.with_name(".#" + path.name)
    try:
        target = os.readlink(lock)
    except FileNotFoundError:
        return False
    except OSError:
        try:  # a lock file rather than a symlink (some file systems)
            return lock.exists()
        except OSError:
            return False
    _, _, rest = target.partition("@")
    host, _, pid = rest.rpartition(".")
    pid = pid.split(":", 1)[0]
    if host == socket.gethostname() and pid.isdigit():
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
    return True


def read_text(path: Path) -> str:
    """The file's text; bytes that are not UTF-8 survive a rewrite unchanged."""
    return path.read_bytes().decode("utf-8", errors="surrogateescape")


def umask() -> int:
    """The process umask, read without changing it where /proc allows."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    return 0o022


def read_regular_file(path: Path | str, limit: int | None = None) -> bytes | None:
    """The bytes of the regular file at ``path`` (its first ``limit`` with a limit), or
    None for anything else or a file that cannot be read. Opened without blocking and
    checked once open: a FIFO in its place must not hang the reader."""
    return read_regular_file_with_stat(path, limit)[0]


def read_regular_file_with_stat(
    path: Path | str, limit: int | None = None, *, follow: bool = True
) -> tuple[bytes | None, os.stat_result | None]:
    """:func:`read_regular_file`, and the stat of what was opened (None when nothing
    was): the file read, even if ``path`` names another one by the time it returns.
    Without ``follow``, a symlink at ``path`` is not followed: nothing is opened."""
    nofollow = 0 if follow else os.O_NOFOLLOW
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | nofollow | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None, None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, st
        parts, size = [], 0
        while limit is None or size < limit:
            part = os.read(fd, 1 << 20 if limit is None else min(1 << 20, limit - size))
            if not part:
                break
            parts.append(part)
            size += len(part)
        return b"".join(parts), st
    except OSError:
        return None, None
    finally:
        os.close(fd)


def sync_directory(directory: Path) -> None:
    """The folder's entries on disk (a rename, a new or removed name in it), where the
    file system can; nothing where it cannot."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a directory
    finally:
        os.close(fd)
