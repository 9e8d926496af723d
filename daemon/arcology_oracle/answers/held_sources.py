"""Sources named once a model has answered: only those the index still holds.

A request's sources are chosen when it comes, and the model may take minutes to answer;
a note made private (or deleted) meanwhile leaves the index. What the note said went into
the prompt while it was public; what is sent, or written into a note, once it is private
must not name it (its title, its ID). So whatever names sources after a model's call (an
answer or summary sent whole, ``GET /ask``'s ``Sources:`` list, a ``/converse`` heading
and its ``:SOURCES:``, the compatible APIs' block) names those :func:`held_sources` keeps.
"""

from __future__ import annotations

from collections.abc import Sequence

from .index_api import NotesIndex
from .sources import Source


async def held_sources(index: NotesIndex, sources: Sequence[Source]) -> list[Source]:
    """``sources`` without those the index no longer holds (no heading of that title in
    that node and file: made private, deleted, or renamed since), in order and with their
    numbers, which the answer cites. Read on a reader thread (:meth:`NotesIndex.read`)."""
    if not sources:
        return []
    return await index.read(
        lambda store: [s for s in sources if store.holds_heading(s.file, s.node_id, s.title, s.heading)]
    )
