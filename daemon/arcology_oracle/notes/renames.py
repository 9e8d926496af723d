"""Renames that a check before them could not make safe, in one step of the kernel's
(``renameat2``): one that never replaces a file (a sync tool may write one there between
the check and the rename), and the swap of two files. Where the system or the file
system cannot (not Linux, some FUSE file systems), OSError with an errno in
:data:`CANNOT`, and nothing was renamed."""

from __future__ import annotations

import ctypes
import errno
import os
from pathlib import Path

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2


def rename_no_replace(src: Path, dst: Path) -> None:
    """Rename ``src`` to ``dst`` unless a file has that name (FileExistsError), in one
    step (``renameat2`` with ``RENAME_NOREPLACE``): a check, then a rename, would replace
    a file another program (a sync tool) wrote there in between. OSError where the
    system or the file system cannot (then nothing was renamed)."""
    _renameat2(src, dst, _RENAME_NOREPLACE)


def exchange(a: Path, b: Path) -> None:
    """Swap the files at ``a`` and ``b`` in one step (``renameat2`` with
    ``RENAME_EXCHANGE``); OSError where the system or the file system cannot."""
    _renameat2(a, b, _RENAME_EXCHANGE)


# What a system without renameat2's flags answers; EPERM too, a sandbox's (seccomp) that
# does not know the call (a real lack of permission refuses the plain rename after too).
CANNOT = (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM)


def _renameat2(src: Path, dst: Path, flags: int) -> None:
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        raise OSError(errno.ENOSYS, "no renameat2 on this system", os.fspath(src))
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), os.fspath(src), None, os.fspath(dst))
