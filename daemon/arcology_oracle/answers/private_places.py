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

from ..config import Settings
from ..notes.cleaning import is_private_line
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
    data = read_regular_file(file)
    return data is not None and is_private_line(data, line, settings.private_tags, root=settings.roam_dir, path=path)
