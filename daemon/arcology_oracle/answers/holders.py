"""Notes that hold other notes (a manual's chapter holding its sections word for word, a
note compiled from others): the hub correction of their vector score when a section asks.

A note holding the text of several others is near whatever any of them is near: its mean
vector spans them all, so it sits nearer the collection's centre than its parts do, and
comes up for a query about any one of them (a *hub*). A section links to the note on what
it treats, which such a note is one of many times over. CSLS (Conneau et al., 2018) scores
``2 cos(q, c) - r_q - r_c``, ``r_c`` how near ``c`` is to everything; for one query that
is ``cos(q, c) - r_c / 2``. Here ``r_c`` is how much nearer the note's whole-note vector is
to the mean of the stored vectors than the average stored vector is, and only holders get
it (BENCHMARKS.md, issue 29, sixteenth round): a note near everything because it is a
short note summing up a subject (the personal notes' hubs) is what sections link to, and
the index cannot tell that kind of hub from a chapter by nearness alone; it can tell a
note that holds other notes word for word.
"""

from __future__ import annotations

import numpy as np

from ..store import Store

# CSLS's own halving of the candidate's hubness (one query's r_q is the same for all).
WEIGHT = 0.5


def discounted(
    store: Store, hits: list[tuple[int, float]], owners: dict[int, tuple[str | None, str]]
) -> list[tuple[int, float]]:
    """``hits`` (the candidate notes, one heading each, best first) with each holder's
    score lowered by ``WEIGHT`` times how much nearer its whole-note vector is to the
    stored vectors' mean than the average stored vector is (``dot(v, mean) - |mean|^2``),
    re-sorted; the rest as they are. A holder is a note of ``hits`` holding every heading
    of another of them (:meth:`~.Store.holders_among`: its part is a candidate too).
    ``owners``: :meth:`~.Store.heading_owners` of ``hits``."""
    notes = {h: owners[h][0] for h, _ in hits if h in owners and owners[h][0]}
    holders = store.holders_among(list(notes.values()))
    centre = store.mean_vector() if holders else None
    if centre is None:
        return hits
    vectors = store.node_vectors(sorted(holders))
    average = float(np.dot(centre, centre))  # the mean stored vector's dot with the mean
    out = [
        (h, s - WEIGHT * (float(np.dot(vectors[notes[h]], centre)) - average) if notes.get(h) in vectors else s)
        for h, s in hits
    ]
    return sorted(out, key=lambda item: -item[1])
