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
from .errors import OracleError
from .notes.files import notes_dir_problem


def cmd_index(settings: Settings, args) -> int:
    """Read the notes into the index, then embed what is pending. A notes directory that
    is not one (a mistyped path, an unmounted disk, ~/org-roam on a new machine) is an
    error: the index is left as it is (the daemon's reconcile's rule), and "0 files" with
    exit 0 said it was done. So is writing into a database that a daemon or another
    ``index`` fills from another directory meanwhile (:func:`_claim`)."""
    if (problem := notes_dir_problem(settings.roam_dir)) is not None:
        raise OracleError(f"{problem}: nothing was indexed (give it: `arcology-oracle index DIR`)")
    claim = _claim(settings)
    try:
        return _index(settings, args)
    finally:
        if claim is not None:
            os.close(claim)


def _claim(settings: Settings) -> int | None:
    """The claim of these notes on the database (:func:`~.index.notes_claim.claim_notes`),
    held for the whole run: OracleError while a daemon (or ``doctor --repair``) serves
    another directory's notes from it (they would be replaced under it, and a daemon's
    watcher would put back those it saw change), or another ``index`` writes them (each
    would remove the other's)."""
    from .http.server import lock_database
    from .index.notes_claim import NotesClaimed, claim_notes

    db, roam = settings.db_path, settings.roam_dir
    try:
        return claim_notes(db, roam)
    except NotesClaimed as exc:
        try:  # (held for an instant: a daemon holds it for its life)
            if (lock := lock_database(db, "")) is not None:
                os.close(lock)
        except OracleError:
            raise OracleError(f"a daemon (or `doctor --repair`) serves the notes of {exc.holder} from {db}: "
                              f"indexing {roam} there would replace them under it; stop it first, or give "
                              "another --db") from None  # fmt: skip
        raise OracleError(f"another `arcology-oracle index` is writing the notes of {exc.holder} into {db}: "
                          f"indexing {roam} there at once would mix the two; wait for it to end, or give "
                          "another --db") from None  # fmt: skip


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
