"""Keeping the index live while the daemon runs: the first reconcile in the background,
the embedding worker, and the watcher's changes re-indexed.

:class:`LiveIndex` owns an :class:`~arcology_oracle.index.service.OracleIndex` and what
keeps it in step with the notes; the HTTP app starts and stops it and serves from its
``index``. :class:`EmbedWorker` embeds pending chunks in the background and backs off
while the embedder fails.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
from collections.abc import Collection, Iterable
from pathlib import Path

from ..config import Settings
from ..store import FileState
from ..ollama.embed import Embedder
from ..errors import DimensionMismatch, ServiceUnavailable
from ..store.db import OperationalError
from ..notes.setup_files import changed_since, notes_to_read_again
from .parsing import newly_private
from .service import OracleIndex
from .watcher import RoamWatcher

log = logging.getLogger(__name__)

# How often the setup files notes name are looked at (a stat of each, no read): they may
# live outside the notes directory, where the watcher does not see them.
SETUP_CHECK_SECONDS = 2.0
# How long re-indexing a changed note waits for another program's lock on the database
# before the note is stale, so withheld (see LiveIndex), instead of the writer's busy
# timeout (10 s): its old rows, a heading the save made private among them, are served
# while it waits. Only the watcher's re-index: a capture, the embedding, a reconcile wait
# the whole timeout.
SAVE_LOCK_WAIT_MS = 250


class LiveIndex:
    """The index, its embedding worker, its first reconcile and its watcher.

    ``await start()`` opens the index and returns at once: the first reconcile runs in
    the background (requests are answered meanwhile) and sets ``ready`` when it ends,
    failed or not. With ``watch``, changed files are re-indexed as the watcher reports
    them, and a full reconcile runs when it asks for a rescan; every
    :data:`SETUP_CHECK_SECONDS`, the notes whose setup files changed are read again (one
    made private must take its notes out of the index without their being saved).
    Until the first reconcile (or a rescan's) has read them, the notes stored that changed
    since are withheld too (:meth:`_withhold_unread`): one changed while the daemon was
    down may hold a heading made private since, and requests are answered while it runs.
    A note the store could not take (its disk full, the database locked by another
    program for more than :data:`SAVE_LOCK_WAIT_MS`: the report's
    ``stale``, or such an error out of the whole batch) keeps its old rows, which may
    hold a heading made private since, and no change of the note will come to say so: it
    is read again then, after 2 s, the wait doubling up to ``retry_max_seconds``,
    until it is taken. Meanwhile no answer shows anything of it (``OracleIndex.withheld``):
    whether its change made a heading private is not known until it is taken.
    ``await stop()`` undoes it.
    """

    def __init__(
        self,
        settings: Settings,
        embedder: Embedder | None = None,
        *,
        watch: bool = True,
        ready: asyncio.Event | None = None,
    ):
        self.settings = settings
        self.index = OracleIndex(settings, embedder)
        self.worker = EmbedWorker(self.index)
        self.index.vectors_dropped = self.worker.wake  # a query met a replaced model
        self.ready = ready if ready is not None else asyncio.Event()
        self._watch = watch
        self._watcher: RoamWatcher | None = None
        self._reconcile_task: asyncio.Task | None = None
        self._setup_task: asyncio.Task | None = None
        self._stale: dict[str, tuple[float, float]] = {}  # note -> (when to read it again, the wait after)
        self._unread: frozenset[str] = frozenset()  # changed since stored, until a full reconcile read them

    async def start(self) -> None:
        await self.index.start()
        await self._withhold_unread()  # before any request
        self.worker.start()
        self._reconcile_task = asyncio.create_task(self._first_reconcile(), name="first-reconcile")
        if self._watch and self.settings.roam_dir.is_dir():
            self._watcher = RoamWatcher(
                self.settings.roam_dir,
                exclude_globs=self.settings.exclude_globs,
                debounce=self.settings.debounce_seconds,
                on_paths=self._reindex,
                on_rescan=self._rescan,
                alias=lambda rel: self.index.indexer.aliases.get(rel),
                private=self.index.indexer.private,
            )
            self._watcher.start()
            self._setup_task = asyncio.create_task(self._watch_setup_files(), name="setup-files")
        elif self._watch:
            log.warning("roam directory %s does not exist; not watching it", self.settings.roam_dir)

    async def stop(self) -> None:
        if self._watcher is not None:
            await self._watcher.stop()
        for task in (self._setup_task, self._reconcile_task):
            if task is not None:
                task.cancel()
                try:
                    await task
                except asyncio.CancelledError:
                    pass
        await self.worker.stop()
        await self.index.close()

    async def _first_reconcile(self) -> None:
        """The start's reconcile; refused whole by the store (a locked database, a full
        disk), tried again after 2 s, the wait doubling up to ``retry_max_seconds``, until
        taken: the notes made or changed while the daemon was down wait for it (the stored
        ones changed meanwhile are withheld, see :meth:`_reconcile`)."""
        wait, again = SETUP_CHECK_SECONDS, True
        while again:
            again = False
            try:
                report = await self._reconcile()
                log.info(
                    "initial index of %s: %d files, %d indexed, %d unchanged, %d private, %d removed, %d failed",
                    self.settings.roam_dir, report.seen, report.indexed, report.unchanged, report.private,
                    report.deleted, len(report.failed),
                )
            except OperationalError:
                log.exception("initial index failed; the notes are read again in %.0f s", wait)
                again = True
            except Exception:
                log.exception("initial index failed")
            self.ready.set()
            self.worker.wake()
            if again:
                await asyncio.sleep(wait)
                wait = min(wait * 2, self.settings.retry_max_seconds)

    async def _watch_setup_files(self) -> None:
        """Read again, every :data:`SETUP_CHECK_SECONDS` after the first reconcile, the
        notes a setup file of which changed since they were read."""
        await self.ready.wait()
        while True:
            await asyncio.sleep(SETUP_CHECK_SECONDS)
            try:
                # The private files' setup files too (kept in memory: index/private_files.py).
                private = self.index.indexer.private
                setups = private.setup_records
                # (Memory's record of a note replaces the store's: it names the setup files
                # the note names in its private parts, which the store may not.)
                rels = await self.index.read(
                    lambda store: notes_to_read_again(list({**dict(store.setup_records()), **dict(setups)}.items())),
                    own=True,
                )
                if rels:
                    # Said once they are read: a note the change made private is not named.
                    were = private.among(rels)
                    await self._reindex(rels)
                    log.info("a setup file changed: read %d note(s) again: %s", len(rels), private.shown(rels, were))
                now = asyncio.get_running_loop().time()
                if due := [rel for rel, (at, _) in self._stale.items() if at <= now]:
                    await self._reindex(due)
            except Exception:
                log.exception("checking the notes' setup files failed; trying again in %.0f s", SETUP_CHECK_SECONDS)

    async def _reindex(self, paths: list[str]) -> None:
        try:
            report = await self.index.index_paths(paths, lock_wait_ms=SAVE_LOCK_WAIT_MS)
        except OperationalError:  # a full disk, a locked database (not a bug, which would fail again and again)
            self._note_stale(paths, ())
            raise
        self._note_stale(report.stale, paths)
        if report.new_pending:
            self.worker.wake()

    def _note_stale(self, stale: Collection[str], read: Iterable[str]) -> None:
        """Schedule the notes ``stale`` to be read again (see the class docstring); the
        notes ``read`` that are not are no longer, and their chunks left pending while
        they were withheld (the embedding passes them by) are embedded now."""
        now = asyncio.get_running_loop().time()
        taken = False
        for rel in read:
            if rel not in stale:
                taken |= self._stale.pop(rel, None) is not None
        if taken:
            self.worker.wake()
        for rel in stale:
            wait = self._stale[rel][1] if rel in self._stale else SETUP_CHECK_SECONDS
            self._stale[rel] = (now + wait, min(wait * 2, self.settings.retry_max_seconds))
        self._publish_withheld()

    def _publish_withheld(self) -> None:
        self.index.withheld = frozenset(self._stale) | self._unread

    async def _withhold_unread(self) -> None:
        """Withhold, until a full reconcile has read them, the notes stored whose file (or
        a setup file of which) changed since, or is gone, and those a change of the reading
        rules (``private_tags``, the reader) has it read again: any may hold a heading made
        private (while the daemon was down; in a folder moved where ``exclude_globs`` leave
        it out), and requests are answered while it runs."""
        root, rules = self.settings.roam_dir, self.index.indexer.parse_options.reading_rules()

        def changed(store) -> frozenset[str]:
            again = store.read_again_under(rules, newly_private(store.recorded_reading_rules(), rules))
            return frozenset([*changed_since_stored(root, store.file_states()), *again])

        self._unread = self._unread | await self.index.read(changed, own=True)  # (those withheld are hidden from that read)
        self._publish_withheld()

    async def _rescan(self) -> None:
        await self._withhold_unread()
        await self._reconcile()
        self.worker.wake()

    async def _reconcile(self):
        """A full reconcile, its stale notes scheduled. When the store refuses it whole
        (locked before it began, its disk full at a commit), the notes stored whose files
        changed since (or are gone) are stale: each is read again alone (and, meanwhile,
        withheld), as no change of theirs may come to say so."""
        try:
            report = await self.index.reconcile()
        except OperationalError:
            root = self.settings.roam_dir
            changed = await self.index.read(lambda store: changed_since_stored(root, store.file_states()), own=True)
            # Those withheld since the start are hidden from that read: stale too, read again alone until taken.
            changed, self._unread = {*changed, *self._unread}, frozenset()
            self._note_stale(changed, ())
            raise
        self._unread = frozenset()
        self._note_stale(report.stale, ())
        return report


class EmbedWorker:
    """Background task embedding pending chunks; backs off while the embedder fails.

    ``wake()`` after indexing new work. On failure it waits with exponential backoff and
    jitter (1 s doubling up to ``settings.retry_max_seconds``) or until woken, then retries:
    the daemon keeps serving keyword results meanwhile and nothing pending is lost.
    """

    def __init__(self, index: OracleIndex):
        self.index = index
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self.idle = asyncio.Event()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="embed-worker")
        self.wake()

    def wake(self) -> None:
        self.idle.clear()
        self._wake.set()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass

    async def _run(self) -> None:
        delay = 1.0
        last_error = None
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self.index.embed_pending()
                if last_error is not None:
                    log.info("embedder is back; pending chunks embedded")
                delay, last_error = 1.0, None
                self.idle.set()
            except (ServiceUnavailable, DimensionMismatch) as exc:
                # Say it once per distinct failure, not at every retry.
                level = logging.DEBUG if str(exc) == last_error else logging.WARNING
                log.log(level, "embedding paused, retrying with backoff (next in %.0f s): %s", delay, exc)
                last_error = str(exc)
                await self._sleep_or_wake(delay * (0.8 + 0.4 * random.random()))
                delay = min(delay * 2, self.index.settings.retry_max_seconds)
                self._wake.set()
            except Exception:
                log.exception("embedding worker error; retrying in %.0f s", delay)
                await self._sleep_or_wake(delay)
                delay = min(delay * 2, self.index.settings.retry_max_seconds)
                self._wake.set()

    async def _sleep_or_wake(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self._wake.wait(), timeout=seconds)
        except asyncio.TimeoutError:
            pass


def changed_since_stored(root: Path, states: dict[str, FileState]) -> list[str]:
    """The notes of ``states`` (the store's) whose file under ``root`` is gone or has
    another size or mtime, or a setup file of which changed (each looked at once)."""
    changed = []
    looks: dict[str, tuple] = {}
    for rel, state in states.items():
        try:
            st = os.stat(root / rel)
        except OSError:
            changed.append(rel)
            continue
        if (st.st_size, st.st_mtime_ns) != (state.size, state.mtime_ns) or changed_since(state.setup, looks):
            changed.append(rel)
    return changed
