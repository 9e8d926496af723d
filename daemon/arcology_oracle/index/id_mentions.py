"""Whether the user links to a note the daemon created, read from the notes themselves.

A daily a capture created goes with its last capture (:mod:`.created_notes`), unless the
user links to its ``:ID:``: then the ID is theirs too, and the head stays. The index's
links say so for what it holds, but not for a private heading, an excluded or hidden
note, or a note it has not read yet, whose links are the user's all the same. So before
a created note goes, every org file below the notes directory is read for ``id:`` and
one of the note's IDs (nothing read is kept). An encrypted note (``.org.gpg``) cannot be
read: a link there is not seen.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ..notes.note_ids import ID_LINE_RE, note_paths
from .note_files import read_note


def head_ids(head: bytes) -> list[str]:
    """The ``:ID:`` values of a note's head (a created note's, :func:`~arcology_oracle.notes.capture.new_file_head`)."""
    return [m.group(1).decode("utf-8", "replace") for m in ID_LINE_RE.finditer(head)]


def mentioned_elsewhere(root: Path, rel: str, ids: Iterable[str]) -> bool:
    """Whether an org file below ``root`` (hidden and excluded folders too, but for a
    version control's store; symlinks not followed) other than the note ``rel`` holds ``id:`` followed by one of ``ids``. A
    file that cannot be read, or is no regular file (a FIFO named as a note: opened
    without blocking, never waited on), is passed over."""
    needles = [f"id:{node_id}".encode() for node_id in ids if node_id]
    if not needles:
        return False
    this = os.path.realpath(root / rel)
    for path in note_paths(root):
        if os.path.realpath(path) == this:
            continue
        try:
            data = read_note(root, os.path.relpath(path, root))
        except OSError:  # an I/O error while read
            continue
        if data is not None and any(needle in data for needle in needles):
            return True
    return False
