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

from ..config import Settings
from ..notes.cleaning import is_private_line
from ..notes.files import is_excluded, resolve_inside
from .index_api import NotesIndex


async def is_private_place(index: NotesIndex, path: str | None, line: int | None) -> bool:
    """Whether ``line`` (1 when None) of the saved file ``path`` (relative to the notes
    directory) is in a part the index leaves out, or the file is excluded by
    ``exclude_globs``. False without ``path``, for a path outside the notes directory
    and for a file not saved yet (a new buffer's text is judged by itself). The file is
    read on a worker thread."""
    if not path:
        return False
    settings = index.settings
    if is_excluded(path, settings.exclude_globs):
        return True
    return await asyncio.to_thread(_saved_line_is_private, settings, path, line or 1)


def _saved_line_is_private(settings: Settings, path: str, line: int) -> bool:
    try:
        data = resolve_inside(settings.roam_dir, path).read_bytes()
    except (ValueError, OSError):
        return False
    return is_private_line(data, line, settings.private_tags, root=settings.roam_dir, path=path)
