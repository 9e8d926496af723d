"""The ``:ID:`` properties the notes hold, read from the files themselves (not the index).

Where the index cannot say which IDs exist (it has not read the notes yet: a new index
during its first reconcile; an import, which runs without the daemon), an ``id:`` link
in text the user did not type is checked against the files: every org file below the
notes directory (hidden and excluded folders too, but for a version control's store;
symlinks not followed), read once. An encrypted note (``.org.gpg``) cannot be read: its
IDs are not seen.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Awaitable, Callable, Collection, Iterator
from functools import partial
from pathlib import Path

from .disk import read_regular_file

NOTE_SUFFIXES = (".org", ".org_archive")
VCS_FOLDERS = frozenset({".git", ".hg", ".svn"})  # a version control's store: no note is kept there by name
ID_LINE_RE = re.compile(rb"^[ \t]*:ID:[ \t]+(\S+)[ \t]*\r?$", re.MULTILINE | re.IGNORECASE)


def note_paths(root: Path) -> Iterator[str]:
    """The path of each org file below ``root`` (see the module docstring), no symlink."""
    for folder, dirs, files in os.walk(root, onerror=None):
        dirs[:] = [d for d in dirs if d not in VCS_FOLDERS]
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith(NOTE_SUFFIXES) and not os.path.islink(path):
                yield path


def ids_held(root: Path, wanted: Collection[str] | None = None) -> set[str]:
    """Those of ``wanted`` (every one, with None) that an org file below ``root`` has as
    an ``:ID:`` property (see the module docstring); a file that cannot be read, or is no
    regular file (never waited on), is passed over. Reads no file when ``wanted`` is
    empty, and stops once every one is found."""
    want = None if wanted is None else {node_id.encode("utf-8", "surrogateescape") for node_id in wanted}
    found: set[bytes] = set()
    for path in note_paths(root) if want is None or want else ():
        data = read_regular_file(path) or b""
        found.update(m[1] for m in ID_LINE_RE.finditer(data) if want is None or m[1] in want)
        if want is not None and found >= want:
            break
    return {node_id.decode("utf-8", "surrogateescape") for node_id in found}


async def held_until(
    ready: asyncio.Event | None, root: Path, read: Callable[[Callable], Awaitable]
) -> Callable[[set[str]], Awaitable[set[str]]] | None:
    """:func:`ids_held` below ``root``, in a worker thread, while ``ready`` (set once the
    index has read the notes: its first reconcile) is not set and the index (``read``:
    :meth:`~arcology_oracle.index.service.OracleIndex.read`) holds no notes of ``root``
    (a new index, or one of another directory); None once it is, without one, or when the
    index holds them: it knows their IDs (but those of notes made while the daemon was
    down, whose links are quieted until it has read them). An ID no note has is looked
    for in every file: at each start of a large index that was a read of every note."""
    if ready is None or ready.is_set():
        return None
    if await read(lambda store: store.notes_dir()) == os.path.realpath(root):
        return None
    return partial(asyncio.to_thread, ids_held, root)
