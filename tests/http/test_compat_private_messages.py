"""A grounded request's own messages are org text a client sends (gptel in an org buffer
sends the chat's headings as they are): their private parts, as the one rule reads them
(a heading tagged private or ``crypt``, ``#+filetags``, ``ROAM_EXCLUDE``, a PGP block),
never reach retrieval or the model, as a buffer sent to ``/ask`` is cleaned. Plain models
stay a faithful proxy.

Real daemon process and org files; the fake Ollama records every request (embeddings and
chats)."""

from __future__ import annotations

import json

import aiohttp
import pytest

from tests.runners import start_daemon

PRIVATE_TURN = "*** My diagnosis :private:\nThe msgsecretokapi result came back.\n"
QUESTION = "*** Sourdough\nHow do I feed my sourdough starter?"
BODIES = {
    "/api/chat": {"messages": [{"role": "user", "content": PRIVATE_TURN + QUESTION}]},
    "/v1/chat/completions": {
        "messages": [{"role": "user", "content": PRIVATE_TURN + "*** Hm\nWhat now?"},
                     {"role": "assistant", "content": "Tell me more."},
                     {"role": "user", "content": QUESTION}],
    },  # fmt: skip
    "/api/generate": {"prompt": PRIVATE_TURN + QUESTION},
}


async def post(daemon, path: str, body: dict) -> tuple[int, str]:
    async with aiohttp.ClientSession(headers=daemon.headers) as session:
        async with session.post(daemon.url + path, json=body) as resp:
            return resp.status, await resp.text()


@pytest.fixture
async def daemon(tmp_path, roam_dir, fake_ollama):
    d = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    yield d
    d.stop()


@pytest.mark.parametrize("path", list(BODIES))
async def test_the_private_parts_of_a_grounded_conversation_never_reach_the_model(daemon, fake_ollama, path):
    fake_ollama.state.clear_records()
    status, answer = await post(daemon, path, {"model": "llama3.2+notes", "stream": False, **BODIES[path]})
    assert status == 200, answer
    sent = json.dumps(fake_ollama.state.requests)
    assert "msgsecretokapi" not in sent and "My diagnosis" not in sent
    assert "feed my sourdough starter" in sent  # the question went, grounded
    assert "Sources:" in answer


@pytest.mark.parametrize("path", list(BODIES))
async def test_a_grounded_request_whose_latest_message_is_private_whole_sends_nothing(daemon, fake_ollama, path):
    fake_ollama.state.clear_records()
    body = {"messages": [{"role": "user", "content": PRIVATE_TURN}]} if path != "/api/generate" else {"prompt": PRIVATE_TURN}
    status, answer = await post(daemon, path, {"model": "llama3.2+notes", "stream": False, **body})
    assert status == 400 and "private" in answer, answer
    assert "msgsecretokapi" not in answer
    assert "msgsecretokapi" not in json.dumps(fake_ollama.state.requests)


@pytest.mark.parametrize("fields", [{"raw": True}, {"suffix": "\n" + PRIVATE_TURN}, {"raw": True, "system": PRIVATE_TURN}])
async def test_a_raw_or_fill_in_generate_of_a_grounded_model_is_cleaned_too(daemon, fake_ollama, fields):
    # A raw prompt or an editor's fill-in (suffix) gets no notes, but it is the user's
    # org text sent to a grounded model all the same: its private parts stay home.
    fake_ollama.state.clear_records()
    body = {"model": "llama3.2+notes", "stream": False, "prompt": PRIVATE_TURN + QUESTION, **fields}
    status, answer = await post(daemon, "/api/generate", body)
    assert status == 200, answer
    sent = json.dumps(fake_ollama.state.requests)
    assert "msgsecretokapi" not in sent and "My diagnosis" not in sent
    assert "feed my sourdough starter" in sent
    assert "Sources:" not in answer


@pytest.mark.parametrize("content", [[{"type": "text", "text": PRIVATE_TURN + QUESTION}], {"text": PRIVATE_TURN}])
async def test_a_grounded_message_whose_content_is_no_text_is_refused_unsent(daemon, fake_ollama, content):
    # OpenAI's list of parts sent to Ollama's /api/chat by mistake: Ollama refuses it, but
    # the daemon's cleaning reads only text, so it would have gone upstream uncleaned.
    fake_ollama.state.clear_records()
    body = {"model": "llama3.2+notes", "stream": False, "messages": [{"role": "user", "content": content}]}
    status, answer = await post(daemon, "/api/chat", body)
    assert status == 400 and json.loads(answer)["error"] == "messages[0].content must be a string", answer
    assert "msgsecretokapi" not in json.dumps(fake_ollama.state.requests)
