"""Linux write leases (``F_SETLEASE``, ``F_WRLCK``), which :mod:`.note_io` takes so that
no other program can write a note between its read and its write.

The kernel grants a write lease only while no other process has the file open; a process
that opens the file meanwhile waits (up to ``/proc/sys/fs/lease-break-time``) until the
lease is released, and the holder gets SIGIO. Where leases are unavailable (not Linux, a
file owned by another user, SIGIO not handled), :func:`take_lease` answers False and the
caller decides what is still safe.
"""

from __future__ import annotations

import errno
import fcntl
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


def _leases_usable() -> bool:
    return hasattr(fcntl, "F_SETLEASE") and signal.getsignal(signal.SIGIO) not in (signal.SIG_DFL, None)


def take_lease(fd: int, attempts: int) -> bool:
    """Whether a write lease on ``fd`` was granted within ``attempts`` tries."""
    if not _leases_usable():
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


def release_lease(fd: int) -> None:
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    except OSError:
        pass
