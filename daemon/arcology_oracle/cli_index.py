"""``arcology-oracle index``: read the notes into the index, then embed what is pending.

Errors propagate as :class:`~.errors.OracleError` for :func:`.cli.main` to turn into one line.
"""

from __future__ import annotations

import asyncio
import os
import sys

from .cli_answers import with_index
from .cli_progress import ProgressBar
from .config import Settings
from .errors import OracleError, StoreError
from .notes.files import notes_dir_problem


def cmd_index(settings: Settings, args) -> int:
    """Read the notes into the index, then embed what is pending. A notes directory that
    is not one (a mistyped path, an unmounted disk, ~/org-roam on a new machine) is an
    error: the index is left as it is (the daemon's reconcile's rule), and "0 files" with
    exit 0 said it was done. So is replacing the notes of a daemon's database with another
    directory's while it runs (:func:`_lock_to_replace_notes`)."""
    if (problem := notes_dir_problem(settings.roam_dir)) is not None:
        raise OracleError(f"{problem}: nothing was indexed (give it: `arcology-oracle index DIR`)")
    lock = _lock_to_replace_notes(settings)
    try:
        return _index(settings, args)
    finally:
        if lock is not None:
            os.close(lock)


def _lock_to_replace_notes(settings: Settings) -> int | None:
    """The database's lock (:func:`~.http.server.lock_database`), held while ``index``
    replaces the notes of another directory: a daemon serving those from the database
    would go on watching them, and mix the two (its notes left the index under it, and
    its watcher put back those it saw change). OracleError while one runs; None when the
    index holds these notes already (indexing beside a daemon is fine then), or none that
    can be read (opening it says why, or rebuilds one that is no database)."""
    from .store.db import remembered_notes_dir

    try:
        held = remembered_notes_dir(settings.db_path)
    except StoreError:
        return None
    if held is None or held == os.path.realpath(settings.roam_dir):
        return None
    from .http.server import lock_database

    return lock_database(settings.db_path, (
        f"a daemon serves the notes of {held} from {settings.db_path}: indexing {settings.roam_dir} there would replace "
        "them under it; stop it first, or give another --db"
    ))  # fmt: skip


def _index(settings: Settings, args) -> int:
    async def run(index):
        bar = ProgressBar("reading ")
        embedded = 0
        embedding_bar: ProgressBar | None = None
        embedding_total = 0

        def on_batch(n):
            nonlocal embedded
            embedded += n
            if embedding_bar is not None:
                embedding_bar.update(embedded, embedding_total)

        async def on_reconciled(report):
            nonlocal embedding_bar, embedding_total
            bar.finish()
            print(
                f"{report.seen} files: {report.indexed} indexed, {report.unchanged} unchanged, "
                f"{report.private} private (not stored), {report.deleted} removed, {len(report.failed)} failed"
            )
            for path, reason in report.failed.items():
                print(f"  failed: {path}: {reason}", file=sys.stderr)
            if not args.no_embed:
                # Embedding began alongside the reconcile; the bar counts what is left too.
                embedding_total = embedded + (await index.status())["pending"]
                embedding_bar = ProgressBar("embedding")
                embedding_bar.update(embedded, embedding_total)

        def progress(p):
            bar.update(p.done, p.total)

        if args.no_embed:
            await on_reconciled(await index.reconcile(progress))
        else:
            _, error = await index.reconcile_and_embed(progress, on_batch, on_reconciled)
            if embedding_bar is not None:
                embedding_bar.finish()
            if error is not None:
                status = await index.status()
                print(
                    f"embedder unavailable: {error}\n{status['pending']} chunks wait for embeddings; "
                    "keyword search works now, and `arcology-oracle index` (or the daemon) embeds them later.",
                    file=sys.stderr,
                )
                return 0
        status = await index.status()
        print(f"{status['headings']} headings, {status['chunks']} chunks, {status['embedded']} embedded, {status['pending']} pending")
        return 0

    return asyncio.run(with_index(settings, run, new=True))
