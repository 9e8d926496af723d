"""Whole notes' texts kept in memory between queries, valid for one write generation.

``/similar``'s word re-ranking reads the whole text of each of its ~31 candidate notes
(:meth:`~.search.Search.note_texts`: ~68 KB a query at 20k headings, ~0.4 ms). The same
notes come back, as for their mean vectors (:mod:`.node_means`): of the texts 300 random
``/similar?node=`` asked at 20k headings, two thirds had been asked before. :class:`NoteTexts`
remembers them, shared by every store of a database in the process.

Invalidation as for the means: every write transaction renews the token under
:data:`.node_means.WRITE_GENERATION`; a reader reads it before the rows the texts are made
of, and a token other than the cache's empties the cache. Bounded by :data:`MAX_BYTES`
(least recently used first out).
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence

from .shared import PerDatabase

# The candidates' texts of ~120 queries at 20k headings (plain text; Japanese takes twice
# the bytes a character).
MAX_BYTES = 8 * 1024 * 1024


class NoteTexts:
    """A note's key (the caller's: one per note and way of reading it) -> its text, for one
    write generation. Thread-safe."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._token: str | None = None
        self._texts: OrderedDict[Hashable, str] = OrderedDict()
        self._bytes = 0
        self.hits = self.misses = 0

    def texts(
        self, token: str | None, ids: Sequence[int], keys: dict[int, Hashable], read: Callable[[list[int]], dict[int, str]]
    ) -> dict[int, str]:
        """``read(ids)`` (id -> text; an id may be absent), the texts of the ids with a key
        in ``keys`` (their notes') served from memory when remembered at ``token`` (the
        write generation the caller read before calling), and remembered when read."""
        found: dict[int, str] = {}
        with self._lock:
            if token != self._token:
                self._texts.clear()
                self._bytes, self._token = 0, token
            for i in ids:
                text = self._texts.get(keys[i]) if i in keys else None
                if text is not None:
                    self._texts.move_to_end(keys[i])
                    found[i] = text
            self.hits += len(found)
            self.misses += len(ids) - len(found)
        missing = [i for i in ids if i not in found]
        if missing:
            new = read(missing)
            found.update(new)
            self._remember(token, {keys[i]: text for i, text in new.items() if i in keys})
        return found

    def _remember(self, token: str | None, texts: dict[Hashable, str]) -> None:
        with self._lock:
            if token != self._token:  # another generation meanwhile: these may be stale
                return
            for key, text in texts.items():
                if key not in self._texts:
                    self._texts[key] = text
                    self._bytes += sys.getsizeof(text)
            while self._bytes > self.max_bytes and self._texts:
                _, old = self._texts.popitem(last=False)
                self._bytes -= sys.getsizeof(old)


_caches = PerDatabase(NoteTexts)


def shared_texts(key: str) -> NoteTexts:
    """The process's cache for database ``key`` (as ``vectors.shared_index``'s key)."""
    return _caches.get(key)
