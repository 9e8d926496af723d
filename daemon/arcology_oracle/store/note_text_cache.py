"""Whole notes' texts kept in memory between queries, valid for one write generation.

``/similar``'s word re-ranking reads the whole text of each of its ~31 candidate notes
(:meth:`~.search.Search.note_texts`: ~68 KB a query at 20k headings, ~0.4 ms). The same
notes come back, as for their mean vectors (:mod:`.node_means`): of the texts 300 random
``/similar?node=`` asked at 20k headings, two thirds had been asked before. :class:`NoteTexts`
remembers them, shared by every store of a database in the process.

Invalidated as the means are, at every write (:mod:`.generation_cache`), and bounded by
:data:`MAX_BYTES` (least recently used first out).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Sequence

from .generation_cache import GenerationCache
from .shared import PerDatabase

# The candidates' texts of ~120 queries at 20k headings (plain text; Japanese takes twice
# the bytes a character).
MAX_BYTES = 8 * 1024 * 1024


class NoteTexts:
    """A note's key (the caller's: one per note and way of reading it) -> its text, for one
    write generation (:class:`~.generation_cache.GenerationCache`). Thread-safe; ``hits``
    and ``misses`` count the notes looked up."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self._texts: GenerationCache[Hashable, str] = GenerationCache(max_bytes, sys.getsizeof)

    @property
    def hits(self) -> int:
        return self._texts.hits

    @property
    def misses(self) -> int:
        return self._texts.misses

    def texts(
        self, token: str | None, ids: Sequence[int], keys: dict[int, Hashable], read: Callable[[list[int]], dict[int, str]]
    ) -> dict[int, str]:
        """``read(ids)`` (id -> text; an id may be absent), the texts of the ids with a key
        in ``keys`` (their notes') served from memory when remembered at ``token`` (the
        write generation the caller read before calling), and remembered when read."""
        remembered, _ = self._texts.lookup(token, [keys[i] for i in ids if i in keys])
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
