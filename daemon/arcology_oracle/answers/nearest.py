"""The headings /similar starts from: enough of them in notes it may return.

:func:`.similarity.similar` ranks the notes of the ``pool`` headings nearest the query
(``max(10 k, 100)``; by their words in keyword mode), less those it never returns: the
query's own note and the notes enclosing it or nested in it (and, when asked, those it
links), the oracle's answers, the query's own heading. In a large note those are most
of its nearest headings: in a year of journal kept in one file, whose days are each
other's nearest neighbours, a pool of 100 held nothing else, and /similar answered
nothing (or fell back to keywords, saying that the query had no vectors). A large note
that may be returned crowds the pool the same way: it is one result, however many of its
headings are near.

So when more than half of the pool is left out, or its headings that are not belong to
fewer than ``want`` notes (``k``: the answer would be short), :func:`widened` first asks
again for as many with the vector rows of the nodes left out skipped
(:meth:`~arcology_oracle.store.Store.vector_rows_of`; a heading left out by itself, the
query's own, stays in the pool, where it always stood for its note): however large the query's own
note, the pool then holds the other notes (a note of 58k chunks, more than ``MAX_POOL``,
had left nothing: an empty answer after ~6 s). Then, or for keywords, it asks
for more: at least four times as many, and, when the pool's headings are in a few files,
enough to pass every heading of those (:meth:`~arcology_oracle.store.Store.file_outline`,
times the chunks per heading seen), until half a pool's worth is eligible in at least
``want`` notes, the index has nothing more, or ``MAX_POOL`` were asked. Over the kept
indexes of bench/similar_lab.py (``after6``: English notes, the Info manuals, Japanese
notes) the pool was widened for no query at k=50 (the lab's numbers did not move) and
for 2 of 1,282 at k=10 (two more results for one, the same links found): the common
query costs one pass over the owners it reads anyway (~16 µs; no difference measurable
in process on bench/results/cache/query-20000-768, 300 queries alternating), and ranks as
before. Widened, a query costs what its larger search costs: there, about 35 ms at the
median when its own note held its 1,000 nearest headings, 125 ms for 3,000 and 390 ms
for 10,000 (half the index: every one of its 20,000 chunks is read), against 6-10 ms.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..store import Store
from ..store.generation_cache import GenerationCache

# The most chunks (or keyword hits) one widened search asks for: ~0.2 s of vector search
# at 20k chunks of 768 dims, where a pool of 100 takes ~2 ms
# (bench/results/cache/query-20000-768). A note larger than this (in chunks nearer the
# query than any other note's) still leaves nothing.
MAX_POOL = 25_600
# The most files whose outlines are read to size the next search.
MAX_FILES = 8
# The most bytes of skipped rows kept between queries (8 a row: a million rows).
MAX_SKIP_BYTES = 8 << 20


@dataclass(slots=True)
class Pool:
    """What :func:`widened` found: the hits (tuples whose first item is a heading id,
    best first) of a search for ``size``, their owners (``(node id or None, file
    path)`` by heading id), which of them are never results (the oracle's answers, empty
    headings: :meth:`~arcology_oracle.store.Store.owners_and_answers`), how many of
    them are eligible, and the vector rows the search skipped (None: none)."""

    hits: list[tuple]
    owners: dict[int, tuple[str | None, str]]
    oracle: set[int]
    size: int
    eligible: int
    skip: np.ndarray | None = None


def widened(
    store: Store,
    search: Callable[[int, np.ndarray | None], list[tuple]],
    pool: int,
    excluded: Callable[[int, tuple[str | None, str] | None], bool],
    want: int,
    left_out: Callable[[], np.ndarray] | None = None,
) -> Pool:
    """``search(pool, None)``, or ``search`` of more (see the module docstring). ``excluded``:
    a heading id and its owner -> whether the answer leaves it out (the oracle's answers
    are left out too); ``want``: how many notes the answer needs; ``left_out``: the vector
    rows of the nodes ``excluded`` leaves out, asked for when the first pool
    falls short, and then skipped by every search (``search``'s second argument)."""
    size, previous, skip = pool, -1, None
    while True:
        hits = search(size, skip)
        owners, oracle = store.owners_and_answers(hit[0] for hit in hits)
        eligible = [hit[0] for hit in hits if hit[0] not in oracle and not excluded(hit[0], owners.get(hit[0]))]
        enough = 2 * len(eligible) >= min(pool, len(hits)) and len({owners[h] for h in eligible}) >= want
        if enough or size >= MAX_POOL or len(hits) <= previous:
            return Pool(hits, owners, oracle, size, len(eligible), skip)
        rows, left_out = (left_out() if left_out is not None else None), None
        if rows is not None and len(rows):  # the same size again, of the other notes' rows only
            skip, previous = rows, -1
            continue
        previous = len(hits)
        kept = owners if skip is None else {h: o for h, o in owners.items() if not excluded(h, o)}
        size = min(MAX_POOL, max(4 * size, _past_files(store, kept, size, len(hits), pool)))


_rows_of_nodes: GenerationCache[frozenset[str], np.ndarray] = GenerationCache(MAX_SKIP_BYTES, lambda v: 0 if v is None else v.nbytes)


def rows_of_nodes(store: Store, nodes: frozenset[str]) -> np.ndarray:
    """:meth:`~arcology_oracle.store.Store.vector_rows_of` ``nodes``, remembered until the
    next write: from heading after heading of one large note, /similar leaves out the same
    note each time, and reading its rows took ~0.25 s at 50,000 chunks."""
    token = store.write_generation() if store.shares_reads else None  # before the rows
    found = _rows_of_nodes.lookup(token, [nodes])[0] if token is not None else {}
    if nodes in found:
        return found[nodes]
    rows = np.asarray(store.vector_rows_of(sorted(nodes)), np.int64)
    if token is not None:
        _rows_of_nodes.remember(token, {nodes: rows})
    return rows


def _past_files(store: Store, owners: dict[int, tuple[str | None, str]], size: int, found: int, pool: int) -> int:
    """How much to ask for to pass every heading of the files ``owners`` are in (``found``
    headings came of asking for ``size``) and ``pool`` more: 0 when they are more than
    ``MAX_FILES`` files (reading their outlines would cost more than growing fourfold)."""
    files = {owner[1] for owner in owners.values()}
    if len(files) > MAX_FILES:
        return 0
    headings = sum(len(store.file_outline(path)) for path in files)
    return math.ceil(size / max(1, found) * (headings + pool))


def exhausted(store: Store, vector: Sequence[float], size: int, skip: np.ndarray | None = None) -> bool:
    """Whether a vector search for ``size`` chunks (``skip`` aside) reads every vector of
    the index (there are fewer): asked only when nothing eligible was found, to tell "no
    other note has vectors yet" from "the other notes are further than ``MAX_POOL`` chunks"."""
    return len(store.knn(vector, size, skip)) < size
