"""The mean of the stored vectors: what a query's vector is as close to as the average
heading of the index (``dot(query, mean)`` is the mean cosine of a unit query with every
stored chunk vector, the query's own among them).

Read from the in-memory index (:class:`.vectors.VectorIndex`): its centre, the mean it
keeps for its sign bits, recomputed whenever the number of vectors doubles past
:data:`EXACT_BELOW`, so it is the mean of at least half of the vectors there are now; below
that many it is computed here from the int8 rows (a few hundred thousand numbers, well
under a millisecond), because a small index that grew by changes keeps the centre it was
loaded with, or none.
"""

from __future__ import annotations

import numpy as np

from .vectors import VectorIndex

# The index recentres itself only from this many vectors on (VectorIndex._add).
EXACT_BELOW = 1000


def mean_of(index: VectorIndex) -> np.ndarray | None:
    """The mean vector (float64) of what ``index`` holds, None when it holds nothing."""
    with index.lock:
        _, centered_at, arrays = index.state()
        n = len(arrays["ids"])
        if n == 0:
            return None
        if n >= EXACT_BELOW and centered_at:
            return np.asarray(arrays["center"], np.float64)
        rows = arrays["q"].astype(np.float64) * arrays["scale"][:, None]
        return rows.mean(axis=0)
