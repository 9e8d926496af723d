"""Reading a note file for the indexer: only a regular file inside the notes directory,
opened without blocking and checked after it is open (it may have been swapped since
it was listed), and never in the middle of another program's save."""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import stat
import time
from pathlib import Path

from .leases import leases_usable, release_lease

READ_ATTEMPTS = 6  # ~60 ms of tries in all, for a save under way (most take a few ms)


def read_regular_file(real_root: str, path: Path) -> tuple[bytes, os.stat_result] | None:
    """The bytes and stat of ``path``, or None when it is not a regular file inside the
    directory ``real_root`` (a resolved path) at the moment it is opened.

    The file may have been swapped since it was listed: for a FIFO (whose open and read
    would block the writer thread forever), a directory, or a symlink out of the root.
    So it is opened without blocking, and the open file itself is checked before reading:
    where it is (see :func:`_open_inside`) and that it is a regular file.

    A save that writes the note in place (truncated, then written) must not be read half
    way: the half read may lack the private ``#+filetags`` line that the whole has, and
    the note would be stored public until read again. So the file is read under a Linux
    read lease (``F_SETLEASE``, ``F_RDLCK``), which the kernel grants only while no
    process holds it open for writing, and which makes any that opens it so meanwhile wait
    until the read is done (microseconds). Where leases cannot be taken (another user's
    file, a file system without them, SIGIO not handled: the CLI), the read is kept only
    when the file's size, mtime and ctime are the same before and after it (a save
    paused between its two writes is not seen then). Tried :data:`READ_ATTEMPTS` times;
    then ``BlockingIOError`` (EBUSY): the caller keeps what it had, and reads the file
    again when the writer closes it (the watcher sees that).
    """
    fd = _open_inside(real_root, path)
    if fd is None:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        for attempt in range(READ_ATTEMPTS):
            leased = _read_lease(fd)
            try:
                data, after = _read_whole(fd, st), os.fstat(fd)
            finally:
                if leased:
                    release_lease(fd)
            if leased or (leased is None and _same(st, after) and len(data) == after.st_size):
                return data, after
            st = after
            if attempt + 1 < READ_ATTEMPTS:
                time.sleep(0.002 * 2**attempt)
        raise BlockingIOError(errno.EBUSY, "being written by another program")
    finally:
        os.close(fd)


def _read_whole(fd: int, st: os.stat_result) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    parts = []
    while part := os.read(fd, max(st.st_size + 1, 65536)):
        parts.append(part)
    return b"".join(parts)


def _read_lease(fd: int) -> bool | None:
    """True when a read lease on ``fd`` was granted, False when a process holds the file
    open for writing (a save under way), None when leases cannot be had here (the
    process, the file's owner or its file system: see :data:`_NO_LEASE_FILESYSTEMS`)."""
    if not leases_usable():
        return None
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
        return True
    except OSError as exc:
        if exc.errno not in (errno.EAGAIN, errno.EBUSY):
            return None
        return None if _refuses_every_lease(fd) else False


# Network file systems whose refusal of a lease says nothing of a writer (statfs(2)
# magic numbers): NFSv4 answers EAGAIN to every lease without a read delegation from the
# server, SMB without a read oplock, so every note there would count as being written.
_NO_LEASE_FILESYSTEMS = frozenset({0x6969, 0xFF534D42, 0xFE534D42, 0x517B})  # nfs, cifs, smb2, smb
_refusing_devices: dict[int, bool] = {}


def _refuses_every_lease(fd: int) -> bool:
    """Whether ``fd``'s file system refuses leases whoever writes (asked once a device)."""
    device = os.fstat(fd).st_dev
    if device not in _refusing_devices:
        _refusing_devices[device] = filesystem_type(fd) in _NO_LEASE_FILESYSTEMS
    return _refusing_devices[device]


def filesystem_type(fd: int) -> int | None:
    """The ``f_type`` that ``fstatfs(2)`` gives for ``fd`` (a magic number: 0x6969 for
    NFS), or None where it cannot be asked."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        buffer = ctypes.create_string_buffer(512)  # struct statfs, f_type first
        if libc.fstatfs(fd, buffer) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return ctypes.c_long.from_buffer(buffer).value & 0xFFFFFFFF


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_size, a.st_mtime_ns, a.st_ctime_ns) == (b.st_size, b.st_mtime_ns, b.st_ctime_ns)


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
