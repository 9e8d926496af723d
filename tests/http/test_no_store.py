"""Answers are never cached: every response of the real daemon that can carry note text
or a token says ``Cache-Control: no-store`` (native, Ollama- and OpenAI-compatible, their
streams, errors, and MCP on its own port); only the web page's files choose their own
caching (they hold no note text)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio

from tests.conftest import daemon_with_mcp_port
from tests.runners import Daemon

pytestmark = pytest.mark.asyncio(loop_scope="module")

TOKEN = "cache-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MCP_INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cache-test", "version": "1"}},
}  # fmt: skip
CHAT = {"model": "llama3.2", "messages": [{"role": "user", "content": "what about bread hydration?"}]}

# (method, path, JSON body or None)
ROUTES = [
    ("GET", "/status", None),
    ("GET", "/search?q=bread", None),
    ("POST", "/similar", {"text": "bread hydration"}),
    ("GET", "/suggest-links/rejections", None),
    ("GET", "/nodes/no-such-node", None),  # an error
    ("GET", "/openapi.json", None),
    ("POST", "/api/chat", {**CHAT, "stream": False}),
    ("POST", "/api/chat", {**CHAT, "model": "llama3.2+notes"}),  # NDJSON stream
    ("GET", "/api/tags", None),
    ("POST", "/v1/chat/completions", CHAT),
    ("POST", "/v1/chat/completions", {**CHAT, "model": "llama3.2+notes", "stream": True}),  # SSE
    ("GET", "/v1/models", None),
]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def served(tmp_path_factory) -> AsyncIterator[tuple[Daemon, int]]:
    async with daemon_with_mcp_port(tmp_path_factory.mktemp("nostore"), token=TOKEN) as (daemon, mcp_port, _):
        yield daemon, mcp_port


@pytest.mark.parametrize("method,path,body", ROUTES, ids=[f"{m} {p} {i}" for i, (m, p, _) in enumerate(ROUTES)])
async def test_answers_say_no_store(served, method, path, body):
    daemon, _ = served
    async with aiohttp.ClientSession(headers=AUTH) as session:
        async with session.request(method, daemon.url + path, json=body) as resp:
            await resp.read()
            assert resp.status < 500, (resp.status, await resp.text())
            assert resp.headers.get("Cache-Control") == "no-store", (resp.status, dict(resp.headers))


async def test_a_refused_request_says_no_store(served):
    daemon, _ = served
    async with aiohttp.ClientSession() as session:
        async with session.get(daemon.url + "/search?q=bread") as resp:
            assert resp.status == 401
            assert resp.headers.get("Cache-Control") == "no-store"


async def test_mcp_answers_say_no_store(served):
    _, mcp_port = served
    headers = {**AUTH, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    async with aiohttp.ClientSession() as session:
        async with session.post(f"http://127.0.0.1:{mcp_port}/mcp", data=json.dumps(MCP_INIT), headers=headers) as resp:
            await resp.read()
            assert resp.status == 200
            assert resp.headers.getall("Cache-Control") == ["no-store"], dict(resp.headers)
        async with session.post(f"http://127.0.0.1:{mcp_port}/mcp", data=json.dumps(MCP_INIT)) as resp:
            assert resp.status == 401
            assert resp.headers.get("Cache-Control") == "no-store"


async def test_the_page_and_its_assets_keep_their_caching(served):
    daemon, _ = served
    async with aiohttp.ClientSession() as session:
        async with session.get(daemon.url + "/") as resp:
            page = await resp.text()
            assert resp.status == 200 and resp.headers["Cache-Control"] == "no-cache"
        asset = re.search(r'src="(/static/[\w.-]+\?v=\w+)"', page)[1]
        async with session.get(daemon.url + asset) as resp:
            assert resp.status == 200 and resp.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        async with session.get(daemon.url + asset.split("?")[0]) as resp:
            assert resp.status == 200 and resp.headers["Cache-Control"] == "no-cache"
