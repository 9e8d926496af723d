"""The mean of the stored vectors: what a query's vector is as close to as the average
heading of the index (``dot(query, mean)`` is the mean cosine of a unit query with every
stored chunk vector, the query's own among them).

Read from the in-memory index (:class:`.vectors.VectorIndex`): its centre, the mean it
keeps for its sign bits, recomputed whenever the number of vectors doubles past
:data:`EXACT_BELOW`, so it is the mean of at least half of the vectors there are now; below
that many it is computed here from the int8 rows (a few hundred thousand numbers, well
under a millisecond), because a small index that grew by changes keeps the centre it was
loaded with, or none. That computation is remembered for the index's generation: a section
query with a note holding another among its candidates (answers/holders.py) and the
filter of answers/written.py each asked for it, ~1.6 ms apiece on a manual's 308 headings.
"""

from __future__ import annotations

import weakref

import numpy as np

from .vectors import VectorIndex

# The index recentres itself only from this many vectors on (VectorIndex._add).
EXACT_BELOW = 1000

# index -> (its generation, its size, the mean computed from its rows), read-only
_computed: weakref.WeakKeyDictionary[VectorIndex, tuple[str, int, np.ndarray]] = weakref.WeakKeyDictionary()


def mean_of(index: VectorIndex) -> np.ndarray | None:
    """The mean vector (float64, read-only) of what ``index`` holds, None when it holds
    nothing. Computed once per generation of the index (every change moves it)."""
    with index.lock:
        generation, centered_at, arrays = index.state()
        n = len(arrays["ids"])
        if n == 0:
            return None
        if n >= EXACT_BELOW and centered_at:
            return np.asarray(arrays["center"], np.float64)
        known = _computed.get(index)
        if known is not None and generation is not None and known[:2] == (generation, n):
            return known[2]
        mean = (arrays["q"].astype(np.float64) * arrays["scale"][:, None]).mean(axis=0)
        mean.flags.writeable = False
        if generation is not None:
            _computed[index] = (generation, n, mean)
        return mean
