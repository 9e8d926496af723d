"""What the daemon's start cleans up after a process killed in the middle of a write, before
the index reads the notes.

:func:`recover_at_start` runs once, while the daemon holds its locks on the database and
on the notes directory (so no other daemon forgets in these notes meanwhile): it settles
the record of a forget killed in its rewrite (:func:`.forget_journal.settle_at_start`:
the note finished; left alone and the record kept aside when its bytes are none the
rewrite passes through; or, when the note cannot be had now, the record left for later)
and removes the records set aside 30 days ago or more, which hold a note's text
(:func:`.journal_copies.remove_old_copies`), then removes the staging folders of killed
imports, which hold copies of chats, private ones too
(:func:`~arcology_oracle.importers.staging.remove_stale_staging`: only folders an import
makes, never one a running import holds, nor one changed in the last ten minutes, which
an import of an older version, without the lock, may be writing).
Neither ever keeps the daemon from starting.
"""

from __future__ import annotations

import logging

from ..config import Settings
from ..importers.staging import remove_stale_staging
from .forget_journal import settle_at_start
from .journal_copies import remove_old_copies

log = logging.getLogger(__name__)


def recover_at_start(settings: Settings) -> None:
    """See the module docstring."""
    settle_at_start(settings.db_path, settings.roam_dir)
    try:
        remove_old_copies(settings.db_path)
    except Exception:  # never keep the daemon from starting
        log.exception("could not look for old copies of the forget record of %s", settings.db_path)
    try:
        removed = remove_stale_staging(settings.roam_dir, any_age=True)
    except Exception:  # never keep the daemon from starting
        log.exception("could not look for the staging folders of killed imports in %s", settings.roam_dir)
        return
    for path in removed:
        log.info("removed %s, the staging folder of an import killed before it finished", path)
