"""One guard, two ports: the daemon's port and the MCP port (``serve --mcp-port``) answer
the same table of requests the same way, against one real daemon process.

Each row is a JSON POST that reaches a handler when nothing is wrong with it (``/similar``
on the daemon's port, an MCP ``initialize`` on ``/mcp``), changed in one header: Host,
Origin, Fetch Metadata, the token or the Content-Type. ``{port}`` is the port asked.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio

from tests.conftest import daemon_with_mcp_port
from tests.runners import Daemon

pytestmark = pytest.mark.asyncio(loop_scope="module")

TOKEN = "guard-token"
ALLOWED = "mybox.tail-1.ts.net"
MCP_INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "guard-test", "version": "1"}},
}  # fmt: skip
BASE_HEADERS = {
    "Authorization": f"Bearer {TOKEN}",
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",  # MCP's streamable HTTP asks for both
}

# (row id, headers changed from BASE_HEADERS (None: left out), expected status)
ROWS = [
    ("plain", {}, 200),
    # Host: loopback names in any case and any loopback address, the allowed names.
    ("host localhost:port", {"Host": "localhost:{port}"}, 200),
    ("host LOCALHOST", {"Host": "LOCALHOST"}, 200),
    ("host localhost.", {"Host": "localhost."}, 200),
    ("host 127.0.0.2", {"Host": "127.0.0.2"}, 200),
    ("host [::1]:port", {"Host": "[::1]:{port}"}, 200),
    ("host allowed", {"Host": ALLOWED}, 200),
    ("host allowed any case", {"Host": "MyBox.Tail-1.ts.net.:443"}, 200),
    ("host evil.example", {"Host": "evil.example"}, 403),
    ("host evil.example:port", {"Host": "evil.example:{port}"}, 403),
    ("host 127.0.0.1.evil.example", {"Host": "127.0.0.1.evil.example"}, 403),
    ("host localhost.evil", {"Host": "localhost.evil"}, 403),
    ("host userinfo", {"Host": "evil.example:80@127.0.0.1"}, 403),
    ("host other tailnet", {"Host": "mybox.other.ts.net"}, 403),
    # Origin: only the port's own origin (any scheme).
    ("origin own", {"Origin": "http://127.0.0.1:{port}"}, 200),
    ("origin own https", {"Origin": "https://127.0.0.1:{port}"}, 200),
    ("origin localhost:3000", {"Origin": "http://localhost:3000"}, 403),
    ("origin 127.0.0.1:9999", {"Origin": "http://127.0.0.1:9999"}, 403),
    ("origin localhost same port", {"Origin": "http://localhost:{port}"}, 403),
    ("origin evil.example", {"Origin": "http://evil.example"}, 403),
    ("origin null", {"Origin": "null"}, 403),
    ("origin with path", {"Origin": "http://127.0.0.1:{port}/x"}, 403),
    # Fetch Metadata: other sites' requests are refused.
    ("sec-fetch-site cross-site", {"Sec-Fetch-Site": "cross-site"}, 403),
    ("sec-fetch-site same-site", {"Sec-Fetch-Site": "same-site"}, 403),
    ("sec-fetch-site cross-site navigate", {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}, 403),
    ("sec-fetch-site same-origin", {"Sec-Fetch-Site": "same-origin"}, 200),
    # The token.
    ("no token", {"Authorization": None}, 401),
    ("wrong token", {"Authorization": "Bearer wrong"}, 401),
    ("token without Bearer", {"Authorization": TOKEN}, 401),
    ("foreign host before token", {"Host": "evil.example", "Authorization": None}, 403),
    # The Content-Type.
    ("json with charset", {"Content-Type": "Application/JSON; charset=utf-8"}, 200),
    ("no content type", {"Content-Type": None}, 415),
    ("text/plain", {"Content-Type": "text/plain"}, 415),
    ("form", {"Content-Type": "application/x-www-form-urlencoded"}, 415),
    ("multipart", {"Content-Type": "multipart/form-data; boundary=x"}, 415),
    ("jsonx", {"Content-Type": "application/jsonx"}, 415),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def both_ports(tmp_path_factory) -> AsyncIterator[dict[str, tuple[Daemon, str, str, bytes]]]:
    """One real daemon with its MCP port; for each port: the URL to POST and the body."""
    async with daemon_with_mcp_port(
        tmp_path_factory.mktemp("guard"), token=TOKEN, extra_args=["--allow-host", ALLOWED]
    ) as (daemon, mcp_port, _):
        yield {
            "daemon": (daemon, daemon.url, "/similar", json.dumps({"text": "sourdough starter"}).encode()),
            "mcp": (daemon, f"http://127.0.0.1:{mcp_port}", "/mcp", json.dumps(MCP_INIT).encode()),
        }


def request_headers(changes: dict[str, str | None], port: int) -> dict[str, str]:
    headers = dict(BASE_HEADERS)
    for name, value in changes.items():
        if value is None:
            headers.pop(name, None)
        else:
            headers[name] = value.format(port=port)
    return headers


@pytest.mark.parametrize("which", ["daemon", "mcp"])
@pytest.mark.parametrize("changes,status", [pytest.param(c, s, id=i) for i, c, s in ROWS])
async def test_both_ports_answer_the_same_table(both_ports, which, changes, status):
    daemon, base, path, body = both_ports[which]
    port = int(base.rsplit(":", 1)[1])
    headers = request_headers(changes, port)
    skip = () if "Content-Type" in headers else ("Content-Type",)
    async with aiohttp.ClientSession() as session:
        async with session.post(base + path, data=body, headers=headers, skip_auto_headers=skip) as resp:
            text = await resp.text()
            assert resp.status == status, (which, headers, resp.status, text[:300])
    if status != 200:
        assert TOKEN not in text
        if which == "mcp":  # the native error shape, as on the daemon's own routes
            assert json.loads(text)["status"] == status, text
