"""Whole notes' mean vectors kept in memory between queries, valid for one write generation.

``/similar?node`` and ``/suggest-links`` compare the query note and ~30 candidate notes by
the mean of each note's stored vectors (:meth:`~.search.Search.node_vectors`): a join over
headings, chunks and embeddings and ~3 KB of float32 per chunk, ~0.8 ms for 30 notes at
20k headings. The same notes come back: the note the user is in, asked about again as the
cursor moves; notes that are near many others. :class:`NodeMeans` remembers the means
already computed, shared by every store of a database in the process.

Invalidation: every write transaction records a new random token under
:data:`WRITE_GENERATION` in ``meta`` (``StoreBase.transaction``), whatever it changed and
whichever process made it: a note edited, moved, deleted or made private, a vector stored
or dropped. A reader reads the token before the rows it computes means from, so a mean is
never older than the token it is filed under; a token other than the cache's empties the
cache. Bounded by :data:`MAX_BYTES` (least recently used first out).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence

import numpy as np

from .shared import PerDatabase

WRITE_GENERATION = "write_generation"  # the token's key in the store's meta table
# ~2,700 notes of 768 float64s: a bounded share of the daemon's memory (RSS goal < 300 MB
# at 100k headings), enough for the notes one session keeps coming back to.
MAX_BYTES = 16 * 1024 * 1024
_ABSENT_BYTES = 64  # what remembering "this note has no vector" costs, roughly


class NodeMeans:
    """Node id -> its mean vector (read-only float64) or None (no vector stored), for one
    write generation. Thread-safe."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._token: str | None = None
        self._means: OrderedDict[str, np.ndarray | None] = OrderedDict()
        self._bytes = 0
        self.hits = self.misses = 0

    def lookup(self, token: str | None, node_ids: Sequence[str]) -> tuple[dict[str, np.ndarray], list[str]]:
        """``(means found, node ids not cached)`` for ``node_ids`` at ``token`` (the
        write generation the caller read before this call). Nodes known to have no
        vector are in neither."""
        found: dict[str, np.ndarray] = {}
        missing: list[str] = []
        with self._lock:
            if token != self._token:
                self._reset(token)
            for node_id in node_ids:
                if node_id in self._means:
                    self._means.move_to_end(node_id)
                    mean = self._means[node_id]
                    if mean is not None:
                        found[node_id] = mean
                else:
                    missing.append(node_id)
            self.hits += len(node_ids) - len(missing)
            self.misses += len(missing)
        return found, missing

    def remember(self, token: str | None, means: dict[str, np.ndarray], asked: Iterable[str]) -> None:
        """File the means computed for ``asked`` (those absent from ``means`` have no
        vector) under ``token``; dropped if the cache moved to another token meanwhile."""
        with self._lock:
            if token != self._token:
                return
            for node_id in asked:
                if node_id in self._means:
                    continue
                mean = means.get(node_id)
                if mean is not None:
                    mean.flags.writeable = False  # shared by every reader from now on
                self._means[node_id] = mean
                self._bytes += _ABSENT_BYTES if mean is None else mean.nbytes
            while self._bytes > self.max_bytes and self._means:
                _, old = self._means.popitem(last=False)
                self._bytes -= _ABSENT_BYTES if old is None else old.nbytes

    def _reset(self, token: str | None) -> None:
        self._means.clear()
        self._bytes = 0
        self._token = token


_caches = PerDatabase(NodeMeans)


def shared_means(key: str) -> NodeMeans:
    """The process's cache for database ``key`` (as ``vectors.shared_index``'s key)."""
    return _caches.get(key)
