"""A server at the Ollama URL that is not Ollama (a plain web server's 404): said so, not
"has no model ...", which sent the user to `ollama pull` a model Ollama may well have."""

from __future__ import annotations

import pytest
from aiohttp import web

from arcology_oracle.errors import ModelNotFound
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.ollama.client import UpstreamUnavailable

NOT_OLLAMA = "does not answer as Ollama does (HTTP 404, '404 page not found'): is it the URL of Ollama?"


@pytest.fixture
async def web_server(aiohttp_server):
    """A web server answering every request 404, as Go's (Ollama's own router, too) words it."""

    async def missing(request: web.Request) -> web.Response:
        return web.Response(status=404, text="404 page not found")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", missing)
    server = await aiohttp_server(app)
    return f"http://127.0.0.1:{server.port}"


async def test_embedding_against_a_plain_web_server_says_it_is_not_ollama(make_settings, web_server):
    idx = OracleIndex(make_settings(ollama_host=web_server))
    await idx.start()
    try:
        await idx.reconcile()
        with pytest.raises(UpstreamUnavailable) as caught:
            await idx.embed_pending()
    finally:
        await idx.close()
    assert not isinstance(caught.value, ModelNotFound)
    assert str(caught.value).startswith(web_server + " " + NOT_OLLAMA), caught.value


async def test_a_grounded_chat_against_a_plain_web_server_says_it_is_not_ollama(make_client, make_settings, web_server):
    client = await make_client(make_settings(ollama_host=web_server), embedded=False)
    body = {"model": "llama3.2+notes", "messages": [{"role": "user", "content": "hi"}]}
    resp = await client.post("/api/chat", json=body)
    body = await resp.json()
    assert resp.status == 502 and NOT_OLLAMA in body["error"], body


async def test_the_model_list_from_a_plain_web_server_is_no_model_not_found(make_client, make_settings, web_server):
    """Its 404 was handed on: for OpenAI clients, "model_not_found" of a list of models."""
    client = await make_client(make_settings(ollama_host=web_server), embedded=False)
    resp = await client.get("/v1/models")
    body = await resp.json()
    assert resp.status == 502 and NOT_OLLAMA in body["error"]["message"], body


@pytest.mark.parametrize(("method", "path", "body"), [
    ("POST", "/api/chat", {"model": "llama3.2", "messages": [{"role": "user", "content": "hi"}], "stream": False}),
    ("POST", "/api/chat", {"model": "llama3.2", "messages": [{"role": "user", "content": "hi"}]}),
    ("POST", "/api/generate", {"model": "llama3.2", "prompt": "hi", "stream": False}),
    ("POST", "/api/show", {"model": "llama3.2"}),
    ("POST", "/api/embed", {"model": "all-minilm", "input": "hi"}),
    ("GET", "/api/version", None),
    ("GET", "/api/ps", None),
])  # fmt: skip
async def test_a_plain_model_relayed_from_a_plain_web_server_says_it_is_not_ollama(
    make_client, make_settings, web_server, method, path, body
):
    """Relayed whole or streamed, a plain model's request says what a grounded one says."""
    client = await make_client(make_settings(ollama_host=web_server), embedded=False)
    resp = await client.request(method, path, json=body)
    answer = await resp.json()
    assert resp.status == 502 and NOT_OLLAMA in answer["error"], answer
