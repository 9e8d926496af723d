"""The embedder's own HTTP client (aiohttp, see ``ollama/client.py``): what reaches
Ollama, how each failure reads, and an embedder that outlives its event loop."""

from __future__ import annotations

import asyncio

import pytest

from arcology_oracle.errors import ModelNotFound
from arcology_oracle.ollama.chat import OllamaChat
from arcology_oracle.ollama.client import UpstreamError, UpstreamUnavailable
from arcology_oracle.ollama.embed import OllamaEmbedder
from tests.fakes.fake_ollama import fake_embedding


@pytest.fixture
async def embedder(settings):
    e = OllamaEmbedder(settings)
    yield e
    await e.close()


async def test_vectors_are_ollamas_scaled_to_unit_length_in_order(embedder, fake_ollama):
    texts = [f"note {i} about kites and bread" for i in range(70)]  # three batches of 32
    vectors = await embedder.embed_documents(texts)
    assert len(vectors) == 70 and fake_ollama.state.embed_batches == [32, 32, 6]
    for text, vector in zip(texts, vectors):
        expected = fake_embedding(text)
        norm = sum(x * x for x in expected) ** 0.5
        assert max(abs(a - b / norm) for a, b in zip(vector, expected)) < 1e-6


async def test_the_api_key_reaches_ollama_from_both_clients(settings, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_API_KEY", "k-123")
    embedder, chat = OllamaEmbedder(settings), OllamaChat(settings)
    try:
        await embedder.embed_query("kites")
        await chat.chat([{"role": "user", "content": "hello"}])
    finally:
        await embedder.close()
        await chat.close()
    embed_headers = fake_ollama.state.headers["/api/embed"][-1]
    chat_headers = fake_ollama.state.headers["/api/chat"][-1]
    assert embed_headers["Authorization"] == chat_headers["Authorization"] == "Bearer k-123"


async def test_failures_read_as_the_official_clients_did(settings, make_settings, fake_ollama):
    missing = OllamaEmbedder(settings, model="no-such-model")
    with pytest.raises(ModelNotFound, match="ollama pull no-such-model"):
        await missing.embed_query("kites")
    await missing.close()

    embedder = OllamaEmbedder(settings)
    fake_ollama.state.fail_status, fake_ollama.state.fail_message = 503, "overloaded"
    with pytest.raises(UpstreamError, match="HTTP 503.*overloaded") as raised:
        await embedder.embed_query("kites")
    assert raised.value.status == 503
    fake_ollama.state.fail_status = None
    fake_ollama.state.garbage = True
    with pytest.raises(UpstreamUnavailable, match="invalid response"):
        await embedder.embed_query("kites")
    await embedder.close()

    refused = OllamaEmbedder(make_settings())  # the discard port
    with pytest.raises(UpstreamUnavailable, match="cannot connect to Ollama at http://127.0.0.1:9"):
        await refused.embed_query("kites")
    await refused.close()


async def test_an_embedder_used_from_another_event_loop_still_embeds(embedder, fake_ollama):
    """An embedder can serve one ``asyncio.run`` after another, closed at the end of
    each; an aiohttp session belongs to the loop it was made in."""

    async def once() -> list[float]:
        try:
            return await embedder.embed_query("kites")
        finally:
            await embedder.close()

    first = await embedder.embed_query("kites")
    in_a_thread = await asyncio.to_thread(asyncio.run, once())
    again = await embedder.embed_query("kites")
    assert list(first) == list(in_a_thread) == list(again)
    assert fake_ollama.state.count("/api/embed") == 3
