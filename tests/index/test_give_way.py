"""A reconcile gives way to the reads in flight (index/give_way.py): its walk of the notes
waits while a query is answered, within a bound, instead of taking the GIL from it."""

from __future__ import annotations

import asyncio
import gc
import threading

from arcology_oracle.index.give_way import ReadsInFlight
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.notes.files import PAUSE_EVERY, iter_org_files


class Watched(ReadsInFlight):
    """Waits as long as a read lasts (within a minute); ``paused`` is set when a pause
    of the work meets a read in flight."""

    def __init__(self):
        super().__init__(longest=60, first=60)
        self.paused = threading.Event()

    def work(self):
        pause = super().work()

        def watched():
            if self._count:
                self.paused.set()
            pause()

        return watched


def write_notes(roam, count: int) -> None:
    for i in range(count):
        (roam / f"note-{i:03}.org").write_text(f":PROPERTIES:\n:ID: n{i}\n:END:\n#+title: Note {i}\n\n* Part {i}\nText {i}.\n")


async def test_the_walk_of_a_reconcile_waits_for_the_read_in_flight(tmp_path, make_settings):
    roam = tmp_path / "notes"
    roam.mkdir()
    write_notes(roam, 40)
    index = OracleIndex(make_settings(roam_dir=roam))
    index.reads = reads = Watched()
    await index.start()
    loop = asyncio.get_running_loop()
    reading, release = threading.Event(), threading.Event()

    def hold(store):
        reading.set()
        assert release.wait(30)
        return store.counts()["files"]

    try:
        assert (await index.reconcile()).indexed == 40
        read = asyncio.create_task(index.read(hold))
        assert await loop.run_in_executor(None, reading.wait, 30)
        reconcile = asyncio.create_task(index.reconcile())
        assert await loop.run_in_executor(None, reads.paused.wait, 30), "the reconcile did not give way to the read"
        # Still walking the notes: no file stat'ed yet, nothing done.
        assert index.progress.phase == "scanning" and not reconcile.done()
        release.set()
        assert await read == 40
        report = await reconcile
    finally:
        release.set()
        await index.close()
    assert report.unchanged == 40 and reads.gave_way >= 1


def test_a_pause_waits_no_longer_than_its_work_has_run():
    now = [0.0]
    reads = ReadsInFlight(longest=30, first=0, clock=lambda: now[0])
    pause = reads.work()
    with reads.reading():
        pause()  # the work has not run yet: it does not wait (else 30 s)
    assert reads.gave_way == 0


def test_the_walk_pauses_while_it_lists_a_directory_and_while_it_yields(tmp_path):
    write_notes(tmp_path, 2 * PAUSE_EVERY + 6)
    yielded, at_pauses = [], []
    for rel, _ in iter_org_files(tmp_path, pause=lambda: at_pauses.append(len(yielded))):
        yielded.append(rel)
    assert len(yielded) == 2 * PAUSE_EVERY + 6
    # Three pauses as the directory is listed, three between the files yielded (each
    # a Path built: a third of a walk's time at a million headings).
    assert at_pauses == [0, 0, 0, 0, PAUSE_EVERY, 2 * PAUSE_EVERY]



async def test_reading_what_is_known_of_the_files_pauses_too(tmp_path, make_settings, monkeypatch):
    # After the walk, a reconcile read every indexed file's state into Python without
    # pausing: at a million headings ~0.5-0.9 s, during which a start's first query ran
    # at twice its CPU (BENCHMARKS.md, issue 30, fortieth round).
    from arcology_oracle.store import Store
    from tests.store_rows import write_file

    store = Store.open(tmp_path / "db.sqlite3")
    for i in range(600):
        write_file(store, f"note-{i:03}.org", [i])
    pauses = []
    states = store.file_states(pause=lambda: pauses.append(1))
    assert len(states) == 600 and len(pauses) == 3  # every 256 files, from the first
    store.close()

    roam = tmp_path / "notes"
    roam.mkdir()
    write_notes(roam, 3)
    given = []
    file_states = Store.file_states
    monkeypatch.setattr(Store, "file_states", lambda self, pause=None: given.append(pause) or file_states(self, pause))
    index = OracleIndex(make_settings(roam_dir=roam))
    await index.start()
    try:
        await index.reconcile()
    finally:
        await index.close()
    assert any(callable(pause) for pause in given), given


async def test_the_daemons_own_look_at_the_setup_files_is_not_a_read_to_give_way_to(
    tmp_path, make_settings, monkeypatch
):
    # The look every 2 s counted as a read in flight: a rescan's reconcile waited for it,
    # as it waits for a client's query, though no one waits for its answer.
    from arcology_oracle.index import live

    roam = tmp_path / "notes"
    roam.mkdir()
    write_notes(roam, 3)
    monkeypatch.setattr(live, "SETUP_CHECK_SECONDS", 0.01)
    looking, release = threading.Event(), threading.Event()
    real_look = live.notes_to_read_again

    def held_look(records):
        looking.set()
        assert release.wait(30)
        return real_look(records)

    monkeypatch.setattr(live, "notes_to_read_again", held_look)
    daemon = live.LiveIndex(make_settings(roam_dir=roam))
    daemon.index.reads = reads = Watched()
    await daemon.start()
    loop = asyncio.get_running_loop()
    try:
        await daemon.ready.wait()
        assert await loop.run_in_executor(None, looking.wait, 30)  # the look is in flight
        reconcile = asyncio.ensure_future(daemon.index.reconcile())
        paused = asyncio.ensure_future(loop.run_in_executor(None, reads.paused.wait, 30))
        await asyncio.wait([reconcile, paused], return_when=asyncio.FIRST_COMPLETED)
        gave_way = reads.paused.is_set()
        reads.paused.set()  # (frees the thread waiting for it)
        release.set()
        assert not gave_way, "the reconcile gave way to the daemon's own look"
        assert (await reconcile).unchanged == 3
    finally:
        release.set()
        await daemon.stop()


async def test_a_reconcile_keeps_no_path_object_per_file(tmp_path, make_settings):
    # Every object the cyclic GC tracks is scanned by each full collection, and a start's
    # reconcile made several (40-110 ms each, holding the GIL) while it held a Path (two
    # tracked objects) per file: at a million headings one fell in the first query after
    # a start, at twice a warm query's time (BENCHMARKS.md, issue 30, forty-second round).
    from pathlib import PurePath

    roam = tmp_path / "notes"
    roam.mkdir()
    write_notes(roam, 2 * PAUSE_EVERY + 6)
    inside = roam.resolve()
    index = OracleIndex(make_settings(roam_dir=roam))
    counted = []  # the Paths of notes alive as the files' states are looked at

    class Counting(ReadsInFlight):
        def work(self):
            def pause():
                if index.progress.phase == "indexing" and not counted:  # every file listed, none stat'ed yet
                    counted.append(sum(isinstance(o, PurePath) and o.parent == inside for o in gc.get_objects()))

            return pause

    index.reads = Counting()
    await index.start()
    try:
        report = await index.reconcile()
    finally:
        await index.close()
    assert report.indexed == 2 * PAUSE_EVERY + 6
    assert counted and counted[0] < PAUSE_EVERY, counted
