"""The embeddings of queries (and of unsaved text, embedded as documents), and what is
known about the embedder that makes them.

:class:`QueryVectors` caches the last 256, falls back to keywords (None) while the
embedder is down, and never hands out a vector of another length than the index's: an
embedding model replaced under its name (pulled again, another Ollama behind the same
host) gives vectors the stored ones cannot be compared with. Such a query is answered by
keywords, and the index is told, to drop its old vectors and embed every chunk again in
the background (see
:meth:`~arcology_oracle.index.service.OracleIndex.check_embedding_model`).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TypeVar

import numpy as np

from ..errors import DimensionMismatch, ServiceUnavailable
from ..ollama.embed import Embedder

log = logging.getLogger(__name__)
T = TypeVar("T")

# After a query's embedding failed (Ollama down or not answering), queries go straight to
# keyword mode for this long, unless the embedder answers meanwhile: an Ollama that
# accepts connections and never answers made every search wait embed_timeout (60 s).
QUERY_PAUSE_SECONDS = 30.0
CACHED = 256


class EmbedderState:
    """What is known about the embedder, for ``/status``, and whether queries wait for it."""

    def __init__(self) -> None:
        self.reachable: bool | None = None
        self.error: str | None = None
        self.embedded_since_start = 0
        self._failed_at: float | None = None

    def ok(self) -> None:
        self.reachable, self.error, self._failed_at = True, None, None

    def failed(self, exc: Exception) -> None:
        self.reachable, self.error, self._failed_at = False, str(exc), time.monotonic()

    def queries_wait(self) -> bool:
        """Whether a query should wait for its embedding: not while the last attempt
        failed less than :data:`QUERY_PAUSE_SECONDS` ago and the embedder has not
        answered again (the embedding worker keeps trying): queries then use keywords at
        once."""
        return self._failed_at is None or time.monotonic() - self._failed_at >= QUERY_PAUSE_SECONDS


class QueryVectors:
    """Query and unsaved-text embeddings for one index.

    ``stored_dims()``: the length of the index's vectors (None: it holds none yet).
    ``replaced()``: called, and not awaited, when a fresh embedding's length differs from
    it (the index checks its model and starts over in the background, calling
    :meth:`forget` if it does)."""

    def __init__(
        self,
        embedder: Embedder,
        state: EmbedderState,
        stored_dims: Callable[[], Awaitable[int | None]],
        replaced: Callable[[], None],
    ):
        self.embedder, self.state = embedder, state
        self._stored_dims, self._replaced = stored_dims, replaced
        self._cache: OrderedDict[str, list[float]] = OrderedDict()

    def forget(self) -> None:
        """Drop every cached vector (the index's model changed)."""
        self._cache.clear()

    async def query(self, text: str) -> list[float] | None:
        """The embedding of a query, or None when the embedder is unavailable or gives
        vectors the index cannot use."""
        key = "q:" + text
        if key in self._cache:
            self._cache.move_to_end(key)
            cached = self._cache[key]
            return cached if await self._fit({len(cached)}) else None
        vector = await self._embedded(lambda: self.embedder.embed_query(text))
        if vector is None or not await self._fit({len(vector)}):
            return None
        return self._remember(key, vector)

    async def documents(self, texts: list[str]) -> list[list[float]] | None:
        """The embeddings of ``texts`` as documents (cached as queries are: an unsaved
        heading is posted again each time point comes back to it), those not cached in
        one batch; None as :meth:`query`."""
        if not texts:
            return []
        found: dict[str, list[float]] = {}
        for text in texts:
            if "d:" + text in self._cache:
                self._cache.move_to_end("d:" + text)
                found[text] = self._cache["d:" + text]
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        vectors = await self._embedded(lambda: self.embedder.embed_documents(missing)) if missing else []
        if vectors is None or not await self._fit({len(v) for v in [*found.values(), *vectors]}):
            return None
        found |= {t: self._remember("d:" + t, v) for t, v in zip(missing, vectors)}
        return [found[t] for t in texts]

    def _remember(self, key: str, vector) -> list[float]:
        """``vector`` as plain floats, kept under ``key`` among the last :data:`CACHED`."""
        out = self._cache[key] = np.asarray(vector, np.float64).tolist()
        while len(self._cache) > CACHED:
            self._cache.popitem(last=False)
        return out

    async def _embedded(self, call: Callable[[], Awaitable[T]]) -> T | None:
        """``await call()`` (the embedder), or None when the embedder is unavailable (or
        failed a moment ago: :meth:`EmbedderState.queries_wait`); either way recorded in
        :attr:`state` (``/status``)."""
        if not self.state.queries_wait():
            return None
        try:
            out = await call()
        except ServiceUnavailable as exc:
            self.state.failed(exc)
            log.info("embedding unavailable, keyword mode: %s", exc)
            return None
        self.state.ok()
        return out

    async def _fit(self, lengths: set[int]) -> bool:
        """Whether vectors of ``lengths`` can be searched in the index: of its vectors'
        length, or it holds none. Asked of the index at every query, cached vectors too:
        another process (``arcology-oracle index`` with another model) may have replaced
        the stored vectors since. Another length tells the index (``replaced``) and
        pauses queries' embeddings as a failure does (:meth:`EmbedderState.queries_wait`:
        until the embedder answers the index again)."""
        stored = await self._stored_dims()
        if stored is None or lengths == {stored}:
            return True
        log.warning(
            "the embedding model %s gives vectors of %s dimensions, the index's have %d: searching by keywords",
            self.embedder.model, "/".join(map(str, sorted(lengths))), stored,
        )  # fmt: skip
        self.state.failed(
            DimensionMismatch(
                f"the embedding model {self.embedder.model} gives vectors of another length than the index's"
                f" ({stored}): searching by keywords"
            )
        )
        self._replaced()
        return False
