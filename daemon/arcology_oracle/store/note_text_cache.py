"""Whole notes' texts kept in memory between queries, valid for one write generation.

``/similar``'s word re-ranking reads the whole text of each of its ~31 candidate notes
(:meth:`~.search.Search.note_texts`: ~68 KB a query at 20k headings, ~0.4 ms). The same
notes come back, as for their mean vectors (:mod:`.node_means`): of the texts 300 random
``/similar?node=`` asked at 20k headings, two thirds had been asked before. :class:`NoteTexts`
remembers them, shared by every store of a database in the process.

A note's text is kept until a write changes that note's headings (:mod:`.note_changes`:
forgetting every text at every write, vectors stored included, made the first query after
each save read every candidate again; BENCHMARKS.md, issue 29, eighteenth round), bounded
by :data:`MAX_BYTES` (least recently used first out).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Sequence

from .generation_cache import GenerationCache
from .shared import PerDatabase

# The candidates' texts of ~120 queries at 20k headings (plain text; Japanese takes twice
# the bytes a character).
MAX_BYTES = 8 * 1024 * 1024


class NoteTexts:
    """A note's key (the caller's: a tuple, the note's :mod:`.note_changes` key first, then
    the way of reading it) -> its text, kept while the note's headings are
    (:class:`~.generation_cache.GenerationCache` by the generation of the headings).
    Thread-safe; ``hits`` and ``misses`` count the notes looked up."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self._texts: GenerationCache[tuple, str] = GenerationCache(max_bytes, sys.getsizeof, note_of=lambda key: key[0])

    @property
    def hits(self) -> int:
        return self._texts.hits

    @property
    def misses(self) -> int:
        return self._texts.misses

    def texts(
        self,
        token: str | None,
        ids: Sequence[int],
        keys: dict[int, tuple],
        read: Callable[[list[int]], dict[int, str]],
        changed: Callable[[str | None], Collection[str] | None] | None = None,
    ) -> dict[int, str]:
        """``read(ids)`` (id -> text; an id may be absent), the texts of the ids with a key
        in ``keys`` (their notes') served from memory when remembered at ``token`` (the
        generation of the headings the caller read before calling; ``changed``: the
        store's ``notes_changed_since``; without it every text is forgotten at a new token),
        and remembered when read."""
        remembered, _ = self._texts.lookup(token, [keys[i] for i in ids if i in keys], changed)
        found = {i: remembered[keys[i]] for i in ids if i in keys and remembered.get(keys[i]) is not None}
        missing = [i for i in ids if i not in found]
        if missing:
            new = read(missing)
            found.update(new)
            self._texts.remember(token, {keys[i]: text for i, text in new.items() if i in keys})
        return found


_caches = PerDatabase(NoteTexts)


def shared_texts(key: str) -> NoteTexts:
    """The process's cache for database ``key`` (as ``vectors.shared_index``'s key)."""
    return _caches.get(key)
