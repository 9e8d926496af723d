"""``chunks_hash`` holds each chunk's heading and first turn (m035), so that the nearest
headings' statement, which every /similar and /search runs, goes from a text's hash to
its headings without reading the chunks' rows (BENCHMARKS.md, issue 30, thirty-fourth
round); and an index made before it is upgraded with every row, rowid and answer kept."""

from __future__ import annotations

import sqlite3

from arcology_oracle.store import Store
from tests.store.test_vectors import clustered
from tests.store_rows import write_file


def index_columns(db_path, name: str) -> list[str]:
    with sqlite3.connect(db_path) as conn:
        columns = [r[2] for r in conn.execute(f"PRAGMA index_info({name})")]
    conn.close()
    return columns


def nearest_plan(store: Store, vector) -> list[str]:
    """The query plan of the statement :meth:`~arcology_oracle.store.Store.knn_headings`
    runs for ``vector``, with the values it bound."""
    seen: list[str] = []
    store.conn.set_trace_callback(seen.append)
    try:
        assert store.knn_headings(vector, 10)
    finally:
        store.conn.set_trace_callback(None)
    (sql,) = [s for s in seen if "vec_distance_cosine" in s]  # its values written in by SQLite
    return [r[3] for r in store.conn.execute(f"EXPLAIN QUERY PLAN {sql}")]


def written(db_path, n: int = 60):
    """A store of ``n`` headings and their vectors; returns the vectors."""
    writer = Store.open(db_path)
    hashes = write_file(writer, "a.org", list(range(n)))
    x = clustered(n, 32, seed=3)
    writer.store_vectors(list(zip(hashes, x.tolist())))
    writer.close()
    return x


def rows(db_path) -> dict[str, list[tuple]]:
    with sqlite3.connect(db_path) as conn:
        out = {
            table: conn.execute(f"SELECT rowid, * FROM {table} ORDER BY rowid").fetchall()
            for table in ("files", "headings", "chunks", "embeddings")
        }
    conn.close()
    return out


def test_the_nearest_headings_read_no_chunk_row(tmp_path):
    x = written(tmp_path / "db.sqlite3")
    assert index_columns(tmp_path / "db.sqlite3", "chunks_hash") == ["hash", "heading", "first_turn"]
    reader = Store.open(tmp_path / "db.sqlite3")
    try:
        plan = nearest_plan(reader, x[0])
    finally:
        reader.close()
    assert any("COVERING INDEX chunks_hash" in step for step in plan), plan


def test_an_index_from_before_keeps_its_rows_and_answers(tmp_path):
    db = tmp_path / "db.sqlite3"
    x = written(db)
    with sqlite3.connect(db) as conn:  # as m001 made it, m035 not applied
        conn.execute("DROP INDEX chunks_hash")
        conn.execute("CREATE INDEX chunks_hash ON chunks(hash)")
        conn.execute("DELETE FROM _migrations WHERE name = 'm035_chunk_hashes_cover_their_headings'")
    conn.close()
    before = rows(db)
    old = Store.open(db)  # migrates
    try:
        nearest = [old.knn_headings(v, 10) for v in x[:5]]
        found = old.fts_search('"body"', 5, snippets=False)
    finally:
        old.close()
    assert index_columns(db, "chunks_hash") == ["hash", "heading", "first_turn"]
    assert rows(db) == before
    fresh = tmp_path / "fresh.sqlite3"
    written(fresh)
    store = Store.open(fresh)
    try:
        assert nearest == [store.knn_headings(v, 10) for v in x[:5]] and all(nearest)
        assert found == store.fts_search('"body"', 5, snippets=False) and found
    finally:
        store.close()
