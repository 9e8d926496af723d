"""Which notes hold other notes word for word (:meth:`~.reads.Reads.holders_among`), with
each note's headings kept in memory between queries for one write generation.

Every section query (``?file=&line=``, ``POST /similar`` with a section: what Emacs sends
as point moves) asks it of its ~130 candidate notes. Reading their headings' titles and
texts took 1.4-4 ms of CPU per query, and reading titles alone still ~0.7-1 ms (the rows
are found one note at a time), on collections where no note holds another as on those
where some do (BENCHMARKS.md, issue 29, sixteenth round). The same notes come back as the
cursor moves, so each note's *holding* (:func:`holding_of`: what of it another note must
hold) is remembered, shared by every store of a database in the process, until a write
changes that note's headings (:mod:`.note_changes`; forgetting every note at every write
made the first section query after each save read all its candidates again, 1.3-5 ms
more: issue 29, eighteenth round); comparing them (:func:`holders`) reads nothing and
compares almost no two notes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import NamedTuple

from .generation_cache import GenerationCache
from .shared import PerDatabase

# A note's heading as compared: a digest of its title and text (one object, its hash
# kept: a tuple's is computed again at every lookup).
Held = bytes


class Holding(NamedTuple):
    """A note's headings as compared (:func:`holding_of`) and the least of them."""

    headings: frozenset[Held]
    least: Held


NOTHING = Holding(frozenset(), b"")  # a note with no heading with text


# ~80 bytes a heading: ~100,000 headings' holdings fit, far more than a session asks of.
MAX_BYTES = 8 * 1024 * 1024
_ENTRY_BYTES = 80  # a digest and a set slot, roughly


def holding_of(rows: Iterable[tuple[str, str]]) -> Holding:
    """A note's holding from its headings' ``(title, text)``: each heading as a 16-byte
    BLAKE2b digest of its title and text (two headings with the same digest are taken as
    the same: a chance of about 2^-128). The caller gives the texts trimmed and leaves out
    headings with no text and the oracle's words."""
    headings = frozenset(_digest(f"{len(title)}:{title}{text}") for title, text in rows)
    return Holding(headings, min(headings)) if headings else NOTHING


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def holders(holdings: Mapping[str, Holding]) -> set[str]:
    """The notes of ``holdings`` holding every heading of another of them, and more: ``H``
    holds ``N`` when ``N``'s headings are a non-empty proper subset of ``H``'s. Then ``H``
    has ``N``'s least heading, so each note is compared only with the notes whose least
    heading it has besides its own: almost always none, found by one set intersection a
    note (the per-heading work is the sets' own, in C)."""
    by_least: dict[Held, list[frozenset[Held]]] = {}
    for headings, least in holdings.values():
        if headings:
            by_least.setdefault(least, []).append(headings)
    leasts = frozenset(by_least)
    out: set[str] = set()
    for node, (theirs, least) in holdings.items():
        if len(theirs) < 2:  # holding one heading or none, it holds no note
            continue
        common = theirs & leasts
        if len(common) == 1 and len(by_least[least]) == 1:  # only its own least heading
            continue
        if any(len(held) < len(theirs) and held <= theirs for h in common for held in by_least[h]):
            out.add(node)
    return out


def _size_of(held: Holding | None) -> int:
    return 64 + _ENTRY_BYTES * len(held.headings if held else ())


class Holdings:
    """Node id -> its holding (:func:`holding_of`), kept while its headings are
    (:class:`~.generation_cache.GenerationCache` by the generation of the headings, with
    :mod:`.note_changes`). Thread-safe."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self._held: GenerationCache[str, Holding] = GenerationCache(max_bytes, _size_of, note_of=str)

    @property
    def hits(self) -> int:
        return self._held.hits

    def lookup(
        self, token: str | None, node_ids: list[str], changed: Callable[[str | None], Collection[str] | None]
    ) -> tuple[dict[str, Holding], list[str]]:
        """``(holdings found, node ids not cached)`` at ``token`` (the generation of the
        headings the caller read before the rows; ``changed``: the store's
        ``notes_changed_since``)."""
        found, missing = self._held.lookup(token, node_ids, changed)
        return {node: held or NOTHING for node, held in found.items()}, missing

    def remember(self, token: str | None, holdings: dict[str, Holding]) -> None:
        """File ``holdings``, read after ``token``; dropped if the cache moved on meanwhile."""
        self._held.remember(token, dict(holdings))


_caches = PerDatabase(Holdings)


def shared_holdings(key: str) -> Holdings:
    """The process's cache for database ``key`` (as :func:`.node_means.shared_means`)."""
    return _caches.get(key)
