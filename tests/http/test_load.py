"""The real daemon under concurrent load, while the watcher re-indexes edits.

Bounded here (50 clients for about three seconds) and checked for correctness only: no
5xx, no exception, every stream ends with ``done``, edits keep becoming searchable. The
latency bound and memory stability are measured by ``bench/load.py`` (no wall-clock
asserts in the suite). A client that drops a streaming ``/ask`` must free what it held:
the upstream generation is cancelled and the daemon's sockets go back to what they were.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections import Counter
from contextlib import aclosing

import aiohttp
import pytest

from arcology_oracle.ollama.chat import OllamaChat
from tests.corpus_tools import Corpus, write_corpus
from tests.org_samples import EXAMPLE_QUERIES, IDS
from tests.runners import Daemon, start_daemon, wait_until

pytestmark = pytest.mark.timeout(120)

CLIENTS = 50
SECONDS = 3.0
NDJSON = {"Accept": "application/x-ndjson"}


async def check_ask_stream(resp: aiohttp.ClientResponse) -> str | None:
    """None if ``resp`` is a well-formed /ask NDJSON stream ending with done, else why not."""
    if resp.status != 200:
        return f"/ask status {resp.status}: {(await resp.text())[:200]}"
    types = []
    async for raw in resp.content:
        if raw.strip():
            event = json.loads(raw)
            types.append(event["type"])
            if event["type"] == "error":
                return f"/ask error event: {event}"
    if not types or types[0] != "sources" or types[-1] != "done" or set(types[1:-1]) - {"token"}:
        return f"/ask malformed stream: {types}"
    return None


async def one_request(session: aiohttp.ClientSession, url: str, kind: str, rng: random.Random) -> str | None:
    """Send one request of ``kind``; None if it was answered correctly, else what went wrong."""
    query = rng.choice(list(EXAMPLE_QUERIES))
    if kind == "ask":
        body = {"question": query, "stream": True}
        async with session.post(url + "/ask", json=body, headers=NDJSON) as resp:
            return await check_ask_stream(resp)
    if kind == "search":
        request = session.get(url + "/search", params={"q": query, "k": "10"})
    elif kind == "similar":
        if rng.random() < 0.5:
            request = session.get(url + "/similar", params={"node": rng.choice(list(IDS.values())), "k": "5"})
        else:
            request = session.post(url + "/similar", json={"text": query, "k": 5})
    else:
        request = session.get(url + "/status")
    async with request as resp:
        data = await resp.json()
        if resp.status != 200:
            return f"{kind} status {resp.status}: {data}"
        if kind in ("search", "similar") and not isinstance(data.get("results"), list):
            return f"{kind} without results: {data}"
    return None


async def run_clients(url: str, headers: dict, *, clients: int, seconds: float, seed: int = 0):
    """``clients`` concurrent loops of mixed requests for ``seconds``; returns (counts, errors)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    counts: Counter = Counter()
    errors: list[str] = []
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(headers=headers, connector=connector) as session:

        async def client(i: int) -> None:
            rng = random.Random(seed * 1000 + i)
            kinds = ("search", "similar", "status", "ask")
            while loop.time() < deadline:
                kind = kinds[(i + counts.total()) % 4]
                try:
                    problem = await one_request(session, url, kind, rng)
                except Exception as exc:  # noqa: BLE001 - every failure is reported
                    problem = f"{kind}: {type(exc).__name__}: {exc}"
                counts[kind] += 1
                if problem:
                    errors.append(problem)

        await asyncio.gather(*(client(i) for i in range(clients)))
    return counts, errors


async def searchable(daemon: Daemon, word: str, rel: str) -> bool:
    code, body = await daemon.get_json("/search", q=word, k="3")
    return code == 200 and any(r["file"] == rel for r in body["results"])


async def keep_editing(daemon: Daemon, corpus: Corpus, stop: asyncio.Event) -> list[str]:
    """Rewrite one note at a time and wait until the daemon finds its new word."""
    edited = []
    while not stop.is_set():
        rel = corpus.rng.choice(sorted(corpus.files))
        corpus.rewrite(rel)
        await wait_until(lambda: searchable(daemon, corpus.files[rel], rel), timeout=30, interval=0.05)
        edited.append(rel)
    return edited


@pytest.fixture
async def loaded_daemon(tmp_path, roam_dir, fake_ollama):
    corpus = write_corpus(roam_dir / "gen", 30, seed=3)
    corpus.files = {f"gen/{rel}": w for rel, w in corpus.files.items()}
    corpus.root = roam_dir
    fake_ollama.state.delay_per_piece = 0.005  # streams overlap with other requests
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url)

    async def settled():
        _, st = await daemon.get_json("/status")
        return "initial index of" in daemon.log() and st["pending"] == 0 and st["embedder"]["reachable"]

    await wait_until(settled, timeout=60, interval=0.05)
    yield daemon, corpus
    daemon.stop()


async def test_fifty_clients_while_the_watcher_reindexes(loaded_daemon):
    daemon, corpus = loaded_daemon
    stop = asyncio.Event()
    editor = asyncio.create_task(keep_editing(daemon, corpus, stop))
    try:
        counts, errors = await run_clients(daemon.url, daemon.headers, clients=CLIENTS, seconds=SECONDS)
    finally:
        stop.set()
        edited = await editor
    assert errors == []
    assert set(counts) == {"search", "similar", "status", "ask"} and counts.total() >= CLIENTS
    assert edited, "the watcher re-indexed edits during the load"
    assert daemon.proc.poll() is None
    for rel in set(edited):
        assert await searchable(daemon, corpus.files[rel], rel)


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def test_dropped_streams_free_their_resources(loaded_daemon, fake_ollama):
    daemon, _ = loaded_daemon
    state = fake_ollama.state
    drops = 10
    # Warm up at the same concurrency so connection pools are as full as they will get.
    counts, errors = await run_clients(daemon.url, daemon.headers, clients=drops, seconds=0.5, seed=1)
    assert errors == []
    baseline = open_fds(daemon.proc.pid)

    state.stream_gate = asyncio.Event()  # every answer stops after its first piece
    state.clear_records()
    async with aiohttp.ClientSession(headers=daemon.headers) as session:
        responses = []
        for i in range(drops):
            body = {"question": list(EXAMPLE_QUERIES)[i % len(EXAMPLE_QUERIES)], "stream": True}
            resp = await session.post(daemon.url + "/ask", json=body, headers=NDJSON)
            assert resp.status == 200
            assert json.loads(await resp.content.readline())["type"] == "sources"
            assert json.loads(await resp.content.readline())["type"] == "token"
            responses.append(resp)
        assert state.count("/api/chat") == drops
        for resp in responses:
            resp.close()  # drop the connection mid-answer

    # Each upstream generation is cancelled (the fake sees its client leave) ... At least
    # `drops`: a keep-alive connection of the warm-up closing late can count once more.
    await wait_until(lambda: state.client_disconnects >= drops, timeout=20)
    # ... and the daemon's sockets to the clients and to Ollama are closed again.
    await wait_until(lambda: open_fds(daemon.proc.pid) <= baseline, timeout=20)

    state.stream_gate = None
    counts, errors = await run_clients(daemon.url, daemon.headers, clients=drops, seconds=0.5, seed=2)
    assert errors == [] and counts["ask"] > 0
    assert daemon.proc.poll() is None


async def test_stream_closed_while_a_cancel_is_pending_releases_its_connection(make_settings, fake_ollama):
    """The race behind dropped /ask streams that wedge the daemon (bench/load.py --drop-every 2):
    the client leaves, the disconnect watcher cancels the handler, and at the same moment the
    handler's write fails and it closes the model's stream. Ollama must still be told."""
    state = fake_ollama.state
    state.stream_gate = asyncio.Event()  # every answer waits after its first piece
    chat = OllamaChat(make_settings(ollama_host=fake_ollama.url))

    async def handler() -> None:
        async with aclosing(chat.stream_chat([{"role": "user", "content": "sourdough starter"}])) as pieces:
            async for _ in pieces:
                asyncio.current_task().cancel()  # the disconnect watcher fires ...
                raise ConnectionResetError("Cannot write to closing transport")  # ... as the write fails

    try:
        for _ in range(3):
            with pytest.raises((asyncio.CancelledError, ConnectionResetError)):
                await asyncio.create_task(handler())
        await wait_until(lambda: state.client_disconnects == 3, timeout=2)
    finally:
        await chat.close()
