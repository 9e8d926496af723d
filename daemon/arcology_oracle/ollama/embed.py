"""Embedding text: the :class:`Embedder` protocol and its Ollama implementation.

An embedder turns document texts (chunks) and query texts into vectors. Task prefixes
(``search_document: `` for nomic-embed-text, none for all-minilm) belong to the model's
configuration and are added here, so stored chunk texts never carry them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Protocol

from ..config import Prefixes, Settings
from ..errors import ServiceUnavailable
from .client import OllamaConnection, translate_errors


class Embedder(Protocol):
    """Turns texts into vectors. Raises ServiceUnavailable when it cannot."""

    model: str
    prefixes: Prefixes

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def embed_query(self, text: str) -> list[float]: ...

    async def dimensions(self) -> int | None:
        """The length of the model's vectors as the model describes it (None if unknown)."""
        ...

    async def close(self) -> None: ...


def prefixes_key(prefixes: Prefixes) -> str:
    """The prefixes as stored in the index meta table (a change means re-embedding)."""
    return json.dumps(prefixes.model_dump(), sort_keys=True)


def normalise(vector: Sequence[float]) -> list[float]:
    """``vector`` scaled to unit length (L2 ranking then equals cosine ranking)."""
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0 or not math.isfinite(norm):
        raise ServiceUnavailable("embedding model returned a zero or non-finite vector")
    return [x / norm for x in vector]


class OllamaEmbedder(OllamaConnection):
    """Embeds with Ollama's ``/api/embed`` in batches of ``settings.embed_batch_size``."""

    def __init__(self, settings: Settings, model: str | None = None):
        super().__init__(settings.ollama_host, timeout=settings.embed_timeout, connect_timeout=settings.connect_timeout)
        self.model = model or settings.embed_model
        self.prefixes = settings.prefixes_for(self.model)
        self.batch_size = settings.embed_batch_size

    async def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            with translate_errors(self.host, self.model):
                response = await self.client.embed(model=self.model, input=batch)
                vectors = response["embeddings"]
            if len(vectors) != len(batch):
                raise ServiceUnavailable(
                    f"Ollama returned {len(vectors)} vectors for {len(batch)} texts",
                    host=self.host,
                    model=self.model,
                )
            out.extend(normalise(v) for v in vectors)
        return out

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._embed([self.prefixes.document + t for t in texts])

    async def embed_query(self, text: str) -> list[float]:
        return (await self._embed([self.prefixes.query + text]))[0]

    async def dimensions(self) -> int | None:
        """``<arch>.embedding_length`` from ``/api/show``; None when the model does not say."""
        with translate_errors(self.host, self.model):
            info = (await self.client.show(self.model)).modelinfo or {}
        for key, value in info.items():
            if key.endswith(".embedding_length") and isinstance(value, int):
                return value
        return None
