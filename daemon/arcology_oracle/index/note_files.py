"""Note files as the daemon's writers open and read them: the note opened (and
created, with its directories) without following it out of the notes directory and
without blocking on anything but a regular file, read and written whole, its real path,
and whether a path still names an open file. The writes themselves and their rules are
:mod:`.note_io`'s.

A note or folder created here gets the owner and group of the folder it is made in when
they are another user's and the daemon may give them (it runs as root: in a container,
or as a system service, over the user's notes), as an import run as root does
(:mod:`arcology_oracle.importers.owners`): else the user's Emacs could not save the
day's note. Run as the notes' owner, nothing changes.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from pathlib import Path

from ..errors import Conflict
from ..importers.owners import folder_owner, give
from .aside import unlink_if_names

log = logging.getLogger(__name__)
# How a log line names a note it may not name (:data:`.note_io.UNNAMED`, where it is told).
UNNAMED = "a note the index does not hold (not named: it may be private)"


_PROC_FD = os.path.isdir("/proc/self/fd")
OPEN_ATTEMPTS = 10  # ~0.5 s of tries while another process (an NFS or Samba server) holds a lease


_FLAGS = os.O_RDWR | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


class LeadsOut(Conflict):
    """The note's real path is outside the roam directory (a symlink leads out): never retried."""

    def __init__(self, message: str):
        super().__init__(message, retry=False)


def leads_out(root: Path, rel: str) -> bool:
    """Whether the path ``rel`` resolves (through symlinks) to a place outside ``root``."""
    return not _inside(os.path.realpath(root / rel), os.path.realpath(root))


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def open_note(root: Path, rel: str, *, append: bool, create: bool) -> tuple[int, os.stat_result, tuple[Path, ...]] | None:
    """``(fd, stat, created)`` for the regular file ``rel`` below ``root``, opened for
    writing without blocking; None when it does not exist and ``create`` is false.
    ``created`` is empty when the file was there, else the file and the folders made
    for it, deepest first (:func:`remove_created` takes them away again). A refusal
    after they were made (a umask that makes the new file read-only) removes them."""
    path = root / rel
    made = _check_directory(root, path.parent)
    flags = _FLAGS | (os.O_APPEND if append else 0)
    created: tuple[Path, ...] = ()
    for _ in range(3):
        try:
            fd = _open_waiting(path, flags)
            break
        except FileNotFoundError:
            if not create:
                return None
            try:
                fd = _open_waiting(path, flags | os.O_CREAT | os.O_EXCL, 0o666)
                created = (path, *reversed(made))
                break
            except FileExistsError:
                continue  # created meanwhile: open it as it is
            except OSError as exc:
                _remove_folders(made)
                raise Conflict(f"cannot create {rel}: {exc.strerror or exc}: nothing was written", retry=False) from None
        except IsADirectoryError:
            raise Conflict(f"{rel} is a directory, not a note file: nothing was written", retry=False) from None
        except BlockingIOError:
            raise Conflict(f"{rel} is held by another program (a lease on it, as an NFS or Samba server takes for a "
                           "client editing it): not changed; try again", retry=True) from None  # fmt: skip
        except PermissionError:
            raise Conflict(f"{rel} is read-only (no write permission): not changed", retry=False) from None
        except OSError as exc:
            raise Conflict(f"cannot open {rel}: {exc.strerror or exc}: not changed", retry=False) from None
    else:
        _remove_folders(made)
        if os.path.islink(path):  # O_EXCL never creates the file a symbolic link leads to
            raise Conflict(f"{rel} is a symbolic link to {os.readlink(path)}, which does not exist (a drive not "
                           "mounted?): nothing was written", retry=False)  # fmt: skip
        raise Conflict(f"{rel} kept appearing and disappearing: not written", retry=True)
    try:
        if created:
            _give_folders_owner(fd, path.parent)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Conflict(f"{rel} is not a regular file ({_kind(st.st_mode)}): not written", retry=False)
        real = os.readlink(f"/proc/self/fd/{fd}") if _PROC_FD else os.path.realpath(path)
        real_root = os.path.realpath(root)
        if not _inside(real, real_root):
            raise LeadsOut(f"{rel} is a link to a file outside the notes directory")
        if not st.st_mode & 0o222:
            umask = ", as the daemon's umask makes every new file" if created else ""
            raise Conflict(f"{rel} is read-only (its mode is {stat.filemode(st.st_mode)}{umask}): not changed", retry=False)
        return fd, st, created  # (not logged: the note may be private; the capture's line names it when it is not)
    except BaseException:
        try:
            remove_created(created, fd)
        except OSError as exc:
            # Just made, so in no index: not named (its folder may be private, or left out).
            log.warning("cannot remove %s, created for a capture that was refused: %s", UNNAMED, exc.strerror or exc)
        finally:
            os.close(fd)
        raise


def _open_waiting(path: Path, flags: int, mode: int = 0o777) -> int:
    """``os.open``, tried again for about half a second while another process holds a
    lease on the file (an NFS server's delegation or a Samba oplock, lent to a client:
    the open asks for it back, which takes milliseconds): opened without blocking, that
    open fails at once (BlockingIOError) until it is given back."""
    for attempt in range(OPEN_ATTEMPTS):
        try:
            return os.open(path, flags, mode)
        except BlockingIOError:
            if attempt + 1 == OPEN_ATTEMPTS:
                raise
            time.sleep(min(0.002 * 2**attempt, 0.1))
    raise AssertionError("unreachable")


def remove_created(created: tuple[Path, ...], fd: int) -> None:
    """Remove what :func:`open_note` ``created`` (the note open as ``fd``, when the name
    still holds it, then the folders made for it, when still empty). Raises OSError when
    the note cannot be removed (its folders then stay)."""
    if created:
        unlink_if_names(created[0], fd)
        _remove_folders(list(reversed(created[1:])))


def _remove_folders(made: list[Path]) -> None:
    """Remove the folders ``made`` (in the order made), deepest first, each when empty."""
    for path in reversed(made):
        try:
            os.rmdir(path)
        except OSError:
            pass


def _check_directory(root: Path, directory: Path) -> list[Path]:
    """The note's directory exists and is a directory. Missing ones are created below
    the notes directory, never it or anything above (a notes folder moved away or on a
    drive not mounted is refused, not made anew); when one cannot be, those created here
    are removed again (a refusal leaves no trace). Returns those it made, in order."""
    shown = os.path.relpath(directory, root)
    shown = "the notes directory" if shown == "." else shown
    if os.path.isdir(directory):
        return []
    if not os.path.isdir(root):  # moved away, or a drive not mounted: never made here
        raise Conflict(f"the notes directory {root} does not exist: nothing was written", retry=False)
    if os.path.lexists(directory):
        raise Conflict(f"{shown} is not a directory ({directory}): nothing was written", retry=False)
    missing, made = [], []
    while not os.path.lexists(directory):
        missing.append(directory)
        directory = directory.parent
    try:
        for path in reversed(missing):
            try:
                os.mkdir(path)
                made.append(path)
                _give_folders_owner(path, path.parent)
            except FileExistsError:
                pass  # created meanwhile; the next mkdir (or the open) tells a file from a directory
    except OSError as exc:
        _remove_folders(made)
        reason = "permission denied" if isinstance(exc, PermissionError) else exc.strerror or str(exc)
        raise Conflict(f"cannot create the directory {shown}: {reason}: nothing was written", retry=False) from None
    return made


def _give_folders_owner(where: Path | int, folder: Path) -> None:
    """Give ``where`` (just made here: a path, opened without following a link, or an
    open descriptor) the owner and group of ``folder`` when they are another user's (see
    the module docstring); nothing where the daemon may not."""
    owner = folder_owner(folder)
    if owner[0] != os.geteuid():
        give(where, owner)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISDIR, "a directory")):  # fmt: skip
        if test(mode):
            return name
    return "not a regular file"


def read_all(fd: int) -> bytes:
    parts, offset = [], 0
    while part := os.pread(fd, 1 << 20, offset):
        parts.append(part)
        offset += len(part)
    return b"".join(parts)


def check_encoding(data: bytes, rel: str) -> None:
    """Conflict unless ``data`` is UTF-8 (with or without a BOM), the daemon's only encoding."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
        raise Conflict(f"{rel} is encoded in UTF-16 or UTF-32; arcology-oracle writes UTF-8 only: not changed", retry=False)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Conflict(f"{rel} holds bytes that are not UTF-8 (at byte {exc.start}); arcology-oracle writes "
                       "UTF-8 only: not changed", retry=False) from None  # fmt: skip


def write_all(fd: int, data: bytes, offset: int | None = None) -> None:
    done = 0
    while done < len(data):
        if offset is None:
            done += os.write(fd, data[done:])
        else:
            done += os.pwrite(fd, data[done:], offset + done)


def real_path_of(root: Path, fd: int, rel: str) -> str:
    """The path of the open file relative to the real roam directory (``rel`` itself
    unless a symlink on the way leads elsewhere inside it)."""
    real = os.readlink(f"/proc/self/fd/{fd}") if _PROC_FD else os.path.realpath(root / rel)
    return Path(os.path.relpath(real, os.path.realpath(root))).as_posix()


def still_names(path: Path, fd: int) -> bool:
    """Whether ``path`` still names the open file ``fd``."""
    try:
        now, st = os.stat(path), os.fstat(fd)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino)


def read_note(root: Path, rel: str) -> bytes | None:
    """The bytes of the regular file ``rel`` inside ``root`` (read without blocking, so
    tried again while another process holds a lease on it: :func:`_open_waiting`), or
    None when it is missing or not a regular file inside the root."""
    try:
        fd = _open_waiting(root / rel, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        real = os.readlink(f"/proc/self/fd/{fd}") if _PROC_FD else os.path.realpath(root / rel)
        if not stat.S_ISREG(st.st_mode) or not _inside(real, os.path.realpath(root)):
            return None
        return read_all(fd)
    finally:
        os.close(fd)
