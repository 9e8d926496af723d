"""How ``/search`` combines its keyword (BM25) and vector rankings.

Plain reciprocal rank fusion (what ``/search`` did before) gives both rankings equal
say whatever they hold, so on real notes with a small embedding model it ranked known
items below its own keyword half: a heading first by keywords and 30th by vectors lost to
one third by both. The rule here:

1. Headings that hold *every* word of the query (the keyword search's AND match) come
   first, in keyword order. Someone who types words they remember from a note wants the
   heading that has all of them; vector similarity is no reason to put a heading missing
   one of them above it.
2. The others are ranked by the sum of each ranking's standardised score (z-score within
   this query's candidates; a ranking that does not hold a heading adds nothing, and
   neither does a score below its ranking's mean). Unlike ranks, standardised scores keep
   each ranking's confidence: a BM25 score far above the rest of its list outweighs a
   vector score a little above the rest of its list, and a flat ranking barely moves the
   other. Scores are compared within one query only, so the scales of BM25 and cosine
   never meet.

Deterministic; ties keep the keyword order, then the vector order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def standardised(scored: Sequence[tuple[int, float]]) -> dict[int, float]:
    """Each id's score as a z-score within ``scored`` (0 for all when they are equal)."""
    if not scored:
        return {}
    values = np.asarray([s for _, s in scored], dtype=np.float64)
    spread = float(values.std())
    if spread == 0.0:
        return {h: 0.0 for h, _ in scored}
    mean = float(values.mean())
    return {h: (float(s) - mean) / spread for h, s in scored}


def fuse(keyword: Sequence[tuple[int, float]], all_words: int, vector: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """Fuse ``keyword`` (best first, higher better; its first ``all_words`` entries
    matched every query word) with ``vector`` (best first, cosine). Returns
    ``(heading id, score)`` best first; scores are comparable within one call only."""
    kz, vz = standardised(keyword), standardised(vector)
    order: dict[int, int] = {}
    for h, _ in [*keyword, *vector]:
        order.setdefault(h, len(order))
    fused = {h: max(kz.get(h, 0.0), 0.0) + max(vz.get(h, 0.0), 0.0) for h in order}
    first = [h for h, _ in keyword[:all_words]]
    taken = set(first)
    rest = sorted((h for h in order if h not in taken), key=lambda h: (-fused[h], order[h]))
    top = max(fused.values(), default=0.0) + 1.0
    head = [(h, top + (all_words - i)) for i, h in enumerate(first)]
    return head + [(h, fused[h]) for h in rest]
