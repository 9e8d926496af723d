"""The OpenAI-compatible API, driven by the real ``openai`` Python client.

The daemon (the real app over the example vault) translates to the fake Ollama; what
the fake records is what the upstream model was asked.
"""

from __future__ import annotations

import asyncio
import base64
import json
import struct

import openai
import pytest

from arcology_oracle.errors import BadRequest
from arcology_oracle.http.compat import openai_shapes as shapes
from tests.compat_tools import COFFEE_ID, COFFEE_QUESTION, UNRELATED_QUESTION, base_url, notes_messages


@pytest.fixture
async def daemon_client(make_client, settings):
    return await make_client(settings)


def make_openai(url: str, api_key: str = "unused") -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=url + "/v1", api_key=api_key, max_retries=0, timeout=20)


@pytest.fixture
async def oai(daemon_client):
    client = make_openai(base_url(daemon_client))
    yield client
    await client.close()


def question(text: str = COFFEE_QUESTION) -> list[dict]:
    return [{"role": "system", "content": "You are a terse assistant."}, {"role": "user", "content": text}]


def test_messages_translate_images_and_tool_calls():
    messages = [
        {"role": "developer", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "what is this?"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGVsbG8="}}]},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "now", "arguments": '{"tz": "UTC"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "12:00"},
    ]  # fmt: skip
    assert shapes.openai_messages_to_ollama(messages) == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "what is this?", "images": ["aGVsbG8="]},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "now", "arguments": {"tz": "UTC"}}}]},
        {"role": "tool", "content": "12:00", "tool_name": "now"},
    ]
    # A tool result that names its tool (no call ID to find it by), as Ollama's OpenAI layer reads it.
    assert shapes.openai_messages_to_ollama([{"role": "tool", "name": "now", "content": "12:00"}]) == [
        {"role": "tool", "content": "12:00", "tool_name": "now"}
    ]
    with pytest.raises(BadRequest):
        shapes.openai_messages_to_ollama([{"role": "user", "content": [{"type": "image_url", "image_url": "http://x/y.png"}]}])


def test_response_format_and_tool_call_answers_translate():
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "json_object"}}
    assert shapes.openai_chat_to_ollama(body)["format"] == "json"
    schema = {"type": "object"}
    body["response_format"] = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    assert shapes.openai_chat_to_ollama(body)["format"] == schema
    frame = {"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "now", "arguments": {}}}]},
             "done": True, "done_reason": "stop", "prompt_eval_count": 3, "eval_count": 2}  # fmt: skip
    completion = shapes.openai_completion(frame, model="m")
    assert completion["choices"][0]["finish_reason"] == "tool_calls"
    assert completion["choices"][0]["message"]["tool_calls"][0]["function"] == {"name": "now", "arguments": "{}"}
    chunks = shapes.ChunkTranslator("m").translate(frame)
    assert chunks[0]["choices"][0]["delta"]["tool_calls"][0]["index"] == 0
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


async def test_reasoning_effort_is_ollamas_think(oai, fake_ollama):
    """As Ollama's own OpenAI layer reads it: ``reasoning_effort`` (or ``reasoning.effort``)
    is ``think``, "none" turning thinking off; another value is a 400."""
    for asked, think in ({"reasoning_effort": "none"}, False), ({"reasoning_effort": "low"}, "low"), (
        {"extra_body": {"reasoning": {"effort": "high"}}}, "high"
    ):
        await oai.chat.completions.create(model="llama3.2+notes", messages=question(), **asked)
        assert fake_ollama.state.requests["/api/chat"][-1]["think"] == think, asked
    with pytest.raises(openai.BadRequestError) as info:
        await oai.chat.completions.create(model="llama3.2", messages=question(), reasoning_effort="extreme")
    assert "reasoning" in info.value.message


async def test_malformed_messages_are_a_400_not_a_500(daemon_client):
    bad = [
        {"messages": [{"role": "assistant", "content": "", "tool_calls": ["x"]}, {"role": "user", "content": "hi"}]},
        {"messages": [{"role": "assistant", "content": "", "tool_calls": [{"id": "a", "function": "now"}]}]},
        {"messages": [{"role": "assistant", "content": "", "tool_calls": [{"id": ["a"], "function": {"name": "now"}}]}]},
        {"messages": [{"role": "tool", "tool_call_id": ["a"], "content": "x"}]},
        {"messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "json_schema", "json_schema": "x"}},
        {"messages": [{"role": "user", "content": "hi"}], "stream": "false"},
    ]
    for body in bad:
        resp = await daemon_client.post("/v1/chat/completions", json={"model": "llama3.2", **body})
        assert resp.status == 400, (body, await resp.text())
        assert (await resp.json())["error"]["message"]


async def test_models_list_upstream_and_grounded_models(oai):
    ids = [m.id async for m in oai.models.list()]
    assert {"llama3.2:latest", "llama3.2+notes", "qwen2.5:7b", "qwen2.5:7b+notes", "nomic-embed-text:latest"} <= set(ids)
    assert not any("embed" in i and "+notes" in i for i in ids)
    model = await oai.models.retrieve("llama3.2+notes")
    assert model.id == "llama3.2+notes" and model.object == "model"


async def test_grounded_chat_completion(oai, fake_ollama):
    completion = await oai.chat.completions.create(model="llama3.2+notes", messages=question())
    sent = fake_ollama.state.requests["/api/chat"][-1]
    assert sent["model"] == "llama3.2" and sent["stream"] is False
    assert [m["role"] for m in sent["messages"]] == ["system", "system", "user"]
    assert sent["messages"][0]["content"] == "You are a terse assistant."
    assert "[1] Coffee Brewing" in notes_messages(sent["messages"])[0]["content"]
    choice = completion.choices[0]
    assert completion.model == "llama3.2+notes" and choice.finish_reason == "stop"
    assert choice.message.content.startswith("Based on your notes [1]")
    assert f"[[id:{COFFEE_ID}][Coffee Brewing" in choice.message.content
    assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0


async def test_pass_through_chat_translates_options_and_tools(oai, fake_ollama):
    tools = [{"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}]
    completion = await oai.chat.completions.create(
        model="llama3.2", messages=question(), temperature=0.2, max_tokens=5, stop=["\n"], seed=7, tools=tools,
    )  # fmt: skip
    sent = fake_ollama.state.requests["/api/chat"][-1]
    assert sent["options"] == {"temperature": 0.2, "num_predict": 5, "stop": ["\n"], "seed": 7}
    assert sent["tools"] == tools
    assert sent["messages"] == [{"role": m["role"], "content": m["content"]} for m in question()]
    assert completion.choices[0].finish_reason == "length"  # num_predict cut the fake's answer
    assert "Sources" not in completion.choices[0].message.content


async def test_grounded_chat_streams_incrementally(oai, fake_ollama):
    state = fake_ollama.state
    state.stream_gate = asyncio.Event()
    stream = await oai.chat.completions.create(model="llama3.2+notes", messages=question(), stream=True,
                                               stream_options={"include_usage": True})  # fmt: skip
    first = await anext(aiter(stream))
    assert first.choices[0].delta.content and not state.stream_gate.is_set()
    state.stream_gate.set()
    chunks = [first] + [chunk async for chunk in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("Based on your notes [1]") and f"[[id:{COFFEE_ID}]" in text
    finals = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert [c.choices[0].finish_reason for c in finals] == ["stop"]
    assert chunks[-1].usage.completion_tokens > 0 and not chunks[-1].choices
    assert {c.id for c in chunks} == {first.id} and all(c.model == "llama3.2+notes" for c in chunks)


async def test_unrelated_question_gets_no_notes(oai, fake_ollama):
    completion = await oai.chat.completions.create(model="llama3.2+notes", messages=question(UNRELATED_QUESTION))
    assert not notes_messages(fake_ollama.state.requests["/api/chat"][-1]["messages"])
    assert "Sources" not in completion.choices[0].message.content


async def test_sse_on_the_wire(daemon_client):
    body = {"model": "llama3.2+notes", "messages": question(), "stream": True}
    response = await daemon_client.post("/v1/chat/completions", json=body)
    assert response.status == 200 and response.headers["Content-Type"] == "text/event-stream"
    events = [e for e in (await response.read()).decode().split("\n\n") if e]
    assert all(e.startswith("data: ") for e in events) and events[-1] == "data: [DONE]"
    first = json.loads(events[0][len("data: "):])
    assert first["object"] == "chat.completion.chunk" and first["choices"][0]["delta"]["role"] == "assistant"


async def test_embeddings_match_upstream_vectors(oai, fake_ollama):
    floats = await oai.embeddings.create(model="all-minilm", input=["sourdough starter", "rust borrow"])
    packed = await oai.embeddings.create(model="all-minilm", input="sourdough starter", encoding_format="base64")
    upstream = fake_ollama.state.requests["/api/embed"]
    assert upstream[-2] == {"model": "all-minilm", "input": ["sourdough starter", "rust borrow"]}
    assert [d.index for d in floats.data] == [0, 1] and len(floats.data[0].embedding) == 384
    raw = base64.b64decode(packed.data[0].embedding)  # asked for base64, the client leaves it packed
    assert list(struct.unpack(f"<{len(raw) // 4}f", raw)) == pytest.approx(floats.data[0].embedding, abs=1e-6)
    assert floats.model == "all-minilm" and floats.usage.prompt_tokens > 0


async def test_unknown_model_is_openais_model_not_found(oai):
    for model in ("no-such-model", "no-such-model+notes", "all-minilm+notes"):
        for stream in (False, True):
            with pytest.raises(openai.NotFoundError) as info:
                await oai.chat.completions.create(model=model, messages=question(), stream=stream)
            assert info.value.status_code == 404 and info.value.code == "model_not_found"
            assert model.removesuffix("+notes") in info.value.message


async def test_unknown_embedding_model_and_missing_model(oai):
    with pytest.raises(openai.NotFoundError) as info:
        await oai.embeddings.create(model="no-such-embedder", input="x")
    assert info.value.code == "model_not_found"
    with pytest.raises(openai.NotFoundError):
        await oai.models.retrieve("no-such-model")
    with pytest.raises(openai.BadRequestError) as bad:
        await oai.chat.completions.create(model="llama3.2", messages=[])
    assert bad.value.body["type"] == "invalid_request_error"


async def test_upstream_down_is_a_clear_502(oai, fake_ollama):
    await fake_ollama.stop()
    for call in (
        oai.chat.completions.create(model="llama3.2+notes", messages=question()),
        oai.chat.completions.create(model="llama3.2", messages=question(), stream=True),
        oai.embeddings.create(model="all-minilm", input="x"),
    ):
        with pytest.raises(openai.APIStatusError) as info:
            await call
        assert info.value.status_code == 502 and fake_ollama.url in info.value.message


async def test_error_mid_stream_is_an_sse_error(oai, fake_ollama):
    fake_ollama.state.chat_error_midway = 2
    stream = await oai.chat.completions.create(model="llama3.2+notes", messages=question(), stream=True)
    with pytest.raises(openai.APIError) as info:
        async for _ in stream:
            pass
    assert "fake failure" in info.value.message


async def test_bearer_token_is_the_api_key(make_client, make_settings, fake_ollama):
    daemon = await make_client(make_settings(ollama_host=fake_ollama.url, token="s3cret"))
    wrong, right = make_openai(base_url(daemon), "nope"), make_openai(base_url(daemon), "s3cret")
    try:
        with pytest.raises(openai.AuthenticationError):
            await wrong.models.list()
        completion = await right.chat.completions.create(model="llama3.2+notes", messages=question())
        assert "[[id:" in completion.choices[0].message.content
    finally:
        await wrong.close()
        await right.close()


async def test_client_disconnect_cancels_the_upstream_request(production_daemon, fake_ollama):
    state = fake_ollama.state
    state.stream_gate = asyncio.Event()
    client = make_openai(production_daemon)
    stream = await client.chat.completions.create(model="llama3.2+notes", messages=question(), stream=True)
    first = await anext(aiter(stream))
    assert first.choices[0].delta.content
    await stream.close()
    await client.close()
    await asyncio.wait_for(state.client_gone.wait(), 10)
    assert state.client_disconnects == 1 and not state.stream_gate.is_set()

