"""Draining pending chunks: successive pending_texts calls continue where the last one
stopped, and still find chunks that were (re)inserted below that point."""

from __future__ import annotations

from arcology_oracle.store import Store
from tests.test_vectors import write_file


def test_pending_texts_drains_in_order_and_finds_chunks_inserted_below_the_cursor(tmp_path):
    store = Store.open(tmp_path / "db.sqlite3")
    hashes = write_file(store, "a.org", list(range(10))) + write_file(store, "b.org", list(range(10, 20)))
    first = store.pending_texts(8)
    assert [h for h, _ in first] == hashes[:8]
    store.store_vectors([(h, [1.0, 0.0]) for h, _ in first])
    # b.org is rewritten (its chunks get new, higher ids); a.org's tail is still pending.
    store.delete_file("b.org")
    hashes_b = write_file(store, "b.org", list(range(10, 20)))
    drained: list[str] = []
    while batch := store.pending_texts(5):
        drained += [h for h, _ in batch]
        store.store_vectors([(h, [0.0, 1.0]) for h, _ in batch])
    assert sorted(drained) == sorted(hashes[8:10] + hashes_b)
    assert store.counts()["pending"] == 0
    store.close()
