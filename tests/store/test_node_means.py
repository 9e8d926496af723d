"""The notes' mean vectors kept in memory (store/node_means.py): served again, bounded,
and never stale after a write, through the real daemon and the real store."""

from __future__ import annotations

import dataclasses

import numpy as np

from arcology_oracle.notes.records import Chunk, ParsedFile, sha256_hex
from arcology_oracle.store import Store
from arcology_oracle.store.node_means import NodeMeans
from tests.corpus_tools import emacs_save
from tests.runners import start_daemon, wait_indexed, wait_until
from tests.store_rows import heading

QUERY = "11111111-0000-4000-8000-000000000001"
OTHER = "22222222-0000-4000-8000-000000000002"


def note(node_id: str, title: str, body: str) -> str:
    return f":PROPERTIES:\n:ID: {node_id}\n:END:\n#+title: {title}\n{body}"


async def similar_score(daemon) -> float:
    status, body = await daemon.get_json("/similar", node=QUERY)
    assert status == 200 and body["mode"] == "vector", body
    assert [r["node_id"] for r in body["results"]] == [OTHER]
    return body["results"][0]["score"]


async def test_an_edited_note_is_compared_by_its_new_mean_vector(tmp_path, fake_ollama):
    """With two notes, /similar?node's score is the mean of the best heading's cosine and
    the whole notes' (nothing else re-ranks one candidate): after the other note gains a
    heading, the running daemon, which remembered that note's mean, must answer what a
    freshly started daemon does."""
    roam = tmp_path / "roam"
    roam.mkdir()
    (roam / "query.org").write_text(note(QUERY, "Sourdough starter", "* Feeding\nFeed the starter flour and water daily.\n"))
    other = roam / "other.org"
    other.write_text(note(OTHER, "Bread baking", "* Starter\nA starter of flour and water leavens bread.\n"))
    daemon = await start_daemon(tmp_path, roam_dir=roam, ollama_url=fake_ollama.url, embedded=True)
    try:
        before = await similar_score(daemon)
        assert await similar_score(daemon) == before  # asked again: now from the remembered means
        emacs_save(other, other.read_text() + "* Ovens\nPreheat a cast iron pot with its lid on.\n")

        async def edited() -> bool:
            _, status = await daemon.get_json("/status")
            # Two file records and three headings, all embedded.
            return status["headings"] == 5 and status["pending"] == 0 and not status["indexing"]["running"]

        await wait_until(edited, timeout=20)
        after = await similar_score(daemon)
    finally:
        daemon.stop()
    fresh_daemon = await start_daemon(tmp_path, roam_dir=roam, ollama_url=fake_ollama.url)
    try:
        await wait_indexed(fresh_daemon)
        fresh = await similar_score(fresh_daemon)
    finally:
        fresh_daemon.stop()
    assert after != before  # the new heading moved the note's mean
    assert after == fresh


def test_every_write_transaction_makes_remembered_means_stale(tmp_path):
    """A reader's remembered means are dropped by any commit of another connection: a
    heading joining the node (a vector that already existed, so the vectors' own
    generation does not change), and even a write that touches no vector."""
    writer = Store.open(tmp_path / "db.sqlite3", writer=True)
    reader = Store.open(tmp_path / "db.sqlite3")
    try:
        hashes = _write(writer, "a.org", ["node-1"])
        hashes += _write(writer, "b.org", ["node-2"])
        writer.store_vectors(list(zip(hashes, np.eye(4, dtype=np.float32).tolist())))
        assert np.allclose(reader.node_vectors(["node-1"])["node-1"], [1, 0, 0, 0])
        assert np.allclose(reader.node_vectors(["node-1"])["node-1"], [1, 0, 0, 0])
        assert reader._means.hits == 1  # the second came from memory
        _write(writer, "b.org", ["node-1"])  # b.org's heading (and its vector) moves to node-1
        assert np.allclose(reader.node_vectors(["node-1"])["node-1"], np.array([1, 1, 0, 0]) / np.sqrt(2))
        hits = reader._means.hits
        with writer.transaction():
            writer._set_meta("unrelated", "x")
        reader.node_vectors(["node-1"])
        assert reader._means.hits == hits
    finally:
        reader.close()
        writer.close()


def _write(store: Store, path: str, nodes: list[str]) -> list[str]:
    """Replace file ``path`` with one heading per node of ``nodes``, each one chunk whose
    text (and so vector) depends on the path and position only."""
    headings = [dataclasses.replace(heading(i), node_id=n, own_id=n) for i, n in enumerate(nodes)]
    chunks = [[Chunk(0, f"text {path} {i}", sha256_hex(f"text {path} {i}"))] for i in range(len(nodes))]
    parsed = ParsedFile(path=path, title="T", file_id=None, headings=headings)
    store.replace_file(parsed, size=1, mtime_ns=1, file_hash=sha256_hex(path + str(nodes)), chunks=chunks)
    return [c[0].hash for c in chunks]


def test_the_cache_is_bounded_and_forgets_the_least_recently_used():
    means = NodeMeans(max_bytes=3 * 32)
    vector = lambda i: np.full(4, float(i))  # noqa: E731  (32 bytes each)
    found, missing = means.lookup("t1", ["a", "b", "c"])
    assert found == {} and missing == ["a", "b", "c"]
    means.remember("t1", {"a": vector(1), "b": vector(2), "c": vector(3)}, ["a", "b", "c"])
    means.lookup("t1", ["a"])  # a is now the most recently used
    means.remember("t1", {"d": vector(4)}, ["d"])
    found, missing = means.lookup("t1", ["a", "b", "c", "d"])
    assert sorted(found) == ["a", "c", "d"] and missing == ["b"]
    with np.testing.assert_raises(ValueError):
        found["a"][0] = 5.0  # shared between readers: read-only
    means.remember("t0", {"b": vector(2)}, ["b"])  # computed under an older token: dropped
    assert means.lookup("t1", ["b"])[1] == ["b"]
    assert means.lookup("t2", ["a"]) == ({}, ["a"])  # another token: all forgotten
