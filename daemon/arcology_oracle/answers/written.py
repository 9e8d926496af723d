"""Notes written about the same time as the query's note: the last signal of the order of
/similar and /suggest-links.

People link what they write together. Org-roam makes a note from inside another one
(``org-roam-node-insert`` on a title that does not exist yet), and the notes of one piece
of work are written in the same days. On real notes with their links taken out, 49% of
the linked pairs of one collection were written the same day, against 3.7% of the pairs
that were not linked; 11% against 0.4% in another (BENCHMARKS.md, "Retrieval across
granularities", fifth round). Neither the words nor the vectors see that.

So a result written ``d`` days from the query's note moves up ``SHIFT * exp(-d /
TAU_DAYS)`` places in the order the text and the graph gave (twenty places when both
were written the same day, about seven three days apart, two a week apart), times the
rarity of the query's day, ``min(1, log 3 / log(1 + n))`` for the ``n`` notes written that
day: the graph's rarity weight (:mod:`.graph`), so a day on which hundreds of notes were
made (an import, a move from another tool) says little. A note that states no day of
writing (:data:`~arcology_oracle.store.dated.WRITTEN_SOURCES`: never the file's
modification time) is never moved up, and asked about, moves nothing. Results keep their calibrated scores
(:mod:`.relevance`): the order is the ranking's, as it already is for the words and the
graph.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Sequence

from ..store import Store, dated
from . import retrieval

# Places a result written the same day as the query's note moves up, at most (the
# callers read the ranking that much deeper: depth()).
SHIFT = 20
# Days over which that falls to 1/e.
TAU_DAYS = 3.0


def day_of(store: Store, node_id: str | None) -> datetime.date | None:
    """The day ``node_id`` was written, when its notes say (None for no node)."""
    if node_id is None:
        return None
    day = dated.written_days(store, [node_id]).get(node_id)
    return None if day is None else datetime.date.fromisoformat(day)


def depth(day: datetime.date | None, k: int) -> int:
    """How deep to read the ranking for the first ``k`` after :func:`by_time`: ``SHIFT``
    more when the query's note states its ``day``, so that a result may move up from below."""
    return k if day is None else k + SHIFT


def by_time(
    store: Store, day: datetime.date | None, results: Sequence[retrieval.Result], k: int
) -> list[retrieval.Result]:
    """The first ``k`` of ``results`` (best first), those written near ``day`` (the query
    note's, :func:`day_of`) moved up as the module docstring says (one moved onto another's
    place goes before it; results moving equally keep their order). ``day`` None: the
    first ``k`` as they are."""
    if day is None or len(results) < 2:
        return list(results[:k])
    days = dated.written_days(store, sorted({r.node_id for r in results if r.node_id}))
    if not days:
        return list(results[:k])
    shift = SHIFT * min(1.0, math.log(3.0) / math.log(1.0 + max(1, dated.written_on(store, day.isoformat()))))

    def place(item: tuple[int, retrieval.Result]) -> tuple[float, float]:
        # (new place, minus the move): one that moved onto another's place goes first.
        rank, result = item
        written = days.get(result.node_id) if result.node_id else None
        if written is None:
            return rank, 0.0
        move = shift * math.exp(-abs((datetime.date.fromisoformat(written) - day).days) / TAU_DAYS)
        return rank - move, -move

    return [result for _, result in sorted(enumerate(results), key=place)][:k]
