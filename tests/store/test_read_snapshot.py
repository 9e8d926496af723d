"""A request's reads in one read snapshot (``StoreBase.snapshot``): what cannot change
inside it (``meta``'s values, whether the vector table exists) is read once, a write
another connection commits meanwhile is seen by the next snapshot and not inside this
one, and nothing writes in it. /similar asked ``meta`` and ``sqlite_master`` ~13 times a
request (BENCHMARKS.md, issue 30, thirty-third round)."""

from __future__ import annotations

import pytest

from arcology_oracle.answers import search
from arcology_oracle.config import load_settings
from arcology_oracle.store import Store
from tests.store.test_vectors import clustered
from tests.store_rows import write_file

VECTOR_TABLE_READ = "FROM sqlite_master WHERE type = 'table'"
META_READ = "SELECT value FROM meta WHERE key"


@pytest.fixture
def stores(tmp_path):
    """``(writer, reader)`` of one index with vectors, as the daemon's indexer and a
    request thread have."""
    writer = Store.open(tmp_path / "db.sqlite3")
    hashes = write_file(writer, "a.org", list(range(40)))
    writer.store_vectors(list(zip(hashes, clustered(40, 16, seed=3).tolist())))
    reader = Store.open(tmp_path / "db.sqlite3")
    yield writer, reader
    reader.close()
    writer.close()


def statements(store: Store) -> list[str]:
    """The statements ``store`` runs from now on (SQLite's trace callback)."""
    seen: list[str] = []
    store.conn.set_trace_callback(seen.append)
    return seen


def count(seen: list[str], part: str) -> int:
    return sum(part in sql for sql in seen)


def test_a_snapshot_reads_meta_and_the_vector_table_once(stores):
    _, reader = stores
    seen = statements(reader)
    for _ in range(3):
        assert reader.has_vector_table()
        assert reader.write_generation()
    assert (count(seen, VECTOR_TABLE_READ), count(seen, META_READ)) == (3, 3)  # outside one: every time
    seen.clear()
    with reader.snapshot():
        for _ in range(3):
            assert reader.has_vector_table()
            assert reader.write_generation()
            assert reader.get_meta("embed_dims") == "16"
    assert (count(seen, VECTOR_TABLE_READ), count(seen, META_READ)) == (1, 2), seen


def test_a_write_is_seen_by_the_next_snapshot_and_not_inside_one(stores):
    writer, reader = stores
    x = clustered(40, 16, seed=3)
    before = reader.write_generation()
    with reader.snapshot():
        assert reader.has_vector_table() and reader.write_generation() == before
        # Another connection drops the vectors (a new embedding model) and commits.
        assert writer.ensure_embedding_model("other-model", "{}", force=True)
        assert reader.get_meta("embed_model") != "other-model"
        assert reader.has_vector_table() and reader.write_generation() == before
        assert reader.knn_headings(x[0], 5)  # its snapshot still holds the vectors
    # The next request sees the write, its meta and the schema.
    assert reader.get_meta("embed_model") == "other-model"  # outside a snapshot: at once
    with reader.snapshot():
        assert not reader.has_vector_table()
        assert reader.write_generation() != before
        assert reader.get_meta("embed_model") == "other-model"
        assert reader.knn_headings(x[0], 5) == []
    # ... and a table created again.
    writer.store_vectors(list(zip(write_file(writer, "b.org", [50]), clustered(1, 24, seed=4).tolist())))
    with reader.snapshot():
        assert reader.has_vector_table() and reader.get_meta("embed_dims") == "24"


def test_nothing_is_written_inside_a_snapshot(stores):
    writer, reader = stores
    generation = writer.write_generation()
    with reader.snapshot():
        with pytest.raises(RuntimeError, match="read snapshot"):
            with reader.transaction():
                reader._set_meta("embed_model", "written")
        assert not reader.conn.in_transaction or reader.get_meta("embed_model") != "written"
    assert writer.get_meta("embed_model") != "written" and writer.write_generation() == generation


def test_an_error_ends_the_snapshot_and_what_it_remembered(stores):
    writer, reader = stores
    with pytest.raises(ValueError):
        with reader.snapshot():
            assert reader.has_vector_table()
            raise ValueError("the request failed")
    assert not reader.conn.in_transaction
    writer.ensure_embedding_model("other-model", "{}", force=True)
    assert not reader.has_vector_table()


def test_reads_are_shared_in_a_snapshot_and_not_in_a_write_transaction(stores):
    writer, reader = stores
    assert reader.shares_reads
    with reader.snapshot():
        assert reader.conn.in_transaction and reader.shares_reads
        with reader.snapshot():  # nested: the same one
            assert reader.shares_reads and reader.has_vector_table()
    with writer.transaction():
        assert not writer.shares_reads
        with writer.snapshot():  # inside the writer's transaction: just runs there
            assert not writer.shares_reads
            writer._set_meta("seen_by_the_writer", "1")
            assert writer.get_meta("seen_by_the_writer") == "1"


def test_similar_node_reads_in_one_snapshot(stores, tmp_path):
    _, reader = stores
    settings = load_settings(overrides={"roam_dir": tmp_path, "db_path": tmp_path / "db.sqlite3"}, environ={})
    seen = statements(reader)
    search.similar_node(reader, settings, "node-3", 5)
    assert seen[0] == "BEGIN" and seen[-1] == "COMMIT" and count(seen, "BEGIN") == 1, seen
    assert count(seen, VECTOR_TABLE_READ) == 1
    metas = [sql for sql in seen if META_READ in sql]
    assert len(metas) == len(set(metas)), metas  # each key once


def test_the_caches_of_the_process_serve_a_snapshot(stores):
    # In a read snapshot nothing is this connection's own uncommitted write: the notes'
    # means (store/node_means.py) are shared as outside one.
    _, reader = stores
    with reader.snapshot():
        first = reader.node_vectors(["node-1", "node-2"])
        hits = reader._means.hits
        assert reader.node_vectors(["node-1", "node-2"]).keys() == first.keys() == {"node-1", "node-2"}
        assert reader._means.hits == hits + 2
