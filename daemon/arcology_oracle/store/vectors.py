"""Nearest-neighbour search over the stored vectors, in memory, with numpy.

Why not sqlite-vec's vec0 scan: its PyPI build has no SIMD code, so a full KNN scan of
100k 768-d vectors takes ~100 ms, about 10x numpy over the same matrix; reading vectors
back out of vec0 is slower still (minutes for a full read at 100k). A float32 matrix in
memory would be exact and fast but costs 300 MB at 100k x 768.

:class:`VectorIndex` keeps compact copies of each vector instead: its sign bits after
subtracting a centre (d/8 bytes; the centre, the mean vector of the index, makes the bits
informative for models whose dimensions are not zero-mean), an int8 copy with a scale per
row (d + 4 bytes, see :func:`.vector_codes.quantize`) and its exact squared norm. A query
ranks every vector by the Hamming distance of the bits, keeps the best ``candidates(k,
n)``, ranks those by L2 distance from the int8 rows, and the store re-ranks the best on
their float32 vectors: recall@10 >= 0.99 on the benchmarks (BENCHMARKS.md). 100k x 768
takes ~10 MB of bits and ~78 MB of int8 rows.

One index is shared by all the stores of a database in a process (:func:`shared_index`),
and follows the database through a *generation token* that the store writes to ``meta``
in the same transaction as every change to the vectors. The writer also hands the change
(a :class:`Delta`) to the index, keyed by the token it replaced; it cannot apply it
itself, because it does not know whether its transaction will commit. A reader that sees
a token the index does not have applies the chain of deltas leading to it, if it has
them all, and otherwise (another process wrote, a delta was dropped to bound memory, or
nothing was loaded yet) reloads every vector from the database in one read snapshot.
Rolled-back deltas are harmless: the next write replaces them under the same key, and a
chain that does not reach the token in ``meta`` is never applied.
"""

from __future__ import annotations

import mmap
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .shared import PerDatabase
from .vector_codes import nearest_by_bits, pack_signs, popcount, quantize

META_KEY = "vec_generation"  # the generation token's key in the store's meta table

# Prefilter size (VectorIndex.candidates; measured in bench/bench_query.py): the largest
# of MIN_CANDIDATES, OVERSAMPLE * k and CANDIDATE_SHARE of the index.
MIN_CANDIDATES = 400
OVERSAMPLE = 4
CANDIDATE_SHARE = 1 / 1000
# Below this many stored numbers (vectors x dimensions) every int8 row is rescored:
# that costs about a millisecond, and sign bits of few dimensions are a poor prefilter.
EXACT_BELOW = 1 << 21
MIN_PREFILTER_DIMS = 128
LOAD_BLOCK = 1024  # rows read, quantised or packed at a time on a full load
PASSED_TOKENS = 64  # how many tokens the index moved past by deltas it knows as older (sync)
# Pending deltas beyond this many vectors (or a quarter of the index) are dropped and the
# next query reloads instead: a bulk index with no queries must not hold every vector twice.
MAX_PENDING_ROWS = 20_000


@dataclass(frozen=True, slots=True)
class Delta:
    """A committed-or-not change to the vectors: from token ``prev`` to token ``new``.
    ``reset`` drops every vector first (a new embedding model); then ``removed`` ids are
    dropped and ``added_ids`` (rows of ``added``, float32) are added or replaced."""

    prev: str
    new: str
    removed: np.ndarray
    added_ids: np.ndarray
    added: np.ndarray
    reset: bool = False


class VectorIndex:
    """See the module docstring. Every method is thread-safe."""

    exact_below = EXACT_BELOW

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.generation: str | None = None  # None: nothing loaded
        self.saved_generation: str | None = None  # what the snapshot on disk holds
        self._pending: dict[str, Delta] = {}
        self._pending_rows = 0
        self._passed: deque[str] = deque(maxlen=PASSED_TOKENS)
        self._clear(0)

    # -- state -------------------------------------------------------------------------

    def _clear(self, dims: int, capacity: int = 0) -> None:
        self._passed.clear()  # an older token's state is no longer this one's past
        self.dims = dims
        self._words = (dims + 63) // 64
        self._n = 0
        self._ids = np.empty(capacity, np.int64)
        self._pos_map: dict[int, int] | None = {}
        self._bits = np.zeros((self._words, capacity), np.uint64)  # one row per word: fast XOR
        self._q = np.empty((capacity, dims), np.int8)  # rows quantised to int8 ...
        self._scale = np.empty(capacity, np.float32)  # ... with a scale per row
        self._norm2 = np.empty(capacity, np.float32)  # exact squared norm of each row
        self._center = np.zeros(dims, np.float32)
        self._centered_at = 0  # how many vectors there were when the centre was computed

    def __len__(self) -> int:
        return self._n

    def _reserve(self, needed: int) -> None:
        capacity = len(self._ids)
        if needed <= capacity:
            return
        new_cap = max(needed, capacity + capacity // 4, 1024)
        ids = np.empty(new_cap, np.int64)
        ids[: self._n] = self._ids[: self._n]
        bits = np.zeros((self._words, new_cap), np.uint64)
        bits[:, : self._n] = self._bits[:, : self._n]
        q = np.empty((new_cap, self.dims), np.int8)
        q[: self._n] = self._q[: self._n]
        scale = np.empty(new_cap, np.float32)
        scale[: self._n] = self._scale[: self._n]
        norm2 = np.empty(new_cap, np.float32)
        norm2[: self._n] = self._norm2[: self._n]
        self._ids, self._bits, self._q, self._scale, self._norm2 = ids, bits, q, scale, norm2

    @property
    def _pos(self) -> dict[int, int]:
        """Row id -> position, built when a change first needs it (0.2 s at 1M rows)."""
        if self._pos_map is None:
            self._pos_map = {rowid: pos for pos, rowid in enumerate(self._ids[: self._n].tolist())}
        return self._pos_map

    def _remove(self, ids: Iterable[int]) -> None:
        for rowid in ids:
            pos = self._pos.pop(int(rowid), None)
            if pos is None:
                continue
            last = self._n - 1
            if pos != last:  # move the last row into the hole
                moved = int(self._ids[last])
                self._ids[pos] = moved
                self._bits[:, pos] = self._bits[:, last]
                self._q[pos] = self._q[last]
                self._scale[pos] = self._scale[last]
                self._norm2[pos] = self._norm2[last]
                self._pos[moved] = pos
            self._n = last

    def _add(self, ids: np.ndarray, rows: np.ndarray) -> None:
        if len(ids) == 0:
            return
        rows = np.asarray(rows, np.float32).reshape(len(ids), -1)
        if self.dims != rows.shape[1]:
            if self._n:
                raise ValueError(f"vectors of {rows.shape[1]} dimensions added to an index of {self.dims}")
            self._clear(rows.shape[1])
        self._remove(ids)
        self._reserve(self._n + len(ids))
        start, end = self._n, self._n + len(ids)
        self._ids[start:end] = ids
        self._set_rows(start, end, rows)
        self._bits[:, start:end] = pack_signs(rows, self._center, self._words).T
        for offset, rowid in enumerate(ids.tolist()):
            self._pos[rowid] = start + offset
        self._n = end
        if self._n >= max(1000, 2 * self._centered_at):
            self._recenter()

    def _set_rows(self, start: int, end: int, rows: np.ndarray) -> None:
        q, scale = quantize(rows)
        self._q[start:end] = q
        self._scale[start:end] = scale
        self._norm2[start:end] = np.einsum("ij,ij->i", rows, rows)

    def _rows(self, start: int, end: int) -> np.ndarray:
        rows = self._q[start:end].astype(np.float32)
        rows *= self._scale[start:end, None]  # in place: one float32 block, not two
        return rows

    def _block_sum(self, start: int, end: int) -> np.ndarray:
        """``self._rows(start, end).sum(axis=0, dtype=float64)`` bit for bit (rows added
        one after the other, as numpy sums along axis 0), widening LOAD_BLOCK rows at a
        time: the centre and every sign bit stay what they were."""
        acc = self._rows(start, min(start + LOAD_BLOCK, end)).sum(axis=0, dtype=np.float64)
        for sub in range(start + LOAD_BLOCK, end, LOAD_BLOCK):
            rows = self._rows(sub, min(sub + LOAD_BLOCK, end))
            acc = np.concatenate([acc[None, :], rows], dtype=np.float64).sum(axis=0)
        return acc

    def _recenter(self) -> None:
        """Recompute the centre from the stored rows and every row's bits (the index grew
        far beyond the vectors its centre was computed from)."""
        total = np.zeros(self.dims, np.float64)
        for start in range(0, self._n, 8192):
            total += self._block_sum(start, min(start + 8192, self._n))
        self._center = (total / max(self._n, 1)).astype(np.float32)
        self._centered_at = self._n
        for start in range(0, self._n, LOAD_BLOCK):
            end = min(start + LOAD_BLOCK, self._n)
            self._bits[:, start:end] = pack_signs(self._rows(start, end), self._center, self._words).T

    # -- loading and following the database --------------------------------------------

    def load(self, generation: str, dims: int, count: int, batches: Iterable[tuple[np.ndarray, np.ndarray]]) -> None:
        """Replace everything with ``count`` vectors arriving as ``(ids, float32 rows)``
        batches, all read from the database state named ``generation``."""
        with self._lock:
            self._clear(dims)  # free the old arrays before allocating the new ones
            self._pending.clear()
            self._pending_rows = 0
            self._clear(dims, count)
            for ids, rows in batches:
                start, end = self._n, self._n + len(ids)
                self._reserve(end)
                self._ids[start:end] = ids
                self._set_rows(start, end, rows)
                self._n = end
            self._pos_map = None
            self._recenter()
            self.generation = generation

    def record(self, delta: Delta) -> None:
        """Remember a change made by the writer (applied when a reader sees ``delta.new``)."""
        with self._lock:
            if self.generation is None:
                return  # nothing loaded: the first query loads the new state anyway
            old = self._pending.pop(delta.prev, None)
            if old is not None:
                self._pending_rows -= len(old.added_ids)
            self._pending[delta.prev] = delta
            self._pending_rows += len(delta.added_ids)
            if self._pending_rows > max(MAX_PENDING_ROWS, self._n // 4):
                self.invalidate()

    def invalidate(self) -> None:
        """Forget everything; the next :meth:`sync` reloads."""
        with self._lock:
            self._pending.clear()
            self._pending_rows = 0
            self._clear(0)
            self.generation = None

    def sync(self, generation: str, reload: Callable[[], None]) -> None:
        """Bring the index to ``generation`` (the token a reader sees in ``meta``): by the
        recorded deltas when they lead there, else by calling ``reload()`` (which must
        call :meth:`load`). A token it moved past by deltas leaves it as it is: a reader's
        snapshot (``StoreBase.snapshot``) older than another reader's, whose candidates the
        store re-scores in that snapshot, must not make every vector read again, twice."""
        with self._lock:
            if self.generation == generation or generation in self._passed:
                return
            chain, token = [], self.generation
            while token != generation and token is not None and token in self._pending and len(chain) <= len(self._pending):
                delta = self._pending[token]
                chain.append(delta)
                token = delta.new
            if token != generation or self.generation is None:
                reload()
                return
            for delta in chain:
                del self._pending[delta.prev]
                self._pending_rows -= len(delta.added_ids)
                if delta.reset:
                    self._clear(self.dims)
                self._remove(delta.removed.tolist())
                self._add(delta.added_ids, delta.added)
                if not delta.reset:  # a token before a new model's is not this state's past
                    self._passed.append(delta.prev)
            self.generation = generation

    # -- its state as arrays, for the snapshot on disk (store/vector_snapshot.py) ------

    SNAPSHOT_ARRAYS = ("ids", "bits", "q", "scale", "norm2", "center")

    def state(self) -> tuple[str | None, int, dict[str, np.ndarray]]:
        """``(generation, centered_at, arrays named as SNAPSHOT_ARRAYS)``: views of the
        loaded state; call under :attr:`lock` while they are used."""
        n = self._n
        arrays = (self._ids[:n], self._bits[:, :n], self._q[:n], self._scale[:n], self._norm2[:n], self._center)
        return self.generation, self._centered_at, dict(zip(self.SNAPSHOT_ARRAYS, arrays))

    def install(self, generation: str, centered_at: int, arrays: dict[str, np.ndarray]) -> None:
        """Replace everything with a state :meth:`state` gave (read back from disk)."""
        with self._lock:
            self._pending.clear()
            self._pending_rows = 0
            self._passed.clear()
            self._ids, self._bits, self._q = arrays["ids"], arrays["bits"], arrays["q"]
            self._scale, self._norm2, self._center = arrays["scale"], arrays["norm2"], arrays["center"]
            self.dims, self._words, self._n = self._q.shape[1], self._bits.shape[0], len(self._ids)
            self._pos_map = None
            self._centered_at = centered_at
            self.generation = self.saved_generation = generation

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    # -- searching ---------------------------------------------------------------------

    def _scratch(self, rows: int) -> np.ndarray:
        """A reused buffer for candidate rows: a fresh one costs more in page faults."""
        buf = getattr(self, "_scratch_buf", None)
        if buf is None or buf.shape[0] < rows or buf.shape[1] != self.dims:
            buf = self._scratch_buf = np.empty((max(rows, 1024), self.dims), np.float32)
        return buf[:rows]

    def _prefilter_buffers(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Reused buffers for the Hamming prefilter of ``n`` vectors: ``(distances,
        XOR words, bit counts)``, 11 bytes a vector (11 MB at a million, a fresh
        allocation of which faulted ~2,800 pages in on every query)."""
        bufs = getattr(self, "_prefilter_bufs", None)
        if bufs is None or len(bufs[0]) < n:
            size = max(n, 1024) + max(n, 1024) // 8  # room to grow before the next allocation
            bufs = (np.empty(size, np.uint16), np.empty(size, np.uint64), np.empty(size, np.uint8))
            self._prefilter_bufs = bufs
        return bufs[0][:n], bufs[1][:n], bufs[2][:n]

    WHOLE_READ = ("ids", "bits", "scale", "norm2")  # what every prefiltered query reads whole

    def fault_in(self) -> int:
        """Touch every page of the arrays each query reads whole (:data:`WHOLE_READ`; not
        the int8 rows, read a few hundred at a time) and of a prefiltered query's reused
        buffers, so that the first query after a start finds them mapped in: a snapshot is
        mapped (:mod:`.vector_snapshot`), and a first query faulted a page per 4 KB (at a
        million vectors ~27,000, ~35 ms; the buffers ~3,500 more). The arrays are touched
        outside the lock (replaced ones are harmless), the buffers, which a query writes,
        under it. Returns the pages of the arrays touched."""
        with self._lock:
            state = self.state()[2]
            arrays = [state[name] for name in self.WHOLE_READ]
            if self._prefilters(self._n, self.candidates(0, self._n)):  # else unused: not allocated
                for buffer in (*self._prefilter_buffers(self._n), self._scratch(self.candidates(0, self._n))):
                    buffer.fill(0)
        touched = 0
        for array in arrays:
            for part in array if array.ndim > 1 else [array]:  # each word's row of bits is contiguous
                sample = part.view(np.uint8)[:: mmap.PAGESIZE]
                sample.max(initial=0)  # reads one byte of each page
                touched += len(sample)
        return touched

    def _prefilters(self, n: int, wanted: int) -> bool:
        return wanted < n and n * self.dims >= self.exact_below and self.dims >= MIN_PREFILTER_DIMS

    @staticmethod
    def candidates(k: int, n: int = 0) -> int:
        """How many of ``n`` vectors the Hamming prefilter keeps for the ``k`` nearest: a
        share of a large index, as the vectors whose bits look nearer than a true
        neighbour's grow with it (400 at a million: recall@10 0.988, BENCHMARKS.md)."""
        return max(OVERSAMPLE * k, MIN_CANDIDATES, int(n * CANDIDATE_SHARE))

    def search(self, query: Sequence[float], k: int, *, exact: bool = False, skip=None) -> list[tuple[int, float]]:
        """The ``k`` nearest vectors as ``(id, L2 distance)``, nearest first; ``exact``
        skips the prefilter and rescores every vector (for tests and benchmarks). ``skip``
        (an array of ids): never returned, and left out before the prefilter, so that as
        many others are kept however many they are (a large note /similar leaves out)."""
        with self._lock:
            n = self._n
            if n == 0 or k <= 0:
                return []
            q = np.asarray(query, np.float32)
            if q.shape != (self.dims,):
                raise ValueError(f"query of {q.shape[0]} dimensions, index of {self.dims}")
            skipped = None if skip is None or not len(skip) else np.isin(self._ids[:n], skip)
            wanted = self.candidates(k, n)  # prefiltered only when more rows than that are not skipped
            if exact or not self._prefilters(n, wanted + (0 if skipped is None else int(skipped.sum()))):
                cand = np.arange(n) if skipped is None else np.flatnonzero(~skipped)
            else:
                qbits = pack_signs(q[None, :], self._center, self._words)[0]
                hamming, scratch, counts = self._prefilter_buffers(n)
                hamming.fill(0)
                for word in range(self._words):
                    np.bitwise_xor(self._bits[word, :n], qbits[word], out=scratch)
                    popcount(scratch, counts)
                    hamming += counts
                if skipped is not None:  # past every other distance: never among the wanted
                    hamming[skipped] = 64 * self._words + 1
                cand = nearest_by_bits(hamming, wanted)
            if len(cand) <= 4096:
                rows = self._scratch(len(cand))
                rows[:] = self._q[cand]
            else:
                rows = self._q[cand].astype(np.float32)
            # einsum, not BLAS: BLAS threads fight other processes for 2 cores.
            dots = np.einsum("ij,j->i", rows, q) * self._scale[cand]
            d2 = self._norm2[cand] - 2.0 * dots + float(np.dot(q, q))
            np.maximum(d2, 0.0, out=d2)
            top = np.argpartition(d2, k)[:k] if len(cand) > k else np.arange(len(cand))
            top = top[np.argsort(d2[top], kind="stable")]
            ids = self._ids[cand[top]]
            return list(zip(ids.tolist(), np.sqrt(d2[top]).tolist()))


_indexes = PerDatabase(VectorIndex)


def shared_index(key: str) -> VectorIndex:
    """The process's index for database ``key`` (its resolved path), created on first use
    and freed when no store holds it any more."""
    return _indexes.get(key)
