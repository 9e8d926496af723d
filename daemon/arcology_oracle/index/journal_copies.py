"""The copies the forget journal sets aside, removed once they are old.

A record :func:`.forget_journal.settle` could not finish is moved aside
(``forget-journal.<database's name>.kept-<time>``, or ``.damaged-<time>``), mode 0600,
beside the database. It holds a note's bytes from a capture on, private text too: it is
kept for the user to take back what the warning said was kept, not forever.
:func:`remove_old_copies` (at the daemon's start, after the record is settled) removes
each such copy last modified :data:`~.forget_journal.KEEP_DAYS` days ago or more (setting
one aside marks it modified then; ``touch`` keeps one longer) and set aside that long ago
by the time in its name (the times of another user's record cannot be set: by its old
modification time alone it would go at the very start that set it aside), each removal
logged. Only regular files whose names are those of the database's own copies are
removed: not another database's, not a directory or link a damaged record's path was.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from pathlib import Path

from .forget_journal import KEEP_DAYS, journal_path

log = logging.getLogger(__name__)


def remove_old_copies(db_path: Path | str, *, now: float | None = None) -> list[Path]:
    """Remove the copies of ``db_path``'s forget record older than ``KEEP_DAYS`` days
    (see the module docstring); the paths removed. Raises ``OSError`` when the folder
    is there and cannot be read (a copy that cannot be removed is logged and left)."""
    record = journal_path(db_path)
    if record is None:
        return []
    cutoff = (time.time() if now is None else now) - KEEP_DAYS * 86400
    names = tuple(f"{record.name}.{kind}-" for kind in ("kept", "damaged"))
    removed = []
    try:
        with os.scandir(record.parent) as entries:
            found = [e for e in entries if e.name.startswith(names)]
    except (FileNotFoundError, NotADirectoryError):  # no folder (yet): no copies
        return []
    for entry in found:
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode) or max(st.st_mtime, _named_time(entry.name)) > cutoff:
                continue
            os.unlink(entry.path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            log.error("cannot remove %s, an old copy of a forget record (%s)", entry.path, exc.strerror or exc)
            continue
        removed.append(Path(entry.path))
        log.info("removed %s: the text an interrupted forget set aside %d days ago or more (kept %d days)",
                 entry.path, KEEP_DAYS, KEEP_DAYS)  # fmt: skip
    return removed


def _named_time(name: str) -> float:
    """The time a copy's name says it was set aside (``...-<%Y%m%dT%H%M%S>[-n]``, local
    time, as :func:`.forget_journal._move_aside` writes it); 0 for a name without one."""
    try:
        return time.mktime(time.strptime(name.rsplit(".", 1)[-1].split("-")[1], "%Y%m%dT%H%M%S"))
    except (IndexError, ValueError, OverflowError):
        return 0.0
