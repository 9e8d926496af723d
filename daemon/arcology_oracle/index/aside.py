"""Deleting a note by name without deleting a file another program renamed over it: the
name is first renamed aside (which takes whatever file holds it at that instant), then
that file deleted when it is the one meant, else given its name back. A daemon killed
between the two leaves the file aside, a hidden name beside the note: the next start
gives it its name back (:func:`give_back_left_aside`), whichever file it is, since which
one cannot be told then (a forget that never answered; the client may try it again).
The temporary copies an older version's interrupted rewrite of a note left beside it go
at the start too (:func:`remove_stale_temp_files`)."""

from __future__ import annotations

import logging
import os
import re
import secrets
from collections.abc import Iterator
from pathlib import Path

from ..notes.renames import CANNOT, rename_no_replace

log = logging.getLogger(__name__)

_ASIDE = ".arcology-oracle-forgotten-"
_ASIDE_RE = re.compile(rf"\.(?P<name>.+){re.escape(_ASIDE)}[0-9a-f]{{8}}", re.DOTALL)
_STALE_TMP_RE = re.compile(r"\.arcology-oracle-[A-Za-z0-9_]{8}\.tmp")


def unlink_if_names(path: Path, fd: int) -> bool:
    """Delete the name ``path`` when it holds the open file ``fd``; False, nothing
    deleted, when another file holds it. Checking, then deleting by name would delete a
    file another program (a sync tool) renamed over it in between, so the name is first
    renamed aside (which takes whatever file holds it at that instant), then that file is
    deleted when it is ``fd``'s, else given its name back (:func:`_give_back`)."""
    aside = path.with_name(f".{path.name}{_ASIDE}{secrets.token_hex(4)}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return False
    try:
        mine = os.path.samestat(os.lstat(aside), os.fstat(fd))
    except OSError:
        mine = False
    if mine:
        try:
            os.unlink(aside)
            return True
        except OSError:
            _give_back(aside, path)
            raise
    _give_back(aside, path)
    return False


def _give_back(aside: Path, path: Path) -> bool:
    """The file at ``aside`` back at its name ``path``, never over a file that took the
    name meanwhile (then it stays at ``aside``, logged); whether it is back."""
    try:
        _put_back(aside, path)
    except FileExistsError:
        log.error("%s was replaced twice while a forget deleted it: the version before is kept as %s", path, aside)
        return False
    return True


def _put_back(aside: Path, path: Path) -> None:
    """Move ``aside`` to ``path``; FileExistsError, nothing moved, when a file has that name."""
    try:
        os.link(aside, path, follow_symlinks=False)
    except FileExistsError:
        raise
    except OSError:  # no hard links on this file system (FAT, exFAT): a rename that never replaces
        try:
            rename_no_replace(aside, path)
        except OSError as exc:
            if exc.errno not in CANNOT:
                raise
            # Neither (some FUSE file systems): a check, then a rename, as the last resort
            # (kept aside, the file would stay hidden for good).
            if os.path.lexists(path):
                raise FileExistsError(path) from None
            os.rename(aside, path)
        return
    os.unlink(aside)


def give_back_left_aside(directories: list[Path]) -> int:
    """Give each file a killed forget left aside in ``directories`` its name back (never
    over a file of that name: then it stays, logged); returns how many got it back."""
    back = 0
    for aside, found in files_named(directories, _ASIDE_RE):
        path = aside.with_name(found["name"])
        try:
            if _same_file(aside, path):  # killed after the name was given back
                os.unlink(aside)
                continue
            if _give_back(aside, path):
                back += 1
                log.warning("%s, left aside by a forget killed while it deleted the note, has its name back", path)
        except OSError as exc:
            log.error("cannot give %s its name %s back: %s", aside, found["name"], exc.strerror or exc)
    return back


def files_named(directories: list[Path], pattern: re.Pattern) -> Iterator[tuple[Path, re.Match]]:
    """Each regular file (not a symlink) directly in ``directories`` whose whole name
    ``pattern`` matches, with the match; a folder that cannot be listed is passed over."""
    for directory in directories:
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            path = directory / name
            if (found := pattern.fullmatch(name)) and path.is_file() and not path.is_symlink():
                yield path, found


def folders_below(root: Path) -> list[Path]:
    """Every folder below ``root`` (``root`` followed when a symlink, symlinked folders
    below it not): a daily may be in a folder of its own (a ``daily_file_format`` with a
    ``/``, the org-roam-dailies-directory Emacs sends), which no setting names. Hidden
    folders are left out (a capture into one is recorded, :mod:`.capture_places`): they
    are other programs' (``.git``, a sync tool's old versions, whose names may match)."""
    found = []
    for directory, dirs, _ in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found.append(Path(directory))
    return found


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samestat(os.lstat(a), os.lstat(b))
    except OSError:
        return False


def remove_stale_temp_files(directories: list[Path]) -> int:
    """Delete the ``.arcology-oracle-*.tmp`` copies an older version (killed while
    rewriting a note) could leave in ``directories``; returns how many went."""
    removed = 0
    for path, _ in files_named(directories, _STALE_TMP_RE):
        try:
            path.unlink()
            removed += 1
        except OSError as exc:
            log.warning("cannot remove the stale temporary file %s: %s", path, exc.strerror or exc)
    if removed:
        log.warning("removed %d temporary file(s) an interrupted write had left beside the notes", removed)
    return removed

