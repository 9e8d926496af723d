"""/ask, /summarize and /converse over HTTP, against the fake Ollama (its chat records
every prompt it receives)."""

from __future__ import annotations

import asyncio
import json
import re

import aiohttp
import pytest
from aiohttp import web

from arcology_oracle.http.app import create_app
from arcology_oracle.http.keys import ready_key, worker_key
from tests.org_samples import IDS, SECRET_WORDS

NDJSON = {"Accept": "application/x-ndjson"}


def system_prompt(fake, i: int = -1) -> str:
    return fake.state.chats[i][0]["content"]


async def read_line(resp) -> dict:
    line = await asyncio.wait_for(resp.content.readline(), 10)
    assert line, "stream ended early"
    return json.loads(line)


async def test_ask_json_answer_cites_sources(client, fake_ollama):
    resp = await client.post("/ask", json={"question": "how do I feed my sourdough starter?"})
    assert resp.status == 200, await resp.text()
    data = await resp.json()
    assert data["used_notes"] is True
    ids = [s["node_id"] for s in data["sources"]]
    assert IDS["starter"] in ids
    for s in data["sources"]:
        assert set(s) >= {"n", "node_id", "title", "heading", "file", "line", "score"}
    assert [s["n"] for s in data["sources"]] == list(range(1, len(ids) + 1))
    # The fake cites every [n] it sees: exactly the sources given.
    assert data["answer"].startswith("Based on your notes " + " ".join(f"[{n}]" for n in range(1, len(ids) + 1)))
    assert "feed it with equal weights of flour and water" in system_prompt(fake_ollama)


async def test_ask_ndjson_streams_incrementally(client, fake_ollama):
    fake_ollama.state.stream_gate = asyncio.Event()
    resp = await client.post("/ask", json={"question": "sqlite covering index"}, headers=NDJSON)
    assert resp.status == 200
    assert resp.headers["Content-Type"].startswith("application/x-ndjson")
    head = await read_line(resp)
    assert head["type"] == "sources" and head["used_notes"] is True
    assert any(s["node_id"] == IDS["covering_indexes"] for s in head["sources"])
    first = await read_line(resp)
    # The model is still held after its first piece: the token got here before it finished.
    assert first["type"] == "token" and first["text"]
    assert not fake_ollama.state.stream_gate.is_set()
    fake_ollama.state.stream_gate.set()
    events = [first]
    while True:
        event = await read_line(resp)
        events.append(event)
        if event["type"] != "token":
            break
    assert events[-1] == {"type": "done"}
    text = "".join(e["text"] for e in events[:-1])
    assert text.startswith("Based on your notes [1]")


async def test_ask_stream_flag_without_accept_header(client):
    resp = await client.post("/ask", json={"question": "tomato blight", "stream": True})
    lines = [json.loads(line) for line in (await resp.text()).splitlines()]
    assert lines[0]["type"] == "sources" and lines[-1]["type"] == "done"


async def test_get_ask_plain_text_streams_then_lists_sources(client, fake_ollama):
    fake_ollama.state.stream_gate = asyncio.Event()
    resp = await client.get("/ask", params={"q": "door affordance signifier"})
    assert resp.status == 200
    assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"
    first = await asyncio.wait_for(resp.content.readany(), 10)
    assert first.decode().startswith("Based")
    assert not fake_ollama.state.stream_gate.is_set()
    fake_ollama.state.stream_gate.set()
    rest = (first + await resp.content.read()).decode()
    answer, _, sources = rest.partition("\n\nSources:\n")
    assert answer.startswith("Based on your notes [1]")
    assert f"<id:{IDS['affordances']}>" in sources
    assert sources.splitlines()[0].startswith("[1] ")


async def test_gate_without_relevant_notes_says_none_used(client, fake_ollama):
    resp = await client.get("/ask", params={"q": "who won the football world cup in 1998"})
    text = await resp.text()
    assert "Sources: none" in text
    assert "<note" not in system_prompt(fake_ollama)
    resp = await client.post("/ask", json={"question": "who won the football world cup in 1998"})
    data = await resp.json()
    assert data["used_notes"] is False and data["sources"] == []


async def test_missing_model_is_503_naming_host_and_model(client, fake_ollama):
    resp = await client.post("/ask", json={"question": "sourdough", "model": "no-such-model"}, headers=NDJSON)
    assert resp.status == 503
    body = await resp.json()
    assert body["ok"] is False and "no-such-model" in body["error"] and fake_ollama.url in body["error"]
    # The fact a client acts on, not only words for people (Emacs says to pull it first).
    assert body["missing_model"] == "no-such-model", body


async def test_progress_says_the_notes_found_before_the_model_begins(client, fake_ollama):
    # The web page's ask: "found" comes while the model has not said a word (here it hangs).
    fake_ollama.state.configure({"fault_paths": ["/api/chat"], "hang": True, "hang_max": 3600})
    try:
        # The headers come before the model's first words (not waited for: a hung model hangs this).
        asking = client.post("/ask", json={"question": "sqlite covering index", "progress": True}, headers=NDJSON)
        resp = await asyncio.wait_for(asking, 10)
        assert resp.status == 200, await resp.text()
        found = await read_line(resp)
        assert found == {"type": "found", "count": found["count"], "used_notes": True, "mode": "vector"}
        assert found["count"] > 0
        await asyncio.wait_for(fake_ollama.state.hanging.wait(), 10)
    finally:
        fake_ollama.state.configure({"hang": False})
        fake_ollama.state.release()
    lines = [json.loads(line) for line in (await resp.content.read()).splitlines()]
    assert lines[0]["type"] == "sources" and len(lines[0]["sources"]) == found["count"]
    assert [e["type"] for e in lines[1:-1]] == ["token"] * (len(lines) - 2) and lines[-1] == {"type": "done"}

    # Begun with "found", a model that cannot answer is an error event (without progress: a 503, above).
    body = {"question": "sourdough", "model": "no-such-model", "progress": True}
    resp = await client.post("/ask", json=body, headers=NDJSON)
    lines = [json.loads(line) for line in (await resp.text()).splitlines()]
    assert resp.status == 200 and [e["type"] for e in lines] == ["found", "error"], lines
    assert "no-such-model" in lines[1]["message"] and fake_ollama.url in lines[1]["message"]
    assert lines[1]["missing_model"] == "no-such-model", lines


async def test_progress_client_leaving_before_the_model_begins_cancels_it(client, fake_ollama):
    fake_ollama.state.configure({"fault_paths": ["/api/chat"], "hang": True, "hang_max": 3600})
    try:
        # The headers come before the model's first words (not waited for: a hung model hangs this).
        asking = client.post("/ask", json={"question": "sourdough starter", "progress": True}, headers=NDJSON)
        resp = await asyncio.wait_for(asking, 10)
        assert (await read_line(resp))["type"] == "found"
        await asyncio.wait_for(fake_ollama.state.hanging.wait(), 10)
        resp.close()
        await asyncio.wait_for(fake_ollama.state.client_gone.wait(), 10)
        assert fake_ollama.state.client_disconnects == 1
    finally:
        fake_ollama.state.release()


async def test_ollama_down_is_503(client, fake_ollama):
    await fake_ollama.stop()
    resp = await client.get("/ask", params={"q": "sourdough starter"})
    assert resp.status == 503
    body = await resp.json()
    assert "127.0.0.1" in body["error"] and "llama3.2" in body["error"]
    assert "missing_model" not in body, body  # down is not a model to pull


async def test_error_midway_becomes_error_event(client, fake_ollama):
    fake_ollama.state.chat_error_midway = 2
    resp = await client.post("/ask", json={"question": "sourdough starter"}, headers=NDJSON)
    assert resp.status == 200
    lines = [json.loads(line) for line in (await resp.text()).splitlines()]
    assert lines[0]["type"] == "sources"
    assert lines[1]["type"] == "token"
    assert lines[-1]["type"] == "error" and "fake failure" in lines[-1]["message"]


async def test_client_disconnect_cancels_generation(client, fake_ollama):
    fake_ollama.state.stream_gate = asyncio.Event()
    resp = await client.post("/ask", json={"question": "sourdough starter"}, headers=NDJSON)
    await read_line(resp)
    await read_line(resp)
    resp.close()  # drop the connection mid-answer
    await asyncio.wait_for(fake_ollama.state.client_gone.wait(), 10)
    assert fake_ollama.state.client_disconnects == 1


async def test_disconnect_cancels_without_handler_cancellation(settings, fake_ollama):
    """As served by ``web.run_app`` (no handler_cancellation), not the test server."""
    app = create_app(settings, watch=False)
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        await asyncio.wait_for(app[ready_key].wait(), 30)
        await asyncio.wait_for(app[worker_key].idle.wait(), 30)
        port = site._server.sockets[0].getsockname()[1]
        fake_ollama.state.stream_gate = asyncio.Event()
        async with aiohttp.ClientSession() as session:
            resp = await session.get(f"http://127.0.0.1:{port}/ask", params={"q": "sourdough starter"})
            assert (await asyncio.wait_for(resp.content.readany(), 10)).startswith(b"Based")
            resp.close()
        await asyncio.wait_for(fake_ollama.state.client_gone.wait(), 10)
    finally:
        await runner.cleanup()


async def test_ask_with_buffer_only(client, fake_ollama):
    buffer = "* Greenhouse log\nThe tomato leaves have brown patches after the wet weather; blight again?"
    resp = await client.post("/ask", json={"buffer": buffer})
    data = await resp.json()
    assert resp.status == 200 and data["used_notes"]
    assert IDS["blight"] in [s["node_id"] for s in data["sources"]]
    user = fake_ollama.state.chats[-1][1]["content"]
    assert "<buffer>" in user and "Greenhouse log" in user


async def test_ask_at_point_leaves_out_the_note_at_point(client, fake_ollama):
    resp = await client.post("/ask", json={"file": "rust-ownership.org", "line": 15})
    data = await resp.json()
    assert resp.status == 200, data
    ids = [s["node_id"] for s in data["sources"]]
    assert IDS["move_semantics"] not in ids
    assert "Move semantics" in fake_ollama.state.chats[-1][1]["content"]


@pytest.mark.parametrize(
    "body, status",
    [({}, 400), ({"question": 3}, 400), ({"question": "x", "k": 0}, 400), ({"question": "x", "file": "../etc"}, 400)],
)
async def test_ask_bad_requests(client, body, status):
    resp = await client.post("/ask", json=body)
    assert resp.status == status
    assert (await resp.json())["ok"] is False


async def test_summarize_caches_generic_summary(client, fake_ollama):
    resp = await client.post("/summarize", json={"node": IDS["rust_ownership"]})
    first = await resp.json()
    assert resp.status == 200 and first["cached"] is False
    assert first["sources"][0]["node_id"] == IDS["rust_ownership"]
    calls = fake_ollama.state.count("/api/chat")
    resp = await client.post("/summarize", json={"node": IDS["rust_ownership"]})
    second = await resp.json()
    assert second["cached"] is True and second["summary"] == first["summary"]
    assert fake_ollama.state.count("/api/chat") == calls


async def test_summarize_stream_and_errors(client, fake_ollama):
    resp = await client.post("/summarize", json={"file": "sqlite-indexing.org"}, headers=NDJSON)
    lines = [json.loads(line) for line in (await resp.text()).splitlines()]
    assert lines[0]["type"] == "sources" and lines[0]["cached"] is False and lines[-1]["type"] == "done"
    assert (await client.post("/summarize", json={"node": "nope"})).status == 404
    assert (await client.post("/summarize", json={})).status == 400


async def test_summarize_question_only(client, fake_ollama):
    resp = await client.post("/summarize", json={"question": "rust borrow checker lifetimes"})
    data = await resp.json()
    assert resp.status == 200 and data["used_notes"]
    n = len(data["sources"])
    assert n >= 2
    # One contextual summary per note, then one that puts them together.
    assert fake_ollama.state.count("/api/chat") == n + 1
    assert data["summary"].startswith("Based on your notes [1]")


async def test_converse_returns_heading_with_working_links(client, fake_ollama):
    org = "* Bread questions\n** How wet should a sourdough dough be?\n"
    resp = await client.post("/converse", json={"org": org})
    data = await resp.json()
    assert resp.status == 200, data
    heading = data["org"]
    assert heading.startswith("** ")
    assert ":ROLE:     oracle" in heading and ":ORACLE_MODEL: llama3.2" in heading
    links = [s["node_id"] for s in data["sources"]]
    assert links
    # Cited in a property and a readable list, not as links: no org-roam backlinks.
    cited = re.search(r"^:SOURCES: +(.+)$", heading, re.M)[1].split()
    assert "[[id:" not in heading and "\nSources:\n- [1] " in heading
    # Each an ID with where its heading is (ID::REL::LINE), or file:REL::LINE.
    cited_nodes = [c.split("::")[0] for c in cited if not c.startswith("file:")]
    for node in links:
        assert node in cited_nodes or any(c.startswith("file:") for c in cited), (node, cited)
        assert (await client.get(f"/nodes/{node}")).status == 200
    for source, c in zip(data["sources"], cited):
        assert c == (f"{source['node_id']}::{source['file']}::{source['line']}" if source["node_id"]
                     else f"file:{source['file']}::{source['line']}")  # fmt: skip
    for node in cited_nodes:
        assert (await client.get(f"/nodes/{node}")).status == 200


async def test_privacy_over_http(client, fake_ollama):
    """No route puts private, crypt or excluded text into a prompt, even when asked for it
    by name (the question itself is the only place the word may appear)."""
    requests = []
    for word in SECRET_WORDS:
        question = f"what did I write about {word}?"
        requests += [
            ("post", "/ask", {"json": {"question": question}}, question),
            ("get", "/ask", {"params": {"q": word}}, word),
            ("post", "/summarize", {"json": {"question": question}}, question),
            ("post", "/ask", {"json": {"question": "", "buffer": f"notes on {word}"}}, f"notes on {word}"),
        ]
    for path in ("journal/2024-03-01.org", "emacs-config.org", "projects/arcology.org"):
        requests.append(("post", "/summarize", {"json": {"file": path}}, None))
    chats = 0
    for method, path, kw, question in requests:
        fake_ollama.state.clear_records()
        resp = await getattr(client, method)(path, **kw)
        assert resp.status in (200, 404), await resp.text()
        await resp.read()
        for messages in fake_ollama.state.chats:
            chats += 1
            for m in messages:
                content = m["content"].replace(question, "") if question else m["content"]
                for word in SECRET_WORDS:
                    assert word not in content, (path, kw)
    assert chats >= 3 * len(SECRET_WORDS)  # the gated summaries make no call


async def test_auth_applies(make_settings, fake_ollama, make_client):
    client = await make_client(make_settings(ollama_host=fake_ollama.url, token="s3cret"))
    assert (await client.get("/ask", params={"q": "x"})).status == 401
    resp = await client.get("/ask", params={"q": "sourdough"}, headers={"Authorization": "Bearer s3cret"})
    assert resp.status == 200
