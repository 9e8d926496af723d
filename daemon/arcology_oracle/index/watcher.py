"""Watching the roam directory with watchdog and feeding changed paths to the index.

watchdog calls us on its own thread; we keep only what matters (``.org`` files that are
indexable, both ``src_path`` and ``dest_path`` of moves, and directory events), hand it
to the event loop with ``call_soon_threadsafe``, and debounce: once no event has arrived
for ``debounce_seconds`` the collected paths are re-indexed in one batch (a path that no
longer exists is purged). So each Emacs save (lock file, backup rename, write, close) is
one re-index, and a ``git checkout`` of 1,000 files is a handful of batches, not 1,000
jobs. Directory events (a directory created with files in it, moved in or out, deleted)
trigger a full reconcile, which only stats unchanged files.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

from watchdog import events
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from ..notes.files import may_have_excluded_names, is_excluded, is_indexable_path
from .private_files import PrivateFiles

log = logging.getLogger(__name__)

# A batch is flushed after this long even if events keep coming (a long git operation).
MAX_BATCH_WAIT = 5.0
# How often to check that the roam directory itself still exists (inotify cannot tell
# us when a deleted root is created again).
ROOT_CHECK_SECONDS = 1.0


# Every kind of event but a file opened or closed unwritten: asked for, those come for
# every file anyone reads (the first reconcile reads them all: 27,000 events at 100,000
# headings, each handled on watchdog's threads and dropped by _Handler).
WATCHED_EVENTS = [
    events.FileCreatedEvent, events.FileModifiedEvent, events.FileAttribEvent, events.FileClosedEvent,
    events.FileDeletedEvent, events.FileMovedEvent, events.DirCreatedEvent, events.DirModifiedEvent,
    events.DirAttribEvent, events.DirDeletedEvent, events.DirMovedEvent, events.EventsLostEvent,
]  # fmt: skip


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if os.path.isdir(path) else None


class _Handler(FileSystemEventHandler):
    def __init__(self, on_event: Callable[[FileSystemEvent], None]):
        self._on_event = on_event

    def on_any_event(self, event: FileSystemEvent) -> None:
        self._on_event(event)


class RoamWatcher:
    """Debounced watcher of ``root``. ``on_paths(rels)`` re-indexes files;
    ``on_rescan()`` reconciles the whole directory. Both are awaited on the loop,
    one batch at a time, so work never piles up. ``alias(rel)`` names the path a file is
    indexed under when that is a symlink's path and ``rel`` its real path (else None);
    ``private`` are the private files the indexer saw: the log line said once a batch is
    read counts those private before or after the read, and never names them
    (:meth:`.private_files.PrivateFiles.shown`)."""

    def __init__(
        self,
        root: Path,
        *,
        exclude_globs: tuple[str, ...],
        debounce: float,
        on_paths: Callable[[list[str]], Awaitable[None]],
        on_rescan: Callable[[], Awaitable[None]],
        alias: Callable[[str], str | None] = lambda rel: None,
        private: PrivateFiles | None = None,
    ):
        self.root = Path(os.path.realpath(root))
        self.exclude_globs = exclude_globs
        self.debounce = debounce
        self.on_paths = on_paths
        self.on_rescan = on_rescan
        self.alias = alias
        self.private = private if private is not None else PrivateFiles()
        self._paths: dict[str, None] = {}
        self._rescan = False
        self._changed = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._observer: Observer | None = None
        self._tasks: list[asyncio.Task] = []
        self._root_lost = False  # inotify said the root itself was deleted or moved
        self.batches = 0

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._start_observer()
        self._tasks = [
            asyncio.create_task(self._run(), name="roam-watcher"),
            asyncio.create_task(self._guard_root(), name="roam-root-guard"),
        ]

    def _start_observer(self) -> None:
        self._observer = Observer()
        self._observer.schedule(_Handler(self._from_thread), str(self.root), recursive=True, event_filter=WATCHED_EVENTS)
        self._observer.daemon = True
        self._observer.start()

    async def _stop_observer(self) -> None:
        if self._observer is not None:
            observer, self._observer = self._observer, None
            observer.stop()
            await asyncio.to_thread(observer.join, 5)

    async def stop(self) -> None:
        await self._stop_observer()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            try:
                await task
            except asyncio.CancelledError:
                pass

    async def _guard_root(self) -> None:
        """Notice the roam directory vanishing and coming back (a restore, a re-clone,
        a remount), even quickly (a new inode): watch it again and reconcile. While it
        is missing the index is kept as it is, so a briefly unmounted directory does not
        empty the index."""
        watched_inode = _inode(self.root)
        while True:
            await asyncio.sleep(ROOT_CHECK_SECONDS)
            inode = _inode(self.root)
            if inode == watched_inode and not self._root_lost:
                continue
            self._root_lost = False
            await self._stop_observer()
            if inode is None:
                log.warning("roam directory %s disappeared; keeping the index until it comes back", self.root)
            else:
                log.info("roam directory %s is back: watching and reconciling it", self.root)
                self._start_observer()
                self._rescan = True
                self._changed.set()
            watched_inode = inode

    # -- watchdog thread -> loop ------------------------------------------------------

    def _from_thread(self, event: FileSystemEvent) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._note, event)

    def _note(self, event: FileSystemEvent) -> None:
        if event.is_directory and event.event_type in ("deleted", "moved") and os.fsdecode(event.src_path) == str(self.root):
            self._root_lost = True
            return
        if event.is_directory:
            if event.event_type in ("created", "deleted", "moved"):
                self._rescan = True
                self._changed.set()
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            rel = self._relative(raw)
            if rel is not None and not is_indexable_path(rel, self.exclude_globs):
                if is_excluded(rel, self.exclude_globs) and may_have_excluded_names(self.root / rel,
                                                                                     self.exclude_globs):
                    self._rescan = True  # a hard link: a note under another name is excluded now (a walk tells)
                    self._changed.set()
                rel = self.alias(rel)  # the real file of a note indexed under a symlink's path
            if rel is not None:
                self._paths[rel] = None
                self._changed.set()

    def _relative(self, raw) -> str | None:
        if not raw:
            return None
        path = os.fsdecode(raw)
        try:
            rel = Path(path).relative_to(self.root)
        except ValueError:
            return None
        return rel.as_posix()

    # -- debounced processing ---------------------------------------------------------

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._changed.wait()
            started = loop.time()
            # Wait for a quiet period, but never longer than MAX_BATCH_WAIT in total.
            while True:
                self._changed.clear()
                remaining = MAX_BATCH_WAIT - (loop.time() - started)
                if remaining <= 0:
                    break
                try:
                    await asyncio.wait_for(self._changed.wait(), timeout=min(self.debounce, remaining))
                except asyncio.TimeoutError:
                    break
            paths, self._paths = list(self._paths), {}
            rescan, self._rescan = self._rescan, False
            self._changed.clear()
            try:
                if rescan:
                    log.info("directory change under %s: reconciling", self.root)
                    await self.on_rescan()
                elif paths:
                    # Said once they are read: a note made private by this very save is
                    # known only then, and must not be named.
                    were = self.private.among(paths)
                    await self.on_paths(paths)
                    log.info("re-indexed %d changed file(s): %s", len(paths), self.private.shown(paths, were))
            except Exception:
                log.exception("re-indexing after a change failed; it will be retried at the next change")
            self.batches += 1
