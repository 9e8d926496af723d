"""The in-memory vector index: recall against exact search, and staying in step with the
store's writes (same process through deltas, other processes through a reload)."""

from __future__ import annotations

import mmap
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from arcology_oracle.store import Store
from arcology_oracle.store import vectors
from arcology_oracle.store.vectors import VectorIndex
from arcology_oracle.notes.records import Chunk, ParsedFile, sha256_hex
from tests.store_rows import heading, write_file


def clustered(n: int, dims: int, seed: int, clusters: int = 50) -> np.ndarray:
    """Unit vectors around random topic centres, with a shared offset (as real models
    have), so neighbours are meaningful and dimensions are not zero-mean."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dims)).astype(np.float32)
    offset = rng.standard_normal(dims).astype(np.float32)
    x = centres[rng.integers(0, clusters, n)] + 1.2 * rng.standard_normal((n, dims)).astype(np.float32) + offset
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def exact(matrix: np.ndarray, ids: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    d = np.linalg.norm(matrix - query, axis=1)
    return ids[np.argsort(d, kind="stable")[:k]].tolist()


def loaded(matrix: np.ndarray, ids: np.ndarray) -> VectorIndex:
    index = VectorIndex()
    index.exact_below = 0  # always prefilter, however small
    index.load("g", matrix.shape[1], len(ids), [(ids, matrix)])
    return index


def test_prefiltered_search_has_exact_recall_on_clustered_vectors():
    both = clustered(6060, 256, seed=1)  # queries from the same topics as the notes
    x, queries = both[:6000], both[6000:]
    ids = np.arange(100, 6100, dtype=np.int64)
    index = loaded(x, ids)
    hits = 0
    for q in queries:
        got = [i for i, _ in index.search(q, 10)]
        hits += len(set(got) & set(exact(x, ids, q, 10)))
        assert got == [i for i, _ in index.search(q, 10, exact=True)] or set(got) != set(exact(x, ids, q, 10))
    assert hits / (10 * len(queries)) >= 0.99


def test_the_prefilter_keeps_a_share_of_a_large_index(monkeypatch):
    """A neighbour whose sign bits differ from the query's in many places, which many far
    vectors' bits do not: found once the prefilter keeps a share of the index, lost with
    a fixed count (at a million headings, 400 gave recall@10 0.988)."""
    rng = np.random.default_rng(5)
    dims, n = 128, 50_000
    x = rng.standard_normal((n, dims)).astype(np.float32)
    query = np.where(rng.random(dims) < 0.5, -1.0, 1.0).astype(np.float32)
    weak = rng.choice(dims, 52, replace=False)
    query[weak] *= 0.05  # small, but well clear of the centre (~0.005 from zero)
    near = query.copy()
    near[weak] *= -1  # 52 bits apart, and nearer the query than any other vector by far
    x[1234] = near
    ids = np.arange(n, dtype=np.int64)
    index = loaded(x, ids)
    center = x.mean(axis=0)
    bits_apart = ((x > center) != (query > center)).sum(axis=1)
    assert 400 < int((bits_apart < bits_apart[1234]).sum()) < n // 20  # what the test rests on
    assert exact(x, ids, query, 1) == [1234]
    monkeypatch.setattr(vectors, "CANDIDATE_SHARE", 0.0)
    assert 1234 not in [i for i, _ in index.search(query, 10)]
    monkeypatch.setattr(vectors, "CANDIDATE_SHARE", 1 / 20)
    assert [i for i, _ in index.search(query, 10)][0] == 1234


def test_the_prefilter_keeps_exactly_the_smallest_distances_ties_by_position():
    from arcology_oracle.store.vector_codes import nearest_by_bits

    rng = np.random.default_rng(2)
    for hamming in (rng.binomial(256, 0.5, 5000).astype(np.uint16), np.full(300, 7, np.uint16),
                    np.array([3, 1, 2, 1, 0, 2, 2, 5], np.uint16)):  # fmt: skip
        for wanted in (1, 2, 5, len(hamming) // 3, len(hamming) - 1):
            got = nearest_by_bits(hamming, wanted)
            assert len(got) == len(set(got.tolist())) == wanted
            assert sorted(hamming[got].tolist()) == sorted(hamming.tolist())[:wanted]
            last = hamming[got].max()
            tied = np.flatnonzero(hamming == last)
            assert set(got[hamming[got] == last].tolist()) == set(tied[: int((hamming[got] == last).sum())].tolist())


def test_distances_are_l2_and_sorted():
    x = clustered(500, 64, seed=3)
    ids = np.arange(500, dtype=np.int64)
    index = loaded(x, ids)
    result = index.search(x[7], 5)
    assert result[0][0] == 7 and result[0][1] == pytest.approx(0.0, abs=1e-2)
    distances = [d for _, d in result]
    assert distances == sorted(distances)
    for rowid, d in result:
        assert d == pytest.approx(float(np.linalg.norm(x[rowid] - x[7])), abs=2e-3)


def test_deltas_keep_the_index_equal_to_a_fresh_load():
    x = clustered(3000, 64, seed=4)
    index = loaded(x[:2000], np.arange(2000, dtype=np.int64))
    removed = np.arange(0, 2000, 3, dtype=np.int64)
    added_ids = np.arange(2000, 3000, dtype=np.int64)
    index.record(vectors.Delta("g", "h", removed, added_ids, x[2000:3000]))
    index.sync("h", reload=lambda: pytest.fail("the delta leads there: no reload"))
    keep = np.setdiff1d(np.arange(3000), removed)
    fresh = loaded(x[keep], keep.astype(np.int64))
    assert len(index) == len(fresh) == len(keep)
    for q in clustered(20, 64, seed=5):
        assert [i for i, _ in index.search(q, 10, exact=True)] == [i for i, _ in fresh.search(q, 10, exact=True)]
        assert set(i for i, _ in index.search(q, 10)).isdisjoint(removed.tolist())


def test_a_broken_chain_reloads_and_a_superseded_delta_is_never_applied():
    x = clustered(100, 16, seed=6)
    index = loaded(x[:50], np.arange(50, dtype=np.int64))
    # A rolled-back write recorded g -> x; the next write from g replaces it.
    index.record(vectors.Delta("g", "rolled-back", np.array([1, 2]), np.empty(0, np.int64), np.empty((0, 16), np.float32)))
    index.record(vectors.Delta("g", "h", np.empty(0, np.int64), np.array([50]), x[50:51]))
    index.sync("h", reload=lambda: pytest.fail("no reload"))
    assert len(index) == 51
    reloads = []
    index.sync("written-by-another-process", reload=lambda: reloads.append(1))
    assert reloads == [1]


def test_a_token_the_index_moved_past_is_served_by_the_newer_index_without_a_reload():
    # A reader whose read snapshot began before a write another reader has applied since
    # asks for the older token (StoreBase.snapshot): reading every vector again, and again
    # for the next reader at the newer token, would cost seconds at 100k.
    x = clustered(60, 16, seed=6)
    index = loaded(x[:50], np.arange(50, dtype=np.int64))
    index.record(vectors.Delta("g", "h", np.empty(0, np.int64), np.array([50]), x[50:51]))
    index.sync("h", reload=lambda: pytest.fail("the delta leads there"))
    index.sync("g", reload=lambda: pytest.fail("g is older than h: no reload"))
    assert index.generation == "h" and len(index) == 51
    # A load breaks the chain: what came before it is not known to be older.
    index.load("z", 16, 50, [(np.arange(50, dtype=np.int64), x[:50])])
    reloads = []
    index.sync("h", reload=lambda: reloads.append(1))
    assert reloads == [1]
    # Nor is a token before a new model's (a reset): its reader must read its own vectors.
    index.record(vectors.Delta("z", "r", np.empty(0, np.int64), np.arange(10, dtype=np.int64), x[:10], reset=True))
    index.sync("r", reload=lambda: pytest.fail("the delta leads there"))
    assert len(index) == 10
    index.sync("z", reload=lambda: reloads.append(2))
    assert reloads == [1, 2]


# -- through the store ---------------------------------------------------------------


@pytest.fixture
def stores(tmp_path):
    writer = Store.open(tmp_path / "db.sqlite3")
    reader = Store.open(tmp_path / "db.sqlite3")
    yield writer, reader
    writer.close()
    reader.close()


def exact_hashes(store: Store, query: np.ndarray, k: int) -> list[str]:
    rows = store.conn.execute("SELECT e.hash, v.embedding FROM embeddings e JOIN vec_embeddings v ON v.rowid = e.id").fetchall()
    matrix = np.stack([np.frombuffer(r[1], "<f4") for r in rows])
    order = np.argsort(np.linalg.norm(matrix - query, axis=1), kind="stable")[:k]
    return [rows[i][0] for i in order]


def test_store_knn_follows_inserts_and_deletes_of_the_writer(stores):
    writer, reader = stores
    x = clustered(1500, 32, seed=7)
    hashes = write_file(writer, "a.org", list(range(1000)))
    writer.store_vectors(list(zip(hashes, x[:1000].tolist())))
    assert [h for h, _ in reader.knn(x[3], 10)] == exact_hashes(reader, x[3], 10)
    # Same process: the reader applies the writer's deltas (no reload).
    index = reader._vector_index()
    assert index is writer._vector_index()
    hashes_b = write_file(writer, "b.org", list(range(1000, 1500)))
    writer.store_vectors(list(zip(hashes_b, x[1000:].tolist())))
    writer.delete_file("a.org")
    generation = index.generation
    got = [h for h, _ in reader.knn(x[1200], 10)]
    assert index.generation != generation and len(index) == 500
    assert got == exact_hashes(reader, x[1200], 10) and set(got) <= set(hashes_b)


def test_store_knn_reloads_after_another_process_wrote(stores, monkeypatch):
    writer, reader = stores
    x = clustered(400, 32, seed=8)
    hashes = write_file(writer, "a.org", list(range(300)))
    writer.store_vectors(list(zip(hashes, x[:300].tolist())))
    reader.knn(x[0], 5)
    # Another process: its writes never reach this process's index.
    other = Store.open(writer.path)
    other._vindex = VectorIndex()
    more = write_file(other, "b.org", list(range(300, 400)))
    other.store_vectors(list(zip(more, x[300:].tolist())))
    other.close()
    assert [h for h, _ in reader.knn(x[350], 10)] == exact_hashes(reader, x[350], 10)
    assert len(reader._vector_index()) == 400


def test_rolled_back_write_leaves_knn_exact(stores):
    writer, reader = stores
    x = clustered(300, 32, seed=9)
    hashes = write_file(writer, "a.org", list(range(300)))
    writer.store_vectors(list(zip(hashes[:200], x[:200].tolist())))
    reader.knn(x[0], 5)
    with pytest.raises(RuntimeError):
        with writer.transaction():
            writer.vectors_changed(removed=[1, 2, 3])
            raise RuntimeError("rolled back")
    writer.store_vectors(list(zip(hashes[200:], x[200:].tolist())))
    assert [h for h, _ in reader.knn(x[1], 10)] == exact_hashes(reader, x[1], 10)
    assert len(reader._vector_index()) == 300


def test_new_embedding_model_resets_the_index(stores):
    writer, reader = stores
    writer.ensure_embedding_model("m1", "{}")
    hashes = write_file(writer, "a.org", list(range(50)))
    writer.store_vectors(list(zip(hashes, clustered(50, 32, seed=10).tolist())))
    reader.knn(np.ones(32, np.float32), 3)
    assert writer.ensure_embedding_model("m2", "{}")
    assert reader.knn(np.ones(32, np.float32), 3) == []
    y = clustered(50, 48, seed=11)
    writer.store_vectors(list(zip(hashes, y.tolist())))
    assert [h for h, _ in reader.knn(y[4], 5)] == exact_hashes(reader, y[4], 5)
    assert reader._vector_index().dims == 48


async def test_started_index_loads_vectors_before_the_first_query(index, settings):
    """And counts the nodes the graph signal needs (~20-30 ms at a million headings)."""
    from arcology_oracle.index.service import OracleIndex

    fresh = OracleIndex(settings)
    await fresh.start()
    try:
        await fresh._warming
        shared = vectors.shared_index(str(settings.db_path.resolve()))
        stored = await fresh.read(lambda s: s.conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])
        assert shared.generation is not None and len(shared) == stored > 0
        statements: list[str] = []

        def count(store: Store) -> int:
            store.conn.set_trace_callback(statements.append)
            try:
                return store.node_count()
            finally:
                store.conn.set_trace_callback(None)

        assert await fresh.read(count) > 0
        assert statements and not [s for s in statements if "COUNT(DISTINCT own_id)" in s], statements
    finally:
        await fresh.close()


def test_node_vectors_are_the_mean_of_distinct_stored_vectors(stores):
    from arcology_oracle.answers import retrieval

    writer, reader = stores
    x = clustered(20, 16, seed=12)
    hashes = write_file(writer, "a.org", list(range(20)))
    writer.store_vectors(list(zip(hashes, x.tolist())))
    got = reader.node_vectors(["node-3", "node-7", "missing"])
    assert set(got) == {"node-3", "node-7"}
    for node in ("node-3", "node-7"):
        ids = [r["id"] for r in reader.node_headings(node)]
        assert np.allclose(got[node], retrieval.stored_vector(reader, ids), atol=1e-6)


def test_a_restart_restores_the_snapshot_instead_of_reading_every_vector(stores):
    writer, reader = stores
    x = clustered(600, 32, seed=12)
    hashes = write_file(writer, "a.org", list(range(600)))
    writer.store_vectors(list(zip(hashes, x.tolist())))
    reader.knn(x[0], 5)
    assert reader._vector_index().saved_generation is None  # a full load saves nothing by itself
    reader.close()
    snapshot = Path(f"{writer.path}-vectors")
    assert snapshot.exists()
    # A new process: its own index, and reading the vector table would fail.
    again = Store.open(writer.path)
    again._vindex = VectorIndex()
    token = again.get_meta(vectors.META_KEY)
    again.conn.execute("ALTER TABLE vec_embeddings RENAME TO vec_hidden")
    try:
        with pytest.raises(Exception):
            again.conn.execute("SELECT count(*) FROM vec_embeddings").fetchone()
        again._load_vectors()  # the restore: never touches the table
        assert again._vindex.generation == again._vindex.saved_generation == token and len(again._vindex) == 600
    finally:
        again.conn.execute("ALTER TABLE vec_hidden RENAME TO vec_embeddings")
    assert [h for h, _ in again.knn(x[9], 10)] == exact_hashes(again, x[9], 10)
    again.close()


def mapping(array: np.ndarray):
    """The memory map ``array`` views, or None."""
    while array is not None and not isinstance(array, mmap.mmap):
        array = array.obj if isinstance(array, memoryview) else getattr(array, "base", None)
    return array


def test_the_snapshot_is_the_owners_alone(tmp_path):
    """As the database (tests/cli/test_cli.py): it was 0644, the umask's."""
    from arcology_oracle.store import vector_snapshot

    path = tmp_path / "index.sqlite3-vectors"
    assert vector_snapshot.save(loaded(clustered(50, 8, seed=3), np.arange(1, 51)), path)
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_a_restored_snapshot_is_mapped_and_changes_never_reach_its_file(tmp_path):
    from arcology_oracle.store import vector_snapshot

    x = clustered(700, 32, seed=15)
    ids = np.arange(1, 701)
    saved = loaded(x[:600], ids[:600])
    path = tmp_path / "index.sqlite3-vectors"
    assert vector_snapshot.save(saved, path)
    before = path.read_bytes()
    restored = VectorIndex()
    restored.exact_below = 0
    assert vector_snapshot.restore(restored, path, "g")
    assert mapping(restored._q) is not None and mapping(restored._bits) is not None
    # Changes it applies in place (rows removed: the last rows move into their places;
    # rows replaced), then beyond its capacity (rows added): as the index never saved does.
    removed, replaced = ids[:600:3], ids[1:600:3]
    changes = [
        vectors.Delta("g", "h", removed, replaced, x[1:600:3][::-1].copy()),
        vectors.Delta("h", "i", np.empty(0, np.int64), ids[600:], x[600:]),
    ]
    for index in (restored, saved):
        for delta in changes:
            index.record(delta)
        index.sync("i", reload=lambda: pytest.fail("the index follows the changes"))
    assert len(restored) == len(saved) == 700 - len(removed)
    for q in (x[650], x[4], x[301], x[599]):
        assert restored.search(q, 10) == saved.search(q, 10)
    assert path.read_bytes() == before


def smaps_field(array: np.ndarray, field: str) -> str:
    """The ``field:`` line's value, in /proc/self/smaps, of the mapping holding ``array``'s
    first byte (Linux)."""
    address, inside = array.ctypes.data, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and ":" not in head:
            start, end = (int(x, 16) for x in head.split("-"))
            inside = start <= address < end
        elif inside and line.startswith(f"{field}:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError("no mapping holds the array")


def vm_flags(array: np.ndarray) -> set[str]:
    """The kernel's flags of the mapping holding ``array``."""
    return set(smaps_field(array, "VmFlags").split())


def resident_kb(array: np.ndarray) -> int:
    """How much of the mapping holding ``array`` is mapped into this process, kB."""
    return int(smaps_field(array, "Rss").split()[0])


def restored_snapshot(tmp_path, seed: int) -> tuple[np.ndarray, VectorIndex]:
    """3,000 vectors of 256 dimensions, saved as a snapshot and mapped back."""
    from arcology_oracle.store import vector_snapshot

    x = clustered(3000, 256, seed=seed)
    path = tmp_path / "index.sqlite3-vectors"
    assert vector_snapshot.save(loaded(x, np.arange(1, 3001)), path)
    restored = VectorIndex()
    assert vector_snapshot.restore(restored, path, "g")
    return x, restored


@pytest.mark.skipif(sys.platform != "linux", reason="/proc/self/smaps is Linux's")
def test_the_kernel_is_told_the_int8_rows_are_read_at_random(tmp_path):
    _, restored = restored_snapshot(tmp_path, seed=17)
    # A query reads a few hundred int8 rows: no read-ahead ("rr"); the sign bits, whole.
    assert "rr" in vm_flags(restored._q)
    assert "rr" not in vm_flags(restored._bits)


@pytest.mark.skipif(sys.platform != "linux", reason="/proc/self/smaps is Linux's")
def test_fault_in_maps_every_page_a_query_reads_whole_and_no_int8_row(tmp_path):
    _, restored = restored_snapshot(tmp_path, seed=19)
    bits_kb = restored._bits.nbytes // 1024  # 4 words x 3,000 rows: 94 kB
    assert resident_kb(restored._bits) < bits_kb and resident_kb(restored._q) == 0  # mapped, not read
    assert restored.fault_in() >= restored._bits.nbytes // mmap.PAGESIZE
    assert resident_kb(restored._bits) >= bits_kb
    assert resident_kb(restored._q) == 0  # the rows are read a few hundred at a time


def test_fault_in_writes_the_buffers_a_query_reuses_so_the_first_query_allocates_none(tmp_path):
    _, restored = restored_snapshot(tmp_path, seed=23)
    assert len(restored) * restored.dims < restored.exact_below  # searched exactly: no buffer is used
    restored.fault_in()
    assert getattr(restored, "_prefilter_bufs", None) is None and getattr(restored, "_scratch_buf", None) is None
    restored.exact_below = 0  # prefilter, as a large index does
    restored.fault_in()
    buffers, scratch = restored._prefilter_bufs, restored._scratch_buf
    assert len(buffers[0]) >= len(restored) and not buffers[0][: len(restored)].any()  # written
    restored.search(restored._rows(0, 1)[0], 10)
    assert restored._prefilter_bufs is buffers and restored._scratch_buf is scratch


def test_warming_has_the_os_read_the_whole_snapshot(stores, monkeypatch):
    from arcology_oracle.store import vector_snapshot

    writer, reader = stores
    x = clustered(300, 32, seed=18)
    writer.store_vectors(list(zip(write_file(writer, "a.org", list(range(300))), x.tolist())))
    reader.warm_vectors()  # reads every vector and saves the snapshot
    snapshot = Path(f"{writer.path}-vectors")
    advised: list[tuple[int, int, int]] = []
    monkeypatch.setattr(vector_snapshot, "_PREFETCH_STEP", 4096)
    monkeypatch.setattr(vector_snapshot.os, "posix_fadvise", lambda fd, offset, n, advice: advised.append((offset, n, advice)))
    again = Store.open(writer.path)
    again._vindex = VectorIndex()  # as in a new process
    again.warm_vectors()  # restores the snapshot
    assert mapping(again._vindex._q) is not None
    assert {a for _, _, a in advised} == {os.POSIX_FADV_WILLNEED}
    # Every array's bytes (the int8 rows last), and nothing twice.
    size = snapshot.stat().st_size
    covered = sorted((o, o + n) for o, n, _ in advised)
    assert all(a[1] <= b[0] for a, b in zip(covered, covered[1:]))
    assert sum(n for _, n, _ in advised) > size - 4096 and covered[-1][1] <= size
    rows = again._vindex._q.nbytes
    assert sum(n for _, n, _ in advised[-(rows // 4096 + 1):]) >= rows
    again.close()


def test_a_snapshot_cut_short_is_deleted_and_every_vector_read(stores):
    writer, reader = stores
    x = clustered(300, 32, seed=16)
    hashes = write_file(writer, "a.org", list(range(300)))
    writer.store_vectors(list(zip(hashes, x.tolist())))
    reader.warm_vectors()
    snapshot = Path(f"{writer.path}-vectors")
    snapshot.write_bytes(snapshot.read_bytes()[: snapshot.stat().st_size // 2])
    again = Store.open(writer.path)
    again._vindex = VectorIndex()
    assert [h for h, _ in again.knn(x[7], 10)] == exact_hashes(again, x[7], 10)
    assert len(again._vindex) == 300 and mapping(again._vindex._q) is None
    assert not snapshot.exists()
    again.close()


def test_removing_vectors_deletes_the_snapshot_and_a_stale_one_is_never_used(stores):
    writer, reader = stores
    x = clustered(400, 32, seed=13)
    hashes = write_file(writer, "a.org", list(range(300)))
    writer.store_vectors(list(zip(hashes, x[:300].tolist())))
    write_file(writer, "b.org", list(range(300, 400)))
    reader.warm_vectors()
    snapshot = Path(f"{writer.path}-vectors")
    assert snapshot.exists()
    # Another process removes vectors (a note deleted, or made private): the snapshot goes.
    other = Store.open(writer.path)
    other._vindex = VectorIndex()
    other.delete_file("a.org")
    assert not snapshot.exists()
    other.close()
    # A stale snapshot (written before another process added vectors) is deleted, not used.
    reader.warm_vectors()
    assert snapshot.exists()
    other = Store.open(writer.path)
    other._vindex = VectorIndex()
    b_hashes = [h for (h,) in other.conn.execute("SELECT hash FROM chunks ORDER BY id")]
    other.store_vectors(list(zip(b_hashes, x[300:].tolist())))
    other.conn.close()
    assert snapshot.exists()
    fresh = Store.open(writer.path)
    fresh._vindex = VectorIndex()
    assert [h for h, _ in fresh.knn(x[350], 10)] == exact_hashes(fresh, x[350], 10)
    assert not snapshot.exists() and len(fresh._vindex) == 100
    fresh.close()


def test_knn_headings_gives_each_heading_its_nearest_chunk(stores):
    writer, reader = stores
    x = clustered(200, 32, seed=14)
    hashes = write_file(writer, "a.org", list(range(100)))
    # A second file whose headings share texts with the first: one hash, two headings.
    parsed = ParsedFile(path="b.org", title="T", file_id=None, headings=[heading(i) for i in range(100, 110)])
    chunks = [[Chunk(0, f"text a.org {i}", hashes[i])] for i in range(10)]
    writer.replace_file(parsed, size=1, mtime_ns=1, file_hash=sha256_hex("b"), chunks=chunks)
    writer.store_vectors(list(zip(hashes, x[:100].tolist())))
    got = reader.knn_headings(x[3], 20)
    nearest = reader.knn(x[3], 20)
    owners = {h: [r[0] for r in reader.conn.execute("SELECT heading FROM chunks WHERE hash = ?", (h,))] for h, _ in nearest}
    want = sorted(((hid, d) for h, d in nearest for hid in owners[h]), key=lambda t: t[1])
    assert sorted(got, key=lambda t: (t[1], t[0])) == sorted(want, key=lambda t: (t[1], t[0]))
    assert [d for _, d in got] == sorted(d for _, d in got) and len(got) == len(want) > 20


@pytest.mark.parametrize("prefilter", [True, False])
def test_skipped_rows_are_left_out_before_the_prefilter(prefilter):
    """A search skipping the rows nearest the query (a large note /similar leaves out)
    returns the nearest of the others, as a search of an index without them does, however
    many rows are skipped."""
    matrix, ids = clustered(3000, 128, seed=5), np.arange(10, 3010)
    index = loaded(matrix, ids) if prefilter else VectorIndex()
    if not prefilter:
        index.load("g", 128, len(ids), [(ids, matrix)])
    query = matrix[0]
    skip = np.array(exact(matrix, ids, query, 2900))  # all but 100: more than the prefilter keeps
    kept = ~np.isin(ids, skip)
    without = VectorIndex()
    without.load("g", 128, int(kept.sum()), [(ids[kept], matrix[kept])])
    assert index.search(query, 10, skip=skip) == without.search(query, 10, exact=True)
    assert [r for r, _ in index.search(query, 10, skip=np.array([], np.int64))] == [r for r, _ in index.search(query, 10)]


def test_the_rows_of_notes_left_out_keep_a_text_another_note_shares(stores):
    """``vector_rows_of``: the rows of the given nodes' chunks, save a text another
    node's heading holds too (skipping it would hide that heading from the search)."""
    writer, reader = stores
    hashes = write_file(writer, "a.org", list(range(6)))
    parsed = ParsedFile(path="b.org", title="T", file_id=None, headings=[heading(100)])
    writer.replace_file(parsed, size=1, mtime_ns=1, file_hash=sha256_hex("b"), chunks=[[Chunk(0, "text a.org 0", hashes[0])]])
    writer.store_vectors(list(zip(hashes, clustered(6, 32, seed=3).tolist())))
    row = dict(reader.conn.execute("SELECT hash, id FROM embeddings"))
    got = reader.vector_rows_of(["node-0", "node-1", "node-4"])
    assert sorted(got) == sorted(row[hashes[i]] for i in (1, 4))  # node-0's text is also node-100's
    assert reader.vector_rows_of([]) == []


def test_the_rows_left_out_are_remembered_until_the_next_write(stores):
    """``rows_of_nodes`` (what /similar skips, asked again from heading after heading of
    one large note) reads them once a write generation: a write brings the new ones."""
    from arcology_oracle.answers.nearest import rows_of_nodes

    writer, reader = stores
    hashes = write_file(writer, "a.org", [0, 1])
    writer.store_vectors(list(zip(hashes, clustered(2, 32, seed=3).tolist())))
    first = rows_of_nodes(reader, frozenset({"node-0"}))
    assert rows_of_nodes(reader, frozenset({"node-0"})) is first and len(first) == 1
    more = write_file(writer, "b.org", [0])  # another heading of node-0, with a text of its own
    writer.store_vectors(list(zip(more, clustered(1, 32, seed=4).tolist())))
    row = dict(reader.conn.execute("SELECT hash, id FROM embeddings"))
    assert sorted(rows_of_nodes(reader, frozenset({"node-0"})).tolist()) == sorted([row[hashes[0]], row[more[0]]])
