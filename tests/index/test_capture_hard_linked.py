"""A daily with a second name (a hard link) inside the notes is indexed under both. A
capture written through one name changes the file under both, and the watcher hears only
of the name written: every name of the file the index holds is read again at once, not
left stale until the next reconcile. Real files, real SQLite, the real indexer."""

from __future__ import annotations

import datetime
import os

from arcology_oracle.index.memory import Memory
from tests.index.test_write_refusals import daily_of


async def rows_by_file(index, node_id: str) -> list[str]:
    return await index.read(lambda s: s.files_of_node(node_id))


async def test_a_capture_is_indexed_under_every_name_of_its_hard_linked_daily(index, roam_dir):
    daily = daily_of(roam_dir)
    daily.write_bytes(b"#+title: today\n* Mine\nThe plum tree\n")
    twin = roam_dir / "twin.org"
    os.link(daily, twin)
    rel = daily.relative_to(roam_dir).as_posix()
    await index.index_paths([rel, "twin.org"])
    memory = Memory(index)
    first = await memory.memorize("The heron came back to the pond", now=datetime.datetime.now())
    assert first.file == rel and not first.inbox, first
    assert await rows_by_file(index, first.id) == sorted(["twin.org", rel])
    # Again, from the state the daemon remembers (the note not read again).
    second = await memory.memorize("The heron left at dusk", now=datetime.datetime.now())
    assert await rows_by_file(index, second.id) == sorted(["twin.org", rel])
    row = await index.read(lambda s: s.file_info(["twin.org", rel]))
    assert row["twin.org"]["hash"] == row[rel]["hash"], row
    # A forget reads every name again too: nothing of either capture is left under twin.org.
    for node_id in (second.id, first.id):
        await memory.forget(node_id)
        assert await rows_by_file(index, node_id) == []
    assert twin.read_bytes() == b"#+title: today\n* Mine\nThe plum tree\n"
    row = await index.read(lambda s: s.file_info(["twin.org", rel]))
    assert row["twin.org"]["hash"] == row[rel]["hash"], row
