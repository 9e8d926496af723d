"""What the answers need from the index: the :class:`NotesIndex` protocol.

:mod:`arcology_oracle.answers` never imports the service that keeps the index
(:class:`arcology_oracle.index.service.OracleIndex` satisfies this protocol
structurally); tests and other front ends may hand in anything that does too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from ..config import Settings
from ..store import Store

T = TypeVar("T")


class NotesIndex(Protocol):
    """An index of the notes that can be read (and its caches written) off the event loop."""

    settings: Settings

    async def read(self, fn: Callable[[Store], T]) -> T:
        """Run ``fn(store)`` on a reader thread and return its result."""
        ...

    async def write(self, fn: Callable[[Store], T]) -> T:
        """Run ``fn(store)`` on the writer thread and return its result."""
        ...

    async def has_vectors(self) -> bool:
        """Whether the store has a vector table to search (some chunk was embedded)."""
        ...

    async def query_vector(self, text: str, *, document: bool = False) -> list[float] | None:
        """The embedding of ``text`` (as a query, or as a document), or None when the
        embedder is unavailable (then answers fall back to keywords)."""
        ...

    async def document_vectors(self, texts: list[str]) -> list[list[float]] | None:
        """The embeddings of ``texts`` as documents (as the index embeds chunks), in
        order, or None when the embedder is unavailable."""
        ...
