"""A note the store could not take (its disk full) is read again until it is taken: its
old rows may hold a heading made private since, and no change of the note will come to
say so. The real LiveIndex (watcher, retry loop) over real files and a real SQLite
database; the full disk is the store's write failing as SQLite fails on one."""

from __future__ import annotations

from arcology_oracle.index import live
from arcology_oracle.index.live import LiveIndex
from arcology_oracle.store.db import OperationalError
from tests.index.test_private_files import rows_holding
from tests.runners import wait_until

NOTE = "#+title: Notes\n* Bank\nmy pin is staleotterpin 4242\n"


async def test_a_heading_made_private_while_the_disk_is_full_leaves_the_index_once_there_is_room(
    tmp_path, make_settings, monkeypatch
):
    roam = tmp_path / "notes"
    roam.mkdir()
    (roam / "bank.org").write_text(NOTE)
    monkeypatch.setattr(live, "SETUP_CHECK_SECONDS", 0.05)
    settings = make_settings(roam_dir=roam)
    index = LiveIndex(settings)
    await index.start()
    try:
        await index.ready.wait()

        def found() -> bool:  # any row of any table, read as anyone holding the database could
            return bool(rows_holding(settings.db_path, ("staleotterpin",)))

        assert found()
        store = index.index.indexer.store
        real_replace, tries = store.replace_file, []

        def full_disk(*args, **kwargs):
            tries.append(True)
            raise OperationalError("database or disk is full")

        monkeypatch.setattr(store, "replace_file", full_disk)
        (roam / "bank.org").write_text(NOTE.replace("* Bank", "* Bank :private:"))
        await wait_until(lambda: len(tries) >= 1, timeout=10)  # the watcher's read: refused
        monkeypatch.setattr(store, "replace_file", real_replace)  # room again; the note does not change
        await wait_until(lambda: not found(), timeout=10)
    finally:
        await index.stop()
