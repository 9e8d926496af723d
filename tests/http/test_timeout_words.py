"""Ollama timing out is said in the same words on every route that can meet it: "Ollama
at HOST timed out (model 'NAME')", each thing named once (it read "Ollama at HOST timed
out (model 'NAME' at HOST)"). The chat model hangs in the fake Ollama; the embedder does
not, so the notes are found and only the answer times out. An answer that is not JSON
names the host once too."""

from __future__ import annotations

import pytest

from tests.compat_tools import COFFEE_QUESTION

MESSAGES = [{"role": "user", "content": COFFEE_QUESTION}]
# (method, path, body or query, where the message is in the JSON answer)
ROUTES = [
    ("post", "/ask", {"question": COFFEE_QUESTION, "stream": False}, "error"),
    ("post", "/ask", {"question": COFFEE_QUESTION, "stream": True}, "error"),
    ("get", "/ask", {"q": COFFEE_QUESTION}, "error"),
    ("post", "/api/chat", {"model": "llama3.2", "messages": MESSAGES, "stream": False}, "error"),
    ("post", "/api/chat", {"model": "llama3.2+notes", "messages": MESSAGES, "stream": True}, "error"),
    ("post", "/api/generate", {"model": "llama3.2+notes", "prompt": COFFEE_QUESTION, "stream": False}, "error"),
    ("post", "/v1/chat/completions", {"model": "llama3.2+notes", "messages": MESSAGES}, "error.message"),
]


@pytest.fixture
async def hung_chat(make_client, make_settings, fake_ollama):
    daemon = await make_client(make_settings(ollama_host=fake_ollama.url, chat_timeout=0.5))
    fake_ollama.state.configure({"hang": True, "fault_paths": ["/api/chat", "/api/generate"]})
    yield daemon
    fake_ollama.state.hang = False
    fake_ollama.state.release()


@pytest.mark.parametrize(("method", "path", "data", "where"), ROUTES, ids=[f"{m} {p} {i}" for i, (m, p, *_) in enumerate(ROUTES)])
async def test_a_timeout_names_host_and_model_once(hung_chat, fake_ollama, method, path, data, where):
    if method == "get":
        response = await hung_chat.get(path, params=data)
    else:
        response = await hung_chat.post(path, json=data)
    body = await response.json()
    for key in where.split("."):
        body = body[key]
    assert response.status in (503, 504), (response.status, body)
    assert body == f"Ollama at {fake_ollama.url} timed out (model 'llama3.2')"


async def test_an_answer_that_is_not_ollamas_names_the_host_once(make_client, make_settings, fake_ollama):
    daemon = await make_client(make_settings(ollama_host=fake_ollama.url))
    fake_ollama.state.configure({"garbage": True, "fault_paths": ["/api/chat"]})
    response = await daemon.post("/ask", json={"question": COFFEE_QUESTION, "stream": False})
    assert response.status == 503
    assert (await response.json())["error"] == (
        f"invalid response from model 'llama3.2' at {fake_ollama.url}: it is not Ollama's"
        " (not JSON: is it Ollama that answers there?)"
    )
