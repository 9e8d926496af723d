"""Every grounded answer says how the notes were searched, in a shape its clients take:
``GET /ask`` (plain text, for curl) heads its sources "Sources (keyword match only):" and,
like the grounded chats of the Ollama- and OpenAI-compatible APIs (whose bodies gptel and
ellama read, so they stay as they are), sends ``X-Arcology-Oracle-Retrieval: keyword``
(or ``vector``). The embedder hangs in the fake Ollama; ``search_embed_wait`` is short,
so the question's notes are found by keywords (as ``/ask``'s ``"mode"`` says)."""

from __future__ import annotations

import json

import pytest

from tests.compat_tools import COFFEE_QUESTION

RETRIEVAL = "X-Arcology-Oracle-Retrieval"
MESSAGES = [{"role": "user", "content": COFFEE_QUESTION}]
GROUNDED = [
    ("/api/chat", {"model": "llama3.2+notes", "messages": MESSAGES, "stream": False}),
    ("/api/chat", {"model": "llama3.2+notes", "messages": MESSAGES, "stream": True}),
    ("/api/generate", {"model": "llama3.2+notes", "prompt": COFFEE_QUESTION, "stream": False}),
    ("/api/generate", {"model": "llama3.2+notes", "prompt": COFFEE_QUESTION, "stream": True}),
    ("/v1/chat/completions", {"model": "llama3.2+notes", "messages": MESSAGES}),
    ("/v1/chat/completions", {"model": "llama3.2+notes", "messages": MESSAGES, "stream": True}),
]


@pytest.fixture
async def daemon(make_client, make_settings, fake_ollama):
    client = await make_client(make_settings(ollama_host=fake_ollama.url, search_embed_wait=0.3, embed_timeout=600))
    yield client
    fake_ollama.state.hang = False
    fake_ollama.state.release()


def hang_the_embedder(fake_ollama) -> None:
    fake_ollama.state.configure({"fault_paths": ["/api/embed"], "hang": True, "hang_max": 3600})


@pytest.mark.parametrize("hung", [True, False], ids=["keyword", "vector"])
async def test_get_ask_says_keyword_matches_in_its_text_and_header(daemon, fake_ollama, hung):
    if hung:
        hang_the_embedder(fake_ollama)
    response = await daemon.get("/ask", params={"q": COFFEE_QUESTION})
    text = await response.text()
    assert response.status == 200, text
    assert response.headers[RETRIEVAL] == ("keyword" if hung else "vector")
    heading = "\n\nSources (keyword match only):\n" if hung else "\n\nSources:\n"
    assert heading in text and "Coffee Brewing" in text.partition(heading)[2], text


@pytest.mark.parametrize(("path", "body"), GROUNDED, ids=[f"{p} stream={b.get('stream')}" for p, b in GROUNDED])
async def test_grounded_chats_say_keyword_matches_in_a_header_only(daemon, fake_ollama, path, body):
    response = await daemon.post(path, json=body)
    searched = await response.read()
    assert response.status == 200 and response.headers[RETRIEVAL] == "vector", searched
    hang_the_embedder(fake_ollama)
    # Other words (the embedding of the first ones is kept, and would be used at once).
    other = json.loads(json.dumps(body).replace(COFFEE_QUESTION, "Which grind for pour-over coffee?"))
    response = await daemon.post(path, json=other)
    by_keywords = await response.read()
    assert response.status == 200 and response.headers[RETRIEVAL] == "keyword", by_keywords
    # The body is the API's own: objects with the same fields as with the embedding.
    assert shape(by_keywords) == shape(searched)


async def test_a_model_not_grounded_says_nothing(daemon, fake_ollama):
    response = await daemon.post("/api/chat", json={"model": "llama3.2", "messages": MESSAGES, "stream": False})
    assert response.status == 200 and RETRIEVAL not in response.headers


def shape(body: bytes) -> set[tuple[str, ...]]:
    """The key sets of the JSON objects of a body (JSON, NDJSON lines or SSE data lines)."""
    out = set()
    for line in body.decode().splitlines():
        line = line.removeprefix("data: ").strip()
        if line and line != "[DONE]":
            out.add(tuple(sorted(json.loads(line))))
    return out
