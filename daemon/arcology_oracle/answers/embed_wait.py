"""A query's embedding, waited for ``settings.search_embed_wait`` seconds at most.

A busy Ollama (a long answer of the chat model ahead in its queue, a model loading) or a
hung one would otherwise hold a search or a question for the embedder's whole timeout
(``embed_timeout``). Past the wait the caller goes on by keywords; the embedding is not
cancelled: it goes on, and the index caches it (:meth:`~arcology_oracle.index.service.OracleIndex.query_vector`),
so the next request for the same words uses it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from .index_api import NotesIndex

T = TypeVar("T")

_late: set[asyncio.Future] = set()  # embeddings a request stopped waiting for, still running


async def within_wait(index: NotesIndex, embedding: Awaitable[T]) -> T | None:
    """``await embedding``, or None when it has not come within ``search_embed_wait``
    seconds; it then goes on rather than being cancelled (see the module docstring)."""
    task = asyncio.ensure_future(embedding)
    _late.add(task)
    task.add_done_callback(_late.discard)
    task.add_done_callback(lambda t: t.cancelled() or t.exception())  # no "never retrieved" warning
    try:
        return await asyncio.wait_for(asyncio.shield(task), index.settings.search_embed_wait)
    except TimeoutError:
        return None
