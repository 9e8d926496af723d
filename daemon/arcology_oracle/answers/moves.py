"""The last step of the order of /similar and /suggest-links: results moved up for what
the text's and the graph's ranking does not see, when the notes were written
(:mod:`.written`) and whether the query names them (:mod:`.mentions`).

Each result moves up the places those give it, summed: from the order the text and the
graph made, so that among the results nothing moved, that order stands. A result may come
from below the first ``k``: the callers read the ranking :func:`depth` deep.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import mentions, retrieval, written

# How far below the first k a result may come from: the most places either signal gives.
DEEPER = int(max(written.SHIFT, mentions.SECTION_PLACES, mentions.NOTE_PLACES))
# The fewest results a ranking of similar notes is made for (the default k of every client).
RANKED_AT_LEAST = 10


def ranked_for(k: int) -> int:
    """How many results a ranking of similar notes is made for when ``k`` are asked:
    at least ``RANKED_AT_LEAST``, so that asking for three gives the first three of ten
    (the candidates re-ranked and read as deep grow with ``k``; with fewer, the best
    note could fall out of a short list)."""
    return max(k, RANKED_AT_LEAST)


def depth(k: int) -> int:
    """How deep to read the ranking for the first ``k`` after :func:`moved_up`: for every
    query, since any may name a note (which also makes the graph's fusion, which reads
    as deep, weigh 20 more of the text's results)."""
    return k + DEEPER


def summed(*places: dict[str, float]) -> dict[str, float]:
    """The places each node moves up by all of ``places`` together."""
    out: dict[str, float] = {}
    for each in places:
        for node_id, by in each.items():
            out[node_id] = out.get(node_id, 0.0) + by
    return out


def moved_up(results: Sequence[retrieval.Result], places: dict[str, float], k: int) -> list[retrieval.Result]:
    """The first ``k`` of ``results`` (best first), each moved up the ``places`` of its
    node (one moved onto another's place goes before it; results moving equally keep
    their order). Nothing to move: the first ``k`` as they are."""
    if not places or len(results) < 2:
        return list(results[:k])

    def place(item: tuple[int, retrieval.Result]) -> tuple[float, float]:
        # (new place, minus the move): one that moved onto another's place goes first.
        rank, result = item
        move = places.get(result.node_id, 0.0) if result.node_id else 0.0
        return rank - move, -move

    return [result for _, result in sorted(enumerate(results), key=place)][:k]
