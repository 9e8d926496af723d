"""Putting an import's staged file at its name (:mod:`.writing`), never over a file the
import did not check: a new file only where no file has the name, an update by swapping
the two and swapping back when the file swapped out is not the one checked."""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from ..notes.disk import sync_directory
from ..notes.renames import CANNOT, exchange, rename_no_replace
from .owners import give


def create(path: Path, tmp: Path, fd: int, owner: tuple[int, int], folder: int) -> str | None:
    """Put the new file ``tmp`` (open as ``fd``, given ``owner`` already) at ``path`` (in
    the folder open as ``folder``: there, wherever the name of the folder leads by then)
    only if nothing is there (never over a file that appeared meanwhile); the reason
    when it is skipped. Where it must be copied (no hard links), the copy is read from
    ``fd`` (never by a name that may lead elsewhere) and given ``owner`` too."""
    try:
        os.link(tmp, path.name, dst_dir_fd=folder)
    except FileExistsError:
        return "a file of that name appeared while importing (import again)"
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        # No hard links on this file system: create the file exclusively and copy.
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        try:
            out = os.open(path.name, flags, stat.S_IMODE(os.fstat(fd).st_mode), dir_fd=folder)
        except FileExistsError:
            return "a file of that name appeared while importing (import again)"
        try:
            with os.fdopen(out, "wb") as fh, os.fdopen(os.dup(fd), "rb") as src:
                give(fh.fileno(), owner)
                src.seek(0)
                fh.write(src.read())
                fh.flush()
                os.fsync(fh.fileno())
        except BaseException:
            os.unlink(path.name, dir_fd=folder)  # created above, so only the import's bytes are in it
            raise
    tmp.unlink()
    sync_directory(path.parent)
    return None


def swap_in(path: Path, tmp: Path, checked: os.stat_result) -> str | None:
    """Put ``tmp`` at ``path`` in place of the file ``checked`` there. A rename would
    replace whatever holds the name at that instant: a version a sync tool renamed over
    the note after the check would be lost. The two are swapped instead, and swapped back
    (the reason returned) when the file swapped out is not the one checked; where the
    file system cannot swap, a rename (the check is then the last word).

    The file swapped out lands at the staged file's name, and stays there if the import is
    killed before the swap back: so the staged file first takes its :func:`swap_name`,
    which :func:`.staging.remove_stale_staging` never removes (an ``N.tmp`` is only ever a
    file the import wrote)."""
    try:
        rename_no_replace(tmp, swap_name(tmp))
        tmp = swap_name(tmp)
    except FileExistsError:
        return "its staged copy was moved while importing (import again)"
    except OSError as exc:
        if exc.errno not in CANNOT:
            raise
        # No renameat2: no swap either (the rename below), so nothing of the user's lands here.
    ours = os.lstat(tmp)
    try:
        exchange(tmp, path)
    except OSError as exc:
        if exc.errno not in CANNOT:
            raise
        os.replace(tmp, path)
        sync_directory(path.parent)
        return None
    if identity(os.lstat(tmp)) == identity(checked):
        tmp.unlink()
        sync_directory(path.parent)
        return None
    try:
        exchange(tmp, path)  # theirs back
    except OSError:  # the name gone meanwhile: theirs must not stay in the staging folder, removed after
        return _keep(tmp, path)
    if not os.path.samestat(os.lstat(tmp), ours):  # replaced once more meanwhile: keep that one too
        return _keep(tmp, path)
    return "it changed while importing (import again)"


def _keep(tmp: Path, path: Path) -> str:
    """Take the user's file at ``tmp`` (in the staging folder, which is removed) out
    beside ``path``: at that name when it is free, else at a name of its own; the reason."""
    try:
        rename_no_replace(tmp, path)
        return "it changed while importing (import again)"
    except FileExistsError:
        pass
    except OSError as exc:
        if exc.errno not in CANNOT:
            raise
    kept = path.with_name(f"{path.stem}.kept-{secrets.token_hex(4)}{path.suffix}")
    os.rename(tmp, kept)  # a name drawn here, which no other file has
    sync_directory(path.parent)
    return f"it changed while importing (import again); a version written meanwhile is kept as {kept.name}"


def swap_name(tmp: Path) -> Path:
    """The name a staged file ``N.tmp`` takes just before it is swapped with the note:
    ``N.swap``, where the note's old version lands."""
    return tmp.with_suffix(".swap")


def identity(st: os.stat_result | None) -> tuple[int, int, int, int] | None:
    return None if st is None else (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
