"""Embedding text: the :class:`Embedder` protocol and its Ollama implementation.

An embedder turns document texts (chunks) and query texts into vectors. Task prefixes
(``search_document: `` for nomic-embed-text, none for all-minilm) belong to the model's
configuration and are added here, so stored chunk texts never carry them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ..config import Prefixes, Settings
from ..errors import ServiceUnavailable
from .client import OllamaConnection, post_json, translate_errors


class Embedder(Protocol):
    """Turns texts into vectors. Raises ServiceUnavailable when it cannot."""

    model: str
    prefixes: Prefixes

    async def embed_documents(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        """One vector per text, in order (a float32 matrix, or lists of floats)."""
        ...

    async def embed_query(self, text: str) -> Sequence[float]: ...

    async def dimensions(self) -> int | None:
        """The length of the model's vectors as the model describes it (None if unknown)."""
        ...

    async def close(self) -> None: ...


def prefixes_key(prefixes: Prefixes) -> str:
    """The prefixes as stored in the index meta table (a change means re-embedding)."""
    return json.dumps(prefixes.model_dump(), sort_keys=True)


def normalised(vectors: list[list[float]]) -> np.ndarray | list[np.ndarray]:
    """``vectors`` scaled to unit length (L2 ranking then equals cosine ranking), as one
    float32 matrix: numpy turns the decoded JSON's floats into it several times faster
    than Python arithmetic on each float did (the daemon's largest cost of embedding
    after the client's own JSON decoding; see BENCHMARKS.md). Vectors of unequal
    lengths come back as a list of rows, for the store to refuse them by their lengths.
    """
    try:
        matrix = np.array(vectors, dtype=np.float32)
    except ValueError:  # ragged: lengths differ
        return [normalised([v])[0] for v in vectors]
    if matrix.ndim != 2:
        raise ServiceUnavailable("embedding model returned something that is not a list of vectors")
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix, dtype=np.float64))
    if not np.all(np.isfinite(norms) & (norms > 0)):
        raise ServiceUnavailable("embedding model returned a zero or non-finite vector")
    return (matrix / norms[:, None]).astype(np.float32, copy=False)


class OllamaEmbedder(OllamaConnection):
    """Embeds with Ollama's ``/api/embed`` in batches of ``settings.embed_batch_size``,
    through the connection's aiohttp session (the hot path; see :mod:`.client`)."""

    def __init__(self, settings: Settings, model: str | None = None):
        super().__init__(settings.ollama_host, timeout=settings.embed_timeout, connect_timeout=settings.connect_timeout)
        self.model = model or settings.embed_model
        self.prefixes = settings.prefixes_for(self.model)
        self.batch_size = settings.embed_batch_size

    async def _embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        out: list = []
        url = f"{self.host}/api/embed"
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            with translate_errors(self.host, self.model):
                response = await post_json(self.session, url, {"model": self.model, "input": batch})
                vectors = response["embeddings"]  # a KeyError or TypeError: not Ollama's answer
            if len(vectors) != len(batch):
                raise ServiceUnavailable(
                    f"Ollama returned {len(vectors)} vectors for {len(batch)} texts",
                    host=self.host,
                    model=self.model,
                )
            out.append(normalised(vectors))
        if len(out) == 1:
            return out[0]
        return [row for part in out for row in part]

    async def embed_documents(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        return await self._embed([self.prefixes.document + t for t in texts])

    async def embed_query(self, text: str) -> Sequence[float]:
        return (await self._embed([self.prefixes.query + text]))[0]

    async def dimensions(self) -> int | None:
        """``<arch>.embedding_length`` from ``/api/show``; None when the model does not say."""
        with translate_errors(self.host, self.model):
            info = (await self.client.show(self.model)).modelinfo or {}
        for key, value in info.items():
            if key.endswith(".embedding_length") and isinstance(value, int):
                return value
        return None
