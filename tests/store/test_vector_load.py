"""A full load of the in-memory vector index in small blocks (to keep the daemon's peak
memory down) builds exactly the index that wider blocks built."""

from __future__ import annotations

import numpy as np

from arcology_oracle.store import vectors
from arcology_oracle.store.vectors import VectorIndex


def test_the_centre_is_summed_bit_for_bit_as_in_one_wide_block(monkeypatch):
    # Rows of very different magnitudes: float64 sums of them depend on the order of the
    # additions, so summing sub-blocks and adding their sums would move the centre.
    rng = np.random.default_rng(3)
    scale = np.where(rng.random(3000) < 0.5, 1e-6, 1e6).astype(np.float32)[:, None]
    x = rng.standard_normal((3000, 64)).astype(np.float32) * scale
    monkeypatch.setattr(vectors, "LOAD_BLOCK", 100)
    index = VectorIndex()
    index.load("g", 64, len(x), [(np.arange(len(x), dtype=np.int64), x)])
    wide = index._rows(0, 3000).sum(axis=0, dtype=np.float64)
    added = sum(index._rows(s, s + 100).sum(axis=0, dtype=np.float64) for s in range(0, 3000, 100))
    assert not np.array_equal(added, wide)  # the data makes the order matter
    assert np.array_equal(index._block_sum(0, 3000), wide)
    assert np.array_equal(index._center, (wide / 3000).astype(np.float32))


def test_loading_in_small_batches_gives_the_same_index(monkeypatch):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5000, 96)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    ids = np.arange(10, 5010, dtype=np.int64)
    one = VectorIndex()
    one.load("g", 96, len(x), [(ids, x)])
    monkeypatch.setattr(vectors, "LOAD_BLOCK", 256)
    small = VectorIndex()
    small.load("g", 96, len(x), [(ids[i : i + 300], x[i : i + 300]) for i in range(0, len(x), 300)])
    for name, a in one.state()[2].items():
        assert np.array_equal(a, small.state()[2][name]), name
