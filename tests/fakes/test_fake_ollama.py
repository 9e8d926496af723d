"""The fake Ollama server, exercised through the official ``ollama`` client over real TCP."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import sys

import httpx
import ollama
import pytest

from tests.fakes.fake_ollama import (
    FakeOllamaState,
    cosine,
    fake_embedding,
    fake_reply,
    make_app,
    make_state,
    running_fake_ollama,
    split_pieces,
)
from tests.runners import REPO

TIMEOUT = httpx.Timeout(10, connect=5)
SOURCES_PROMPT = [
    {"role": "system", "content": "Answer from these notes.\n[1] Sourdough\nbread text\n[2] Rye\nmore text"},
    {"role": "user", "content": "How wet should my sourdough dough be?"},
]


@pytest.fixture
def state() -> FakeOllamaState:
    return make_state()


@pytest.fixture
async def url(aiohttp_server, state) -> str:
    server = await aiohttp_server(make_app(state))
    return str(server.make_url("")).rstrip("/")


@pytest.fixture
async def client(url):
    async with ollama.AsyncClient(host=url, timeout=TIMEOUT) as c:
        yield c


@pytest.fixture
async def http(url):
    async with httpx.AsyncClient(base_url=url, timeout=TIMEOUT) as h:
        yield h


# ------------------------------------------------------------------ embeddings


def test_related_texts_are_closer_than_unrelated():
    bread = fake_embedding("sourdough bread hydration")
    assert cosine(bread, fake_embedding("bread dough hydration levels")) > cosine(
        bread, fake_embedding("rust borrow checker")
    )
    assert abs(cosine(bread, fake_embedding("rust borrow checker"))) < 0.3


def test_embedding_ignores_task_prefix_case_and_plurals():
    assert fake_embedding("search_query: Sourdough Breads") == fake_embedding("sourdough bread")
    assert fake_embedding("search_document: notes") == fake_embedding("search_result: note")


def test_embedding_is_unit_length_and_stable_across_processes():
    vec = fake_embedding("Zettelkasten über alles", 16)
    assert len(vec) == 16
    assert sum(x * x for x in vec) == pytest.approx(1.0)
    # A golden digest: Python's hash() randomisation must not leak into the vectors.
    digest = hashlib.sha256(json.dumps([round(x, 6) for x in vec]).encode()).hexdigest()[:16]
    assert digest == GOLDEN_DIGEST


def test_empty_text_gives_a_fixed_unit_vector():
    assert fake_embedding("", 4) == [1.0, 0.0, 0.0, 0.0]
    assert fake_embedding("the of and", 4) == [1.0, 0.0, 0.0, 0.0]


async def test_embed_batch(client, state):
    texts = ["search_document: sourdough bread hydration", "bread dough hydration levels", "rust borrow checker"]
    response = await client.embed("nomic-embed-text", input=texts)
    assert [len(v) for v in response.embeddings] == [256, 256, 256]
    assert response.embeddings[0] == pytest.approx(fake_embedding(texts[0], 256))
    assert response.model == "nomic-embed-text"
    assert response.prompt_eval_count > 0
    assert state.requests["/api/embed"][0]["input"] == texts
    assert (state.embed_texts_total, state.embed_batches, state.embedded_texts) == (3, [3], texts)

    single = await client.embed("all-minilm", input="one text")
    assert len(single.embeddings) == 1 and len(single.embeddings[0]) == 384
    assert state.embed_batches == [3, 1]


async def test_a_vectors_backend_computes_the_embeddings(client, state, http):
    """The benchmarks' backends (bench/st_ollama.py) replace fake_embedding; /_fake/stats
    counts what was embedded without sending the recorded bodies."""
    state.vectors = lambda texts: [[float(len(t)), 1.0] for t in texts]
    response = await client.embed("nomic-embed-text", input=["ab", "abcd"])
    assert response.embeddings == [[2.0, 1.0], [4.0, 1.0]]
    stats = (await http.get("/_fake/stats")).json()
    assert stats == {"counts": {"/api/embed": 1}, "embed_texts_total": 2, "embed_batches": [2]}


async def test_legacy_embeddings_endpoint(client):
    response = await client.embeddings("nomic-embed-text", prompt="bread")
    assert response.embedding == pytest.approx(fake_embedding("bread", 256))


async def test_truncate_false_rejects_over_long_input(client, state):
    state.model("all-minilm").context_length = 5
    with pytest.raises(ollama.ResponseError) as exc:
        await client.embed("all-minilm", input="one two three four five six", truncate=False)
    assert exc.value.status_code == 400
    truncated = await client.embed("all-minilm", input="one two three four five six")
    assert truncated.embeddings[0] == pytest.approx(fake_embedding("one two three four five", 384))


# ------------------------------------------------------------------ chat and generate


async def test_chat_without_stream_cites_sources(client, state):
    response = await client.chat("llama3.2", messages=SOURCES_PROMPT)
    assert response.done and response.done_reason == "stop"
    assert response.message.content == "Based on your notes [1] [2]: How wet should my sourdough dough be?"
    assert response.message.content == fake_reply(SOURCES_PROMPT)
    assert state.chats == [SOURCES_PROMPT]
    assert state.requests["/api/chat"][0]["stream"] is False


async def test_chat_streams_word_by_word(client):
    parts = [p async for p in await client.chat("qwen2.5:7b", messages=SOURCES_PROMPT, stream=True)]
    pieces = [p.message.content for p in parts[:-1]]
    assert pieces == split_pieces(fake_reply(SOURCES_PROMPT)) and len(pieces) > 3
    assert not any(p.done for p in parts[:-1])
    last = parts[-1]
    assert (last.done, last.done_reason, last.message.content) == (True, "stop", "")
    assert last.eval_count == len(pieces) and last.prompt_eval_count > 0


async def test_chat_stream_is_ndjson_by_default(http):
    body = {"model": "llama3.2", "messages": [{"role": "user", "content": "hi"}]}
    response = await http.post("/api/chat", json=body)
    assert response.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert lines[-1]["done"] is True and all(not line["done"] for line in lines[:-1])


TOOL = {
    "type": "function",
    "function": {
        "name": "search_notes",
        "description": "Search the notes",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    },
}


@pytest.mark.parametrize("stream", [False, True])
async def test_chat_tool_calls_then_quotes_the_results(client, state, stream):
    """With ``chat_tool_calls``, a chat offering tools is answered with those calls (as
    the ollama client parses them); once a tool result comes back, the reply quotes it."""
    state.configure({"chat_tool_calls": [{"name": "search_notes", "arguments": {"query": "bread"}}]})
    messages = [{"role": "user", "content": "What do my notes say about bread?"}]

    async def chat(msgs):
        if not stream:
            return [await client.chat("llama3.2", messages=msgs, tools=[TOOL])]
        return [p async for p in await client.chat("llama3.2", messages=msgs, tools=[TOOL], stream=True)]

    parts = await chat(messages)
    calls = [c for p in parts for c in (p.message.tool_calls or [])]
    assert [(c.function.name, dict(c.function.arguments)) for c in calls] == [("search_notes", {"query": "bread"})]
    assert parts[-1].done
    # Without tools in the request, the fake answers with text as before.
    plain = await client.chat("llama3.2", messages=messages)
    assert not plain.message.tool_calls and plain.message.content == fake_reply(messages)
    followup = [
        *messages,
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "search_notes", "arguments": {"query": "bread"}}}]},
        {"role": "tool", "content": "- [[id:abc][Bread Hydration]]"},
    ]  # fmt: skip
    parts = await chat(followup)
    assert "".join(p.message.content or "" for p in parts) == "From the tools: - [[id:abc][Bread Hydration]]"
    assert not any(p.message.tool_calls for p in parts)


async def test_custom_reply_and_num_predict(client, state):
    state.chat_reply = lambda messages: f"{len(messages)} messages seen"
    response = await client.chat("llama3.2", messages=SOURCES_PROMPT)
    assert response.message.content == "2 messages seen"
    state.chat_reply = "one two three four"
    short = await client.chat("llama3.2", messages=SOURCES_PROMPT, options={"num_predict": 2})
    assert (short.message.content, short.done_reason) == ("one two ", "length")


async def test_generate(client, state):
    response = await client.generate("llama3.2", prompt="Summarise [4] please", system="notes: [4] Bread")
    assert response.response == "Based on your notes [4]: Summarise [4] please"
    parts = [p async for p in await client.generate("llama3.2", prompt="hello world", stream=True)]
    assert "".join(p.response for p in parts) == "I found nothing in your notes: hello world"
    assert parts[-1].done and state.count("/api/generate") == 2


async def test_empty_prompt_just_loads_the_model(client):
    response = await client.generate("llama3.2")
    assert (response.done_reason, response.response) == ("load", "")


# ------------------------------------------------------------------ metadata


async def test_list_show_version_root(client, http):
    names = [m.model for m in (await client.list()).models]
    assert names == ["nomic-embed-text:latest", "all-minilm:latest", "llama3.2:latest", "qwen2.5:7b"]
    shown = await client.show("nomic-embed-text")
    arch = shown.modelinfo["general.architecture"]
    assert shown.modelinfo[f"{arch}.embedding_length"] == 256
    assert shown.capabilities == ["embedding"]
    assert (await client.show("qwen2.5:7b")).capabilities == ["completion"]
    assert (await http.get("/api/version")).json()["version"].startswith("0.6.")
    assert (await http.get("/")).text == "Ollama is running"
    assert (await http.head("/")).status_code == 200


async def test_unknown_model_is_404_like_ollama(client, http):
    with pytest.raises(ollama.ResponseError) as exc:
        await client.embed("nope", input=["x"])
    assert exc.value.status_code == 404
    assert exc.value.error == 'model "nope" not found, try pulling it first'
    with pytest.raises(ollama.ResponseError) as exc:
        _ = [p async for p in await client.chat("nope", messages=SOURCES_PROMPT, stream=True)]
    assert exc.value.status_code == 404
    with pytest.raises(ollama.ResponseError) as exc:
        await client.show("nope")
    assert exc.value.status_code == 404


async def test_models_reject_the_wrong_task(client):
    with pytest.raises(ollama.ResponseError) as exc:
        await client.chat("nomic-embed-text", messages=SOURCES_PROMPT)
    assert (exc.value.status_code, exc.value.error) == (400, '"nomic-embed-text" does not support chat')
    with pytest.raises(ollama.ResponseError) as exc:
        await client.embed("llama3.2", input="x")
    assert exc.value.status_code == 400


async def test_bad_json_is_400(http, state):
    response = await http.post("/api/embed", content=b"{not json")
    assert response.status_code == 400 and "error" in response.json()
    assert state.count("/api/embed") == 0


async def test_models_can_change_at_run_time(client, state):
    state.remove_model("nomic-embed-text")
    with pytest.raises(ollama.ResponseError):
        await client.embed("nomic-embed-text", input="x")
    state.add_model("nomic-embed-text", dims=768)
    assert len((await client.embed("nomic-embed-text:latest", input="x")).embeddings[0]) == 768


# ------------------------------------------------------------------ faults


async def test_fail_status(client, state):
    state.fail_status, state.fail_count = 500, 1
    with pytest.raises(ollama.ResponseError) as exc:
        await client.embed("nomic-embed-text", input=["a"])
    assert exc.value.status_code == 500
    assert len((await client.embed("nomic-embed-text", input=["a"])).embeddings) == 1
    assert state.embed_texts_total == 2  # failed requests are counted too


async def test_fault_paths_limit_faults(client, state):
    state.fail_status, state.fault_paths = 503, {"/api/chat"}
    assert (await client.embed("nomic-embed-text", input="a")).embeddings
    with pytest.raises(ollama.ResponseError):
        await client.chat("llama3.2", messages=SOURCES_PROMPT)


async def test_garbage(client, state):
    state.garbage = True
    with pytest.raises(ValueError):
        await client.embed("nomic-embed-text", input=["a"])
    with pytest.raises(ValueError):
        _ = [p async for p in await client.chat("llama3.2", messages=SOURCES_PROMPT, stream=True)]


async def test_wrong_dims(client, state):
    state.wrong_dims = 7
    assert len((await client.embed("nomic-embed-text", input=["a"])).embeddings[0]) == 7
    assert (await client.show("nomic-embed-text")).modelinfo["nomic-bert.embedding_length"] == 256


async def test_hang_times_out_the_client(url, state):
    state.hang = True
    async with ollama.AsyncClient(host=url, timeout=httpx.Timeout(0.2, connect=5)) as short:
        with pytest.raises(httpx.ReadTimeout):
            await short.embed("nomic-embed-text", input=["a"])
    assert state.hanging.is_set()


async def test_client_leaving_a_hang_is_recorded(url, state):
    state.hang = True
    async with ollama.AsyncClient(host=url, timeout=httpx.Timeout(0.1, connect=5)) as short:
        with pytest.raises(httpx.ReadTimeout):
            await short.chat("llama3.2", messages=SOURCES_PROMPT)
    await state.client_gone.wait()
    assert state.client_disconnects == 1


async def test_client_leaving_a_gated_stream_is_recorded(url, state):
    state.stream_gate = asyncio.Event()
    async with ollama.AsyncClient(host=url, timeout=TIMEOUT) as client:
        stream = await client.chat("llama3.2", messages=SOURCES_PROMPT, stream=True)
        assert (await anext(stream)).message.content == "Based "
        await stream.aclose()
    await state.client_gone.wait()
    assert state.client_disconnects == 1 and not state.stream_gate.is_set()


async def test_released_hang_answers(client, state):
    state.hang = True
    task = asyncio.create_task(client.embed("nomic-embed-text", input=["a"]))
    await state.hanging.wait()
    assert not task.done()
    state.release()
    assert len((await task).embeddings) == 1


async def test_stream_gate_proves_incremental_streaming(client, state):
    state.stream_gate = asyncio.Event()
    stream = await client.chat("llama3.2", messages=SOURCES_PROMPT, stream=True)
    first = await anext(stream)
    assert first.message.content == "Based " and not first.done
    assert not state.stream_gate.is_set()  # the model has not finished: the gate holds it
    state.stream_gate.set()
    rest = [p async for p in stream]
    assert first.message.content + "".join(p.message.content for p in rest) == fake_reply(SOURCES_PROMPT)


async def test_chat_error_midway(client, state):
    state.chat_error_midway = 2
    seen = []
    with pytest.raises(ollama.ResponseError) as exc:
        async for part in await client.chat("llama3.2", messages=SOURCES_PROMPT, stream=True):
            seen.append(part.message.content)
    assert seen == ["Based ", "on "]
    assert "error" in exc.value.error


async def test_chat_abort_midway(client, state):
    state.chat_abort_midway = 1
    seen = []
    with pytest.raises(httpx.TransportError):
        async for part in await client.chat("llama3.2", messages=SOURCES_PROMPT, stream=True):
            seen.append(part.message.content)
    assert seen == ["Based "]


async def test_wait_for_and_parallel(client, state):
    state.parallel = 1
    waiter = asyncio.create_task(state.wait_for("/api/embed", 3))
    await asyncio.gather(*(client.embed("nomic-embed-text", input=[str(i)]) for i in range(3)))
    await waiter
    assert state.embed_batches == [1, 1, 1]


# ------------------------------------------------------------------ control API


async def test_control_api(http, client):
    response = await http.post("/_fake/config", json={"fail_status": 502, "wrong_dims": 3, "stream_gate": True})
    assert response.json()["fail_status"] == 502
    with pytest.raises(ollama.ResponseError) as exc:
        await client.embed("nomic-embed-text", input="a")
    assert exc.value.status_code == 502
    snapshot = (await http.get("/_fake/state")).json()
    assert snapshot["counts"] == {"/api/embed": 1} and snapshot["embed_texts_total"] == 1
    assert snapshot["requests"]["/api/embed"][0]["input"] == "a"
    await http.post("/_fake/config", json={"fail_status": None})
    assert len((await client.embed("nomic-embed-text", input="a")).embeddings[0]) == 3
    assert (await http.post("/_fake/config", json={"bogus": 1})).status_code == 400
    await http.post("/_fake/config", json={"models": [{"name": "bge-m3", "dims": 1024}, "llama3.2"]})
    assert [m.model for m in (await client.list()).models] == ["bge-m3:latest", "llama3.2:latest"]
    assert (await client.show("bge-m3")).capabilities == ["embedding"]
    assert (await client.show("llama3.2")).capabilities == ["completion"]
    reset = (await http.post("/_fake/reset")).json()
    assert [m["name"] for m in reset["models"]][0] == "nomic-embed-text"
    assert reset["wrong_dims"] is None and reset["stream_gate"] is None
    assert (await http.get("/_fake/state")).json()["counts"] == {}


async def test_control_api_hang_and_release(http, client, state):
    await http.post("/_fake/config", json={"hang": True})
    task = asyncio.create_task(client.embed("nomic-embed-text", input="a"))
    await state.hanging.wait()
    await http.post("/_fake/release")
    assert (await task).embeddings


# ------------------------------------------------------------------ own server: down and up


async def test_stop_and_start_on_the_same_port():
    async with running_fake_ollama(dims=32) as fake:
        async with ollama.AsyncClient(host=fake.url, timeout=TIMEOUT) as client:
            assert len((await client.embed("nomic-embed-text", input="a")).embeddings[0]) == 32
            url = fake.url
            await fake.stop()
            with pytest.raises(ConnectionError):
                await client.embed("nomic-embed-text", input="a")
            await fake.start()
            assert fake.url == url
            assert (await client.embed("nomic-embed-text", input="a")).embeddings
    assert fake.state.embed_texts_total == 2  # the refused request never arrived


async def test_stop_aborts_hanging_requests():
    async with running_fake_ollama(hang=True, hang_max=60) as fake:
        async with ollama.AsyncClient(host=fake.url, timeout=TIMEOUT) as client:
            task = asyncio.create_task(client.embed("nomic-embed-text", input="a"))
            await fake.state.hanging.wait()
            await fake.stop()
            with pytest.raises(httpx.TransportError):
                await task


async def test_cli_serves_until_sigterm(tmp_path):
    port_file = tmp_path / "port"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.fakes.fake_ollama", "--port", "0", "--dims", "64",
        "--port-file", str(port_file),
        cwd=REPO, stdout=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    try:
        url = (await proc.stdout.readline()).decode().strip()
        assert url == f"http://127.0.0.1:{port_file.read_text().strip()}"
        async with ollama.AsyncClient(host=url, timeout=TIMEOUT) as client:
            assert len((await client.embed("nomic-embed-text", input="a")).embeddings[0]) == 64
        proc.send_signal(signal.SIGTERM)
        assert await proc.wait() == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


GOLDEN_DIGEST = "571c8538d741d467"
