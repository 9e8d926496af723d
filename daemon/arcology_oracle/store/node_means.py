"""Whole notes' mean vectors kept in memory between queries, valid for one write generation.

``/similar?node`` and ``/suggest-links`` compare the query note and ~30 candidate notes by
the mean of each note's stored vectors (:meth:`~.search.Search.node_vectors`): a join over
headings, chunks and embeddings and ~3 KB of float32 per chunk, ~0.8 ms for 30 notes at
20k headings. The same notes come back: the note the user is in, asked about again as the
cursor moves; notes that are near many others. :class:`NodeMeans` remembers the means
already computed, shared by every store of a database in the process, and forgets them
at the next write (:mod:`.generation_cache`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from .generation_cache import GenerationCache
from .shared import PerDatabase

# ~2,700 notes of 768 float64s: a bounded share of the daemon's memory (RSS goal < 300 MB
# at 100k headings), enough for the notes one session keeps coming back to.
MAX_BYTES = 16 * 1024 * 1024
_ABSENT_BYTES = 64  # what remembering "this note has no vector" costs, roughly


def _size_of(mean: np.ndarray | None) -> int:
    return _ABSENT_BYTES if mean is None else mean.nbytes


class NodeMeans:
    """Node id -> its mean vector (read-only float64) or None (no vector stored), for one
    write generation (:class:`~.generation_cache.GenerationCache`). Thread-safe."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self._means: GenerationCache[str, np.ndarray] = GenerationCache(max_bytes, _size_of)

    @property
    def hits(self) -> int:
        return self._means.hits

    def lookup(self, token: str | None, node_ids: Sequence[str]) -> tuple[dict[str, np.ndarray], list[str]]:
        """``(means found, node ids not cached)`` for ``node_ids`` at ``token`` (the
        write generation the caller read before this call). Nodes known to have no
        vector are in neither."""
        found, missing = self._means.lookup(token, node_ids)
        return {node_id: mean for node_id, mean in found.items() if mean is not None}, missing

    def remember(self, token: str | None, means: dict[str, np.ndarray], asked: Iterable[str]) -> None:
        """File the means computed for ``asked`` (those absent from ``means`` have no
        vector) under ``token``; dropped if the cache moved to another token meanwhile."""
        for mean in means.values():
            mean.flags.writeable = False  # shared by every reader from now on
        self._means.remember(token, {node_id: means.get(node_id) for node_id in asked})


_caches = PerDatabase(NodeMeans)


def shared_means(key: str) -> NodeMeans:
    """The process's cache for database ``key`` (as ``vectors.shared_index``'s key)."""
    return _caches.get(key)
