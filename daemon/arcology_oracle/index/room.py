"""Room on the disk for a capture, asked for before a byte of it is appended.

Without a write lease (another program holds the note open: ``tail -f``, ``less``, a
sync tool), a capture the disk cannot hold whole cannot be taken back
(:mod:`.take_back`): that program may have appended after the part written, so a cut
could take its bytes. Half a heading would stay at the end of the user's note. So the
room is reserved first, with ``fallocate(FALLOC_FL_KEEP_SIZE)``: the blocks after the
file's end are allocated, the file's size and bytes stay as they are (nothing anyone
reads changes), and the append then writes into blocks it already has. A disk (or a
quota) too full for it, a file it would make larger than the file system or the
daemon's file size limit (``ulimit -f``, which ``fallocate`` does not look at) allows,
refuses the capture before anything is written.

Where the call does not exist or the file system cannot do it (not Linux, NFS, some FUSE
file systems), nothing is reserved and the write goes on as before: taken back when it
can be, else the refusal says what part is left. Another program's bytes appended
after the room was reserved take that room, and the capture, landing after them, would
need blocks never reserved: so the file's end is looked at again once the room is
reserved, and room asked for again from its new end until it stays where it was
(:func:`reserve_at_end`). An append landing between that last look and the write is
the window left (a few instructions wide).
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
from collections.abc import Callable

from pathlib import Path

from ..errors import Conflict
from .leases import release_lease, take_lease
from .note_files import remove_created

FALLOC_FL_KEEP_SIZE = 0x01
# EFBIG: past the file system's largest file, or the process's file size limit (below).
FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _libc_fallocate() -> Callable[[int, int, int, int], int] | None:
    try:  # the C library the process already has (no ldconfig run, as find_library does)
        call = ctypes.CDLL(None, use_errno=True).fallocate
    except (OSError, AttributeError, TypeError):
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    call.restype = ctypes.c_int
    return call


_fallocate = _libc_fallocate()


def fallocate_keep_size(fd: int, offset: int, length: int) -> None:
    """``fallocate(fd, FALLOC_FL_KEEP_SIZE, offset, length)``; OSError as the kernel
    says, ENOSYS where there is no such call."""
    if _fallocate is None:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
    if _fallocate(fd, FALLOC_FL_KEEP_SIZE, offset, length) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def _within_size_limit(end: int) -> None:
    """OSError(EFBIG) when a file of ``end`` bytes is past the daemon's file size limit
    (``ulimit -f``, systemd's ``LimitFSIZE=``): a write stops there, part written, and
    ``fallocate`` with FALLOC_FL_KEEP_SIZE does not look at that limit."""
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit != resource.RLIM_INFINITY and end > limit:
        raise OSError(errno.EFBIG, f"{os.strerror(errno.EFBIG)}: past the daemon's file size limit of {limit} bytes")


def reserve(fd: int, size: int, length: int, rel: str, created: tuple[Path, ...] = ()) -> None:
    """Reserve ``length`` bytes after byte ``size`` (the file's end) of the note ``rel``
    open as ``fd``, its size unchanged; Conflict (nothing written) when the disk or the
    quota is too full for them, or the file would grow past what the file system or the
    daemon's file size limit allows, after removing the file and folders this capture
    ``created`` (still empty, under a write lease: else they stay, empty). Any other
    failure reserves nothing and is no refusal."""
    if length <= 0:
        return
    try:
        _within_size_limit(size + length)
        fallocate_keep_size(fd, size, length)
    except OSError as exc:
        if exc.errno not in FULL:
            return
        if created and take_lease(fd, 1):
            try:
                if os.fstat(fd).st_size == 0:
                    remove_created(created, fd)
            except OSError:
                pass
            finally:
                release_lease(fd)
        raise Conflict(f"no room for the capture in {rel} ({exc.strerror}): nothing was written", retry=False) from None


RESERVE_ATTEMPTS = 8  # another program appending all the while: the write goes on as before


def reserve_at_end(fd: int, size: int, length: int, rel: str, created: tuple[Path, ...] = ()) -> int:
    """:func:`reserve` ``length`` bytes after the end of the note, asked for again from
    its new end while another program appended meanwhile (its bytes took the room);
    the note's size the room was last reserved after. ``size`` is its size as read."""
    for _ in range(RESERVE_ATTEMPTS):
        reserve(fd, size, length, rel, created)
        now = os.fstat(fd).st_size
        if now == size:
            break
        size = now
    return size
