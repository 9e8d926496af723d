"""The watcher on its own: real inotify events from real files, debounced into batches."""

from __future__ import annotations

import asyncio
import os

import pytest

from arcology_oracle.index.watcher import RoamWatcher
from tests.corpus_tools import emacs_save


class Recorder:
    """Collects the batches a watcher hands over and lets a test wait for a path."""

    def __init__(self):
        self.batches: list[list[str]] = []
        self.rescans = 0
        self.changed = asyncio.Event()

    async def on_paths(self, paths):
        self.batches.append(sorted(paths))
        self.changed.set()

    async def on_rescan(self):
        self.rescans += 1
        self.changed.set()

    def seen(self, path: str) -> int:
        return sum(batch.count(path) for batch in self.batches)

    async def wait_for(self, predicate, timeout: float = 10):
        async def loop():
            while not predicate():
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(loop(), timeout)


@pytest.fixture
async def watched(tmp_path):
    root = tmp_path / "roam"
    root.mkdir()
    recorder = Recorder()
    watcher = RoamWatcher(root, exclude_globs=("attic/**",), debounce=0.2, on_paths=recorder.on_paths, on_rescan=recorder.on_rescan)
    watcher.start()
    yield root, recorder
    await watcher.stop()


async def test_one_emacs_save_is_one_reindex(watched):
    root, rec = watched
    note = root / "note.org"
    note.write_text("* First\n")
    await rec.wait_for(lambda: rec.seen("note.org") >= 1)
    emacs_save(note, "* Second\ntext\n")  # lock, auto-save, backup rename, write, unlink
    emacs_save(note, "* Third\ntext\n", precious=True)
    # A later, unrelated change proves every event of the saves has been handled.
    (root / "sentinel.org").write_text("* s\n")
    await rec.wait_for(lambda: rec.seen("sentinel.org") >= 1)
    assert rec.seen("note.org") == 2  # the first write, then both saves in one debounced batch
    all_paths = {p for batch in rec.batches for p in batch}
    assert not any(p.startswith((".#", "#")) or p.endswith("~") or p.startswith("tmp") for p in all_paths)


async def test_burst_of_a_thousand_files_is_a_few_batches(watched):
    root, rec = watched
    for i in range(1000):
        (root / f"n{i:04d}.org").write_text(f"* Note {i}\n")
    await rec.wait_for(lambda: len({p for b in rec.batches for p in b}) >= 1000, timeout=30)
    assert len(rec.batches) <= 10
    assert all(rec.seen(f"n{i:04d}.org") == 1 for i in range(0, 1000, 97))


async def test_excluded_and_non_org_files_are_ignored(watched):
    root, rec = watched
    (root / "attic").mkdir()
    await rec.wait_for(lambda: rec.rescans >= 1)
    (root / "attic" / "old.org").write_text("* x\n")
    (root / "notes.txt").write_text("x")
    (root / "secret.org.gpg").write_bytes(b"x")
    (root / "ok.org").write_text("* ok\n")
    await rec.wait_for(lambda: rec.seen("ok.org") >= 1)
    assert {p for b in rec.batches for p in b} == {"ok.org"}


async def test_directory_moved_in_triggers_rescan(watched, tmp_path):
    root, rec = watched
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.org").write_text("* a\n")
    os.rename(outside, root / "moved")
    await rec.wait_for(lambda: rec.rescans >= 1)


async def test_roam_dir_deleted_and_recreated_is_watched_again(watched):
    import shutil

    root, rec = watched
    (root / "a.org").write_text("* a\n")
    await rec.wait_for(lambda: rec.seen("a.org") >= 1)
    shutil.rmtree(root)
    root.mkdir()
    (root / "b.org").write_text("* b\n")
    await rec.wait_for(lambda: rec.rescans >= 1)  # the comeback is reconciled
    (root / "c.org").write_text("* c\n")
    await rec.wait_for(lambda: rec.seen("c.org") >= 1)  # and watched again


async def test_reading_the_notes_wakes_no_watcher_thread(watched, monkeypatch):
    """Opening and reading a file (the first reconcile reads every note; so do grep and
    backups) must not even reach watchdog's handler: the inotify watch does not ask
    for those events."""
    from arcology_oracle.index import watcher as watcher_module

    kinds: list[str] = []
    original = watcher_module._Handler.on_any_event
    monkeypatch.setattr(
        watcher_module._Handler, "on_any_event", lambda self, event: (kinds.append(event.event_type), original(self, event))
    )
    root, rec = watched
    notes = [root / f"n{i}.org" for i in range(20)]
    for note in notes:
        note.write_text("* A note\n")
    await rec.wait_for(lambda: all(rec.seen(n.name) for n in notes))
    kinds.clear()
    for _ in range(3):
        for note in notes:
            note.read_bytes()
    (root / "sentinel.org").write_text("* s\n")  # events arrive in order: after the reads'
    await rec.wait_for(lambda: rec.seen("sentinel.org") >= 1)
    assert "opened" not in kinds and "closed_no_write" not in kinds, kinds
    assert "created" in kinds
