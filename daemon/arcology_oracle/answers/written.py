"""Notes written about the same time as the query's note: a signal of the order and the
score of /similar and /suggest-links.

People link what they write together. Org-roam makes a note from inside another one
(``org-roam-node-insert`` on a title that does not exist yet), and the notes of one piece
of work are written in the same days. On real notes with their links taken out, 49% of
the linked pairs of one collection were written the same day, against 3.7% of the pairs
that were not linked; 11% against 0.4% in another (BENCHMARKS.md, "Retrieval across
granularities", fifth round). Neither the words nor the vectors see that.

So a result written ``d`` days from the query's note moves up ``SHIFT * exp(-d /
TAU_DAYS)`` places in the order the text and the graph gave (:mod:`.moves`; twenty
places when both were written the same day, about seven three days apart, two a week
apart), times the rarity of the query's day, ``min(1, log 3 / log(1 + n))`` for the
``n`` notes written that day: the graph's rarity weight (:mod:`.graph`), so a day on
which hundreds of notes were made (an import, a move from another tool) says little. A
note that states no day of writing
(:data:`~arcology_oracle.store.dated.WRITTEN_SOURCES`: never the file's modification
time) is never moved up, and asked about, moves nothing. The same nearness in time
(:func:`nearness`) is also one of the features of a result's calibrated score
(:mod:`.relevance`), so a note that moved up for its day scores for it too.

The day is support for what the text says, never evidence alone (:func:`supported`): a
note moves up, and scores, for its day only when its text is closer to the query's than
the average note of the index is. Why: the move and the score's weight were measured
among the results the text already ranked near the query (a top 10 of hundreds of
notes); on a few notes, or a query unlike most of them, a note sharing nothing with the
query but its day (a tax return made the day a sourdough starter was) moved twenty
places to first and nine times its odds of a link put it over the cut-off
(BENCHMARKS.md, "Retrieval across granularities", tenth round).
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Sequence

import numpy as np

from ..store import Store, dated
from . import relevance, retrieval

# Places a result written the same day as the query's note moves up, at most.
SHIFT = 20
# Days over which that falls to 1/e.
TAU_DAYS = 3.0


def day_of(store: Store, node_id: str | None) -> datetime.date | None:
    """The day ``node_id`` was written, when its notes say (None for no node)."""
    if node_id is None:
        return None
    day = dated.written_days(store, [node_id]).get(node_id)
    return None if day is None else datetime.date.fromisoformat(day)


def nearness(store: Store, day: datetime.date | None, results: Sequence[retrieval.Result]) -> dict[str, float]:
    """Node id -> how near in time to ``day`` (the query note's, :func:`day_of`) each of
    ``results``' notes was written, in (0, 1]: ``exp(-days apart / TAU_DAYS)`` times the
    rarity of ``day`` (the module docstring). Notes that state no day are absent; nothing
    when ``day`` is None."""
    if day is None:
        return {}
    days = dated.written_days(store, sorted({r.node_id for r in results if r.node_id}))
    if not days:
        return {}
    rarity = min(1.0, math.log(3.0) / math.log(1.0 + max(1, dated.written_on(store, day.isoformat()))))
    return {
        node_id: rarity * math.exp(-abs((datetime.date.fromisoformat(written) - day).days) / TAU_DAYS)
        for node_id, written in days.items()
    }


def places(near: dict[str, float]) -> dict[str, float]:
    """How many places each note of :func:`nearness` ``near`` moves up (:mod:`.moves`):
    ``SHIFT`` times its nearness."""
    return {node_id: SHIFT * value for node_id, value in near.items()}


def supported(
    store: Store, vector: Sequence[float] | None, words: dict[str, float], near: dict[str, float],
    results: Sequence[retrieval.Result],
) -> dict[str, float]:
    """``near`` (:func:`nearness`) for the notes whose own text supports it: those of
    ``results`` that hold some of the query's rarest words (``words``, keyed by node as
    :func:`.similarity.similar` fills it: the ``words`` feature of :mod:`.relevance`
    above 0), or whose similarity to the query's ``vector`` (the ``vector`` feature: the
    mean of the best heading's and the whole note's cosine) is above the average
    heading's (``dot(vector, the mean of the stored vectors)``,
    :meth:`~arcology_oracle.store.Store.mean_vector`). Most notes of anyone's index are
    unrelated to any one query, so a note below that average that shares none of its
    words has no evidence of its own for its day to support. In keyword mode (``vector``
    None, or no vectors stored) all of ``near``: every result there was found by the
    query's words."""
    if vector is None or not near:
        return dict(near)
    query = np.asarray(vector, dtype=np.float64)
    mean = store.mean_vector()
    if mean is None or len(mean) != len(query):  # no vectors stored: keyword mode
        return dict(near)
    average = float(np.dot(query, mean))
    by_vector = [r for r in results if r.node_id in near and words.get(r.node_id, 0.0) <= 0.0]
    found = relevance.evidence(store, by_vector, relevance.Signals(vector))
    below = {r.node_id for r, e in zip(by_vector, found) if e is None or e.vector <= average}
    return {node_id: value for node_id, value in near.items() if node_id not in below}
