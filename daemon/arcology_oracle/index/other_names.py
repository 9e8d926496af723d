"""The other names the index holds a written note under. A hard link inside the notes
directory is indexed under each of its names, and a write through one name changes the
file under all of them, while the watcher hears only of the name written through
(inotify reports a change by the name it was made through). So after a capture or a
forget every indexed name of the written file is read again at once, not left stale
until the next reconcile."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def other_names(root: Path, rel: str, indexed: Iterable[str], st: os.stat_result) -> list[str]:
    """The paths among ``indexed`` (relative to ``root``) that name the file ``st`` is
    the stat of, but ``rel``: each with the same device and inode (a symlink's too: the
    indexer reads only the name a reconcile would choose). Nothing is looked at when the
    file has one name only (``st_nlink``), as nearly every note has."""
    if st.st_nlink < 2:
        return []
    out = []
    for path in indexed:
        if path == rel:
            continue
        try:
            found = os.stat(root / path)
        except (OSError, ValueError):
            continue  # gone, or a name no file system holds
        if (found.st_dev, found.st_ino) == (st.st_dev, st.st_ino):
            out.append(path)
    return out
