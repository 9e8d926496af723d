"""The statements every /similar and /search runs are compiled once per connection, not
at each run: a value SQLite reads while planning (a bound ``LIMIT`` after an ORDER BY on
an expression or a join, a bound ``LIKE`` pattern) marks the statement stale at the next
bind, and compiling the nearest headings' statement again was a third of its cost
(BENCHMARKS.md, issue 30, thirty-first round).

SQLite asks the authorizer while it compiles a statement and never while a compiled one
runs, so the calls it gets while a read runs with new values count the compilations."""

from __future__ import annotations

import pytest

from arcology_oracle.store import Store, dated
from arcology_oracle.store.db import sqlite
from tests.store.test_vectors import clustered
from tests.store_rows import write_file


@pytest.fixture
def store(tmp_path):
    """A reader's store, as the daemon's request threads have, of an index another
    store wrote."""
    writer = Store.open(tmp_path / "db.sqlite3")
    hashes = write_file(writer, "a.org", list(range(60)))
    writer.store_vectors(list(zip(hashes, clustered(60, 32, seed=3).tolist())))
    reader = Store.open(tmp_path / "db.sqlite3")
    yield reader
    reader.close()
    writer.close()


def compilations(store: Store, read, runs: int = 3) -> list[int]:
    """The authorizer's calls during each of ``runs`` runs of ``read(i)`` (``i`` the run,
    so each binds new values); the first run compiles (setting an authorizer makes every
    cached statement stale)."""
    calls = [0]

    def authorizer(*_):
        calls[0] += 1
        return sqlite.SQLITE_OK

    store.conn.set_authorizer(authorizer)
    counts = []
    try:
        for i in range(runs):
            before = calls[0]
            read(i)
            counts.append(calls[0] - before)
    finally:
        store.conn.set_authorizer(None)
    return counts


def test_nearest_headings_are_compiled_once(store):
    x = clustered(60, 32, seed=4)
    assert store.knn_headings(x[0], 10)  # the in-memory index is loaded
    counts = compilations(store, lambda i: store.knn_headings(x[i + 1], 10))
    assert counts[0] > 0 and counts[1:] == [0, 0], counts
    counts = compilations(store, lambda i: store.knn(x[i + 1], 10))
    assert counts[1:] == [0, 0], counts


def test_keyword_reads_are_compiled_once(store):
    # Each run new words: counts are remembered for the process, and only missing ones are read.
    counts = compilations(store, lambda i: store.word_counts([f"word{i}", f"other{i}"], 50), runs=4)
    assert counts[-2:] == [0, 0], counts
    counts = compilations(store, lambda i: store.exact_word_hits(f'"body" OR "{i}"', 20))
    assert counts[1:] == [0, 0], counts
    counts = compilations(store, lambda i: store.fts_scores([f'"heading" OR "{i}"'], 20))
    assert counts[1:] == [0, 0], counts
    counts = compilations(store, lambda i: store.fts_search(f'"heading" OR "{i}"', 20, snippets=False))
    assert counts[1:] == [0, 0], counts


def test_held_replies_are_compiled_once(store):
    rows = store.file_headings("a.org")
    counts = compilations(store, lambda i: store.replies_held(rows[i:]))
    assert counts[1:] == [0, 0], counts


def test_dated_and_turn_reads_are_compiled_once(store):
    """/ask's and the dated searches' reads: each run another range (none holds anything)."""
    def until(i: int) -> str:
        return f"2024-02-0{i + 1}"

    reads = {
        "fts_in_range": lambda i: dated.fts_in_range(store, f'"body" OR "{i}"', 20, "2024-01-01", until(i)),
        "vectors_in_range": lambda i: dated.vectors_in_range(store, "2024-01-01", until(i)),
        "headings_in_range": lambda i: dated.headings_in_range(store, "2024-01-01", until(i), 20),
        "turn_search": lambda i: store.turn_search(f'"body" OR "{i}"', 20),
        "turns_in_range": lambda i: store.turns_in_range("2024-01-01", until(i), 20),
    }
    counts = {name: compilations(store, read)[1:] for name, read in reads.items()}
    assert counts == dict.fromkeys(reads, [0, 0]), counts
