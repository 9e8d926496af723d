"""Who owns what an import writes (:mod:`.writing`): an import run as root (sudo) must
not leave the user notes, or folders, of root's, which their Emacs cannot save.

* An update keeps the owner and group of the file it replaces (:func:`keep_owner`), or
  is skipped when they cannot be kept.
* A new file, and each folder the import makes for it, gets the owner and group of the
  folder it is made in: the nearest folder that exists (:func:`folder_owner`), given to
  the staged file before it has its name (:func:`give`), so it appears whole and the
  user's, and to each folder right after it is made (:func:`make_folders`). Where they
  cannot be given (an import not run as root, into a folder of another user or of a
  group it is not in) they are what the system gives any new file, as before; nothing is
  skipped. A folder made for a file that is then not placed is removed again, when
  nothing else was put in it (:func:`remove_folders`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def keep_owner(tmp: int, before: os.stat_result) -> str | None:
    """Give the staged file open as ``tmp`` the owner and group of the file it replaces (stat
    ``before``): an import run as root would else leave the user a note of root's, which
    Emacs cannot save, and a note of a shared group would lose it. The reason to skip
    when they cannot be kept (``chmod`` after, as a change of owner clears set-id bits)."""
    for uid in (before.st_uid, -1):  # the owner takes root; the group, being in it
        try:
            os.fchown(tmp, uid, before.st_gid)
            break
        except OSError:
            continue
    st = os.fstat(tmp)
    if (st.st_uid, st.st_gid) != (before.st_uid, before.st_gid):
        return (f"it belongs to user {before.st_uid}, group {before.st_gid}, which this import cannot give a file: "
                "replaced, it would change hands (run the import as its owner)")  # fmt: skip
    os.fchmod(tmp, before.st_mode & 0o7777)
    return None


def folder_owner(directory: Path) -> tuple[int, int]:
    """The owner and group of ``directory``, or of its nearest parent that exists (a
    symlinked folder by the folder it leads to)."""
    while True:
        try:
            st = os.stat(directory)
        except (FileNotFoundError, NotADirectoryError):
            if directory.parent == directory:
                raise
            directory = directory.parent
            continue
        return st.st_uid, st.st_gid


def give(where: Path | int, owner: tuple[int, int]) -> None:
    """Give ``where`` (a file or folder the import just made, by its path or an open
    descriptor; a path is opened without following a symlink put in its place) the
    ``owner`` and group, when this process may; else leave it as the system made it. Its
    permission bits stay (a change of owner may clear set-id bits)."""
    if not isinstance(where, int):
        fd = os.open(where, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            return give(fd, owner)
        finally:
            os.close(fd)
    before = os.fstat(where)
    if (before.st_uid, before.st_gid) == owner:
        return None
    try:
        os.fchown(where, *owner)
    except OSError:  # not root, another user's folder (or a group it is not in), a file
        return None  # system without owners: as any new file
    if stat.S_IMODE(os.fstat(where).st_mode) != stat.S_IMODE(before.st_mode):
        os.fchmod(where, stat.S_IMODE(before.st_mode))
    return None


Made = list[tuple[Path, os.stat_result]]  # a folder an import made, and what it was


def make_folders(directory: Path, owner: tuple[int, int]) -> tuple[Made, int]:
    """Make ``directory`` and the parents of it that are missing, each given ``owner``
    (:func:`give`); the folders made, outermost first (one another program made meanwhile
    is not among them), and a descriptor of ``directory`` (the caller closes it), so a
    file is put in the folder made, wherever its name leads by then. Each is made in, and
    opened from, a descriptor of the folder made before it (the first in the nearest that
    exists, a symlinked folder by the folder it leads to), never following a link: a
    folder renamed away and a symlink put in its place meanwhile cannot have root give a
    folder elsewhere away (``OSError``). On failure none made stays (when still empty)
    and the error is raised."""
    missing: list[Path] = []
    while not os.path.lexists(directory) and directory.parent != directory:
        missing.append(directory)
        directory = directory.parent
    made: Made = []
    parent = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for folder in reversed(missing):
            try:
                os.mkdir(folder.name, dir_fd=parent)
                new = True
            except FileExistsError:
                new = False
            fd = os.open(folder.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
            os.close(parent)
            parent = fd
            if new:
                made.append((folder, os.fstat(fd)))
                give(fd, owner)
    except BaseException:
        os.close(parent)
        remove_folders(made)
        raise
    return made, parent


def remove_folders(made: Made) -> None:
    """Remove the folders ``made`` (outermost first) that are still empty, innermost first:
    one that holds anything (another program put a file there), or whose name leads to
    another folder now (a symlink put in the place of one of its parents), stays."""
    for folder, st in reversed(made):
        try:
            if not os.path.samestat(os.lstat(folder), st):
                return
            os.rmdir(folder)
        except OSError:
            return  # not empty, or gone: its parents hold it
