"""The mean of the stored vectors (store/vector_mean.py) below the size at which the index
keeps its own centre: computed once per generation, never stale after a write. Real
SQLite, a writer and a reader of one index as the daemon's indexer and a request have."""

from __future__ import annotations

import numpy as np

from arcology_oracle.store import Store
from tests.store.test_vectors import clustered
from tests.store_rows import write_file


def test_the_mean_is_computed_once_and_again_after_a_write(tmp_path):
    """Asked twice, the same array (remembered); after ten more vectors, their mean too."""
    writer = Store.open(tmp_path / "db.sqlite3")
    reader = Store.open(tmp_path / "db.sqlite3")
    try:
        x = clustered(20, 16, seed=5)
        writer.store_vectors(list(zip(write_file(writer, "a.org", list(range(10))), x[:10].tolist())))
        first = reader.mean_vector()
        assert reader.mean_vector() is first
        assert np.allclose(first, x[:10].mean(axis=0), atol=0.02)
        writer.store_vectors(list(zip(write_file(writer, "b.org", list(range(10, 20))), x[10:].tolist())))
        assert np.allclose(reader.mean_vector(), x.mean(axis=0), atol=0.02)
    finally:
        reader.close()
        writer.close()
