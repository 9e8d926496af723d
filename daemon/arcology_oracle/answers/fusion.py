"""How ``/search`` combines its keyword (BM25) and vector rankings: the words lead.

``/search`` finds a heading someone knows is there, by words they remember. Measured on
known-item questions over three corpora with all-MiniLM-L6-v2 (BENCHMARKS.md, Quality on
real notes), every way of letting the vectors move keyword hits lost to the keyword
ranking alone: plain reciprocal rank fusion, the sum of standardised scores (what
``/search`` did before), and that sum with the vectors at half and a quarter weight.
Even choosing, per question, whichever half ranked the answer better would have gained
little (heading MRR 0.896 -> 0.909, 0.784 -> 0.784, 0.922 -> 0.933): for questions made
of remembered words the vectors rarely know better, and on Japanese notes an
English-only model knows nothing. So:

1. Headings the keywords found come first, in keyword order; headings with the same
   keyword score (copies of one text, headings only their note's title matches) are
   ordered by vector similarity.
2. Then the headings only the vectors found, in vector order: what a query made of
   other words than the note's (or a misspelling) can still reach.

Deterministic; cannot rank a keyword hit below where the keywords put it, relative to
the other keyword hits. Semantic questions go to ``/ask`` and ``/recall``, whose
candidate pool fuses both by rank (``answers/context.py``).

:func:`standardised` is the scale-free score fusion ``/similar``'s word re-ranking uses
(``retrieval.py``): there both halves are informative, and z-scores let the more
confident ranking (whose top stands out) decide.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def fuse(keyword: Sequence[tuple[int, float]], vector: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """Fuse ``keyword`` (best first; neighbours with equal scores are ties) with
    ``vector`` (best first, cosine). Returns ``(heading id, score)`` best first; scores
    are comparable within one call only (keyword hits above 1, vector-only hits their
    cosine, at most 1)."""
    similarity = dict(vector)
    floor = min(similarity.values(), default=0.0) - 1.0
    ordered: list[int] = []
    tie: list[int] = []
    for i, (h, score) in enumerate(keyword):
        tie.append(h)
        if i + 1 == len(keyword) or keyword[i + 1][1] != score:
            ordered += sorted(tie, key=lambda t: -similarity.get(t, floor))  # stable
            tie = []
    n = len(ordered)
    found = set(ordered)
    return [(h, 1.0 + n - i) for i, h in enumerate(ordered)] + [(h, s) for h, s in vector if h not in found]


def standardised(scored: Sequence[tuple[int, float]]) -> dict[int, float]:
    """Each id's score as a z-score within ``scored`` (0 for all when they are equal).

    The mean and the spread are numpy's ``mean()`` and ``std()`` to the last bit, from
    the same reductions in the same order (the sum, then the squared deviations' sum,
    each over n), without their argument checks and the mean computed twice: half of
    the ~30 µs of a call, three a /similar."""
    if not scored:
        return {}
    values = np.fromiter((s for _, s in scored), np.float64, len(scored))
    mean = np.add.reduce(values) / len(values)
    deviations = values - mean
    spread = float(np.sqrt(np.add.reduce(deviations * deviations) / len(values)))
    if spread == 0.0:
        return {h: 0.0 for h, _ in scored}
    mean = float(mean)
    return {h: (float(s) - mean) / spread for h, s in scored}
