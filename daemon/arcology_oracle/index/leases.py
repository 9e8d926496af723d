"""Linux write leases (``F_SETLEASE``, ``F_WRLCK``), which :mod:`.note_io` takes so that
no other program can write a note between its read and its write.

The kernel grants a write lease only while no other process has the file open; a process
that opens the file meanwhile waits (up to ``/proc/sys/fs/lease-break-time``) until the
lease is released, and the holder gets SIGIO. Where leases are unavailable (not Linux, a
file owned by another user, SIGIO not handled), :func:`take_lease` answers False and the
caller decides what is still safe. :mod:`.regular_files` takes read leases the same way
(:func:`leases_usable`), so that the indexer never reads a note half saved.
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import threading
import time

LEASE_ATTEMPTS = 12  # ~0.4 s of tries in all, for a file another program opens briefly


def prepare_leases() -> None:
    """Ignore SIGIO, which the kernel sends a lease holder when another process opens
    the file (its default action would end the daemon). Main thread only; elsewhere
    leases stay unused unless SIGIO is already handled."""
    if hasattr(fcntl, "F_SETLEASE") and threading.current_thread() is threading.main_thread():
        if signal.getsignal(signal.SIGIO) == signal.SIG_DFL:
            signal.signal(signal.SIGIO, signal.SIG_IGN)


def leases_usable() -> bool:
    """Whether this process may take leases (Linux, SIGIO handled: :func:`prepare_leases`)."""
    return hasattr(fcntl, "F_SETLEASE") and signal.getsignal(signal.SIGIO) not in (signal.SIG_DFL, None)


def take_lease(fd: int, attempts: int) -> bool:
    """Whether a write lease on ``fd`` was granted within ``attempts`` tries."""
    if not leases_usable():
        return False
    for attempt in range(attempts):
        try:
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
            return True
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EBUSY):
                return False  # not the owner, a file system without leases...
        if attempt + 1 < attempts:
            time.sleep(min(0.001 * 2**attempt, 0.1))
    return False


def no_lease_reason(fd: int) -> tuple[str, bool]:
    """Why no write lease was granted on ``fd``, as the end of a sentence naming the note
    (for a forget, which needs one), and whether trying again can help: yes while another
    program has the note open (asked once more here: the kernel's busy answer); no for a
    note of another user's, or where leases cannot be taken at all."""
    owner = os.fstat(fd).st_uid
    if owner != os.geteuid() and os.geteuid() != 0:
        return (f"belongs to another user (uid {owner}) than the daemon's, and only a file's owner can lock it: "
                "forgetting needs the lock, so that no write of another program can be lost; edit it in Emacs"), False  # fmt: skip
    if not _busy(fd):
        return ("cannot be locked on this system (forgetting needs a Linux write lease, so that no write of another "
                "program can be lost): edit it in Emacs"), False  # fmt: skip
    return ("is open in another program: forgetting needs it closed for a moment, so that no write of that program "
            "can be lost; try again"), True  # fmt: skip


def _busy(fd: int) -> bool:
    """Whether a write lease on ``fd`` is refused only because the file is open elsewhere
    (or is granted now: it was closed meanwhile)."""
    if not leases_usable():
        return False
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
    except OSError as exc:
        return exc.errno in (errno.EAGAIN, errno.EBUSY)
    release_lease(fd)
    return True


def release_lease(fd: int) -> None:
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    except OSError:
        pass
