"""Whether a place in the saved notes is private, for text a client sends from there.

A client sends a part of a note (the heading at point, a region, a conversation's
subtree, an excerpt of a long buffer) with the file and line it comes from. Cut out of
its file, that part has lost what may make it private: a tag inherited from a heading
above it, the file's ``#+filetags``, the file's ``ROAM_EXCLUDE``, the ``exclude_globs``
the file matches. The part is judged by itself too (:func:`~arcology_oracle.notes.cleaning.strip_private`);
this judges the place, by reading the saved file with the indexer's own reader.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import OrderedDict
from pathlib import Path

from ..config import Settings
from ..notes import setup_files
from ..notes.cleaning import private_lines
from ..notes.disk import read_regular_file
from ..notes.files import is_excluded, resolve_inside
from .index_api import NotesIndex


async def is_private_place(index: NotesIndex, path: str | None, line: int | None) -> bool:
    """Whether ``line`` (1 when None) of the saved file ``path`` (relative to the notes
    directory) is in a part the index leaves out, or the file is excluded by
    ``exclude_globs`` (by that name or, reached through a symlink, by its real path, as
    the index excludes it). False without ``path``, for a path outside the notes
    directory, for anything but a regular file (a FIFO is not read) and for a file not
    saved yet (a new buffer's text is judged by itself). The file is read on a worker
    thread."""
    if not path:
        return False
    return await asyncio.to_thread(_saved_line_is_private, index.settings, path, line or 1)


def _saved_line_is_private(settings: Settings, path: str, line: int) -> bool:
    try:
        file = resolve_inside(settings.roam_dir, path)
    except ValueError:
        return False
    # Excluded by its name or, reached through a symlink, by its real one (as the index).
    real_root = os.path.realpath(settings.roam_dir)
    real_rel = os.path.relpath(os.path.realpath(file), real_root).replace(os.sep, "/")
    if is_excluded(path, settings.exclude_globs) or is_excluded(real_rel, settings.exclude_globs):
        return True
    flags = _private_lines(settings, file, path)
    if not flags:  # no such file, or no text
        return False
    # One past the last line is where a file's final newline leaves Emacs's point.
    return flags[min(max(line, 1), len(flags)) - 1]


def _private_lines(settings: Settings, file: Path, path: str) -> tuple[bool, ...]:
    """:func:`~arcology_oracle.notes.cleaning.private_lines` of the saved ``file``,
    remembered while it is the same file (device, inode, size, times) and its setup
    files are as they were read (a private tag added to one makes the note private with
    no change to the note): Emacs asks again at every move to another heading of an
    unsaved buffer, and reading a large note costs about 120 ms a megabyte."""
    try:
        st = os.stat(file)
    except OSError:
        return ()
    key = (str(file), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, settings.private_tags)
    with _lock:
        remembered = _remembered.get(key)
        if remembered is not None:
            _remembered.move_to_end(key)
    if remembered is not None and not setup_files.any_changed(remembered[1]):
        return remembered[0]
    data = read_regular_file(file)
    found = ((), ()) if data is None else private_lines(data, settings.private_tags, root=settings.roam_dir, path=path)
    with _lock:
        _remembered[key] = found
        while len(_remembered) > REMEMBERED_FILES:
            _remembered.popitem(last=False)
    return found[0]


REMEMBERED_FILES = 32
# key -> (each line private or not, the setup files read to say so)
_remembered: OrderedDict[tuple, tuple[tuple[bool, ...], tuple]] = OrderedDict()
_lock = threading.Lock()
