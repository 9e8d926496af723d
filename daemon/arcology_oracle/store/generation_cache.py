"""Values computed from the database, kept in memory between queries for one write
generation: what :mod:`.node_means` and :mod:`.note_text_cache` keep theirs in.

Invalidation: every write transaction records a new random token under
:data:`WRITE_GENERATION` in ``meta`` (``StoreBase.transaction``), whatever it changed and
whichever process made it: a note edited, moved, deleted or made private, a vector stored
or dropped. A reader reads the token before the rows it computes a value from, so a value
is never older than the token it is filed under; a token other than the cache's empties
the cache, and a value computed under an older token is dropped. Bounded by ``max_bytes``
as its ``size_of`` counts them (least recently used first out).

A cache of values derived from a note's headings alone is kept by the generation of the
headings instead (``NODES_GENERATION``, which writes of vectors leave alone) and, given
``note_of`` and a lookup's ``changed``, forgets at a new token only the values of the notes
changed since its own (:mod:`.note_changes`, which names them by keyed digests).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable, Iterable
from typing import Generic, TypeVar

from .note_changes import digest

WRITE_GENERATION = "write_generation"  # the token's key in the store's meta table
NONE_PENDING = "none_pending"  # meta key: a write generation at which no chunk was pending (vector_sync)

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class GenerationCache(Generic[K, V]):
    """Key -> value for one write generation (see the module docstring). A value of None
    is remembered too ("nothing there"). Thread-safe; ``hits`` and ``misses`` count the
    keys looked up."""

    def __init__(
        self, max_bytes: int, size_of: Callable[[V | None], int], note_of: Callable[[K], str] | None = None
    ) -> None:
        self.max_bytes = max_bytes
        self._size_of = size_of
        self._note_of = note_of  # a key's note (note_changes' key), for lookup's changed
        self._by_note: dict[str, set[K]] = {}  # with note_of: a note's digest -> its keys here
        self._lock = threading.Lock()
        self._token: str | None = None
        self._values: OrderedDict[K, V | None] = OrderedDict()
        self._bytes = 0
        self.hits = self.misses = 0

    def lookup(
        self, token: str | None, keys: Iterable[K], changed: Callable[[str | None], Collection[str] | None] | None = None
    ) -> tuple[dict[K, V | None], list[K]]:
        """``(values remembered, keys not remembered)`` at ``token`` (the generation the
        caller read before calling); the values found become the most recently used. At a
        new token, ``changed(the cache's token)`` (with ``note_of``) names the notes whose
        values are forgotten, the rest kept; None, or no ``changed``: all are forgotten."""
        found: dict[K, V | None] = {}
        missing: list[K] = []
        with self._lock:
            if token != self._token:
                self._forget(changed(self._token) if changed and self._note_of and self._values else None)
                self._token = token
            for key in keys:
                if key in self._values:
                    self._values.move_to_end(key)
                    found[key] = self._values[key]
                else:
                    missing.append(key)
            self.hits += len(found)
            self.misses += len(missing)
        return found, missing

    def remember(self, token: str | None, values: dict[K, V | None]) -> None:
        """File ``values``, computed after reading ``token``; dropped if the cache moved to
        another token meanwhile. A key already remembered keeps its value."""
        with self._lock:
            if token != self._token:
                return
            for key, value in values.items():
                if key not in self._values:
                    self._values[key] = value
                    self._bytes += self._size_of(value)
                    if self._note_of:
                        self._by_note.setdefault(digest(self._note_of(key)), set()).add(key)
            while self._bytes > self.max_bytes and self._values:
                key, old = self._values.popitem(last=False)
                self._bytes -= self._size_of(old)
                if self._note_of:
                    self._by_note.get(digest(self._note_of(key)), set()).discard(key)

    def _forget(self, notes: Collection[str] | None) -> None:
        """Drop the values of the notes whose digests (:func:`.note_changes.digest`) are ``notes``
        (None: every value). Under the lock."""
        if notes is None:
            self._values.clear()
            self._by_note.clear()
            self._bytes = 0
            return
        for note in notes:
            for key in self._by_note.pop(note, ()):
                if key in self._values:
                    self._bytes -= self._size_of(self._values.pop(key))
