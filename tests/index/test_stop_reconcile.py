"""Closing the index stops a reconcile under way at its next commit (Indexer.stop): C-c
in `arcology-oracle index` waited for every file first (7 s at 12,000 files)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from arcology_oracle.errors import Stopping
from arcology_oracle.index import indexer
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.store import Store
from tests.index.test_give_way import write_notes


async def test_closing_the_index_stops_its_reconcile_at_the_next_commit_and_loses_nothing(
    tmp_path, make_settings, monkeypatch
):
    monkeypatch.setattr(indexer, "FILES_PER_COMMIT", 4)
    roam = tmp_path / "notes"
    roam.mkdir()
    write_notes(roam, 12)
    settings = make_settings(roam_dir=roam)
    index = OracleIndex(settings)
    await index.start()
    loop = asyncio.get_running_loop()
    in_first_commit, stop_asked, go_on = threading.Event(), threading.Event(), threading.Event()

    def progress(p):  # on the writer thread, in the first commit's transaction
        if p.phase == "indexing" and p.done == 1:
            in_first_commit.set()
            assert go_on.wait(30)

    real_stop = index.indexer.stop
    monkeypatch.setattr(index.indexer, "stop", lambda: (real_stop(), stop_asked.set()))
    reconcile = asyncio.ensure_future(index.reconcile(progress))
    try:
        assert await loop.run_in_executor(None, in_first_commit.wait, 30)
        closing = asyncio.ensure_future(index.close())
        assert await loop.run_in_executor(None, stop_asked.wait, 30)
    finally:
        go_on.set()
    with pytest.raises(Stopping):
        await reconcile
    await closing
    store = Store.open(settings.db_path)
    assert store.counts()["files"] == 4  # the commit under way, whole; no file after it
    store.close()

    index = OracleIndex(settings)  # the next reconcile goes on
    await index.start()
    try:
        report = await index.reconcile()
    finally:
        await index.close()
    assert (report.unchanged, report.indexed, report.failed) == (4, 8, {})
