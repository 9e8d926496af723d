"""Only the owner's programs reach a daemon without a token: another account of the
machine gets a 403 on both ports and changes nothing, as the kernel tells the account
(``http/peers.py``). Against one real daemon process; the other account's client is the
system's Python run as ``nobody`` (``setpriv``), so the test needs root to switch to it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from arcology_oracle.http import peers
from tests.conftest import EXAMPLE_ROAM, daemon_with_mcp_port
from tests.fakes.fake_ollama import running_fake_ollama
from tests.runners import Daemon, start_daemon

pytestmark = pytest.mark.asyncio(loop_scope="module")

NOBODY_UID = 65534
TOKEN = "other-accounts-token"
MCP_INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}  # fmt: skip
# The client: one request, prints "STATUS BODY" (urllib from the system's Python, which
# every account can run).
CLIENT = r"""
import json, sys, urllib.request, urllib.error
url, body, token = sys.argv[1], sys.argv[2], sys.argv[3]
headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
if token:
    headers["Authorization"] = "Bearer " + token
req = urllib.request.Request(url, data=body.encode() if body else None, headers=headers)
try:
    with urllib.request.urlopen(req, timeout=20) as resp:
        print(resp.status, resp.read(300).decode("utf-8", "replace"))
except urllib.error.HTTPError as e:
    print(e.code, e.read(300).decode("utf-8", "replace"))
"""


def as_account(uid: int | None, url: str, body: dict | None = None, token: str = "") -> tuple[int, str]:
    """``CLIENT``'s request, run as ``uid`` (None: this test's own account)."""
    python = shutil.which("python3", path="/usr/bin:/bin") or "python3"
    command = [python, "-I", "-c", CLIENT, url, json.dumps(body) if body is not None else "", token]
    if uid is not None:
        command = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr
    status, _, text = done.stdout.partition(" ")
    return int(status), text


needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None, reason="switching to another account needs root and setpriv"
)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tokenless(tmp_path_factory) -> AsyncIterator[tuple[Daemon, str, Path]]:
    """A real daemon without a token, with its MCP port: ``(daemon, mcp url, roam)``."""
    async with daemon_with_mcp_port(tmp_path_factory.mktemp("accounts")) as (daemon, mcp_port, roam):
        yield daemon, f"http://127.0.0.1:{mcp_port}/mcp", roam


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@needs_root
async def test_another_account_is_refused_on_every_route_and_changes_nothing(tokenless):
    daemon, mcp_url, roam = tokenless
    before = tree_bytes(roam)
    asks = [
        (daemon.url + "/search?q=sourdough", None),
        (daemon.url + "/health", None),
        (daemon.url + "/memorize", {"text": "written by another account"}),
        (daemon.url + "/api/tags", None),
        (mcp_url, MCP_INIT),
    ]
    for url, body in asks:
        status, text = await asyncio.to_thread(as_account, NOBODY_UID, url, body)
        assert status == 403, (url, status, text)
        assert "account" in text, text
        assert "sourdough" not in text.lower()
    assert tree_bytes(roam) == before  # the refused /memorize wrote nothing
    # The owner's own programs, the same requests: answered.
    for url, body in asks:
        if url.endswith("/memorize"):
            continue
        status, text = await asyncio.to_thread(as_account, None, url, body)
        assert status == 200, (url, status, text)
    assert f"only programs of this account (uid {os.geteuid()})" in daemon.log()


@needs_root
async def test_with_a_token_the_token_decides_for_another_account(tmp_path):
    roam = tmp_path / "roam"
    shutil.copytree(EXAMPLE_ROAM, roam, symlinks=True)
    async with running_fake_ollama() as fake:
        daemon = await start_daemon(tmp_path, roam_dir=roam, ollama_url=fake.url, token=TOKEN)
        try:
            url = daemon.url + "/search?q=sourdough"
            assert (await asyncio.to_thread(as_account, NOBODY_UID, url, None, TOKEN))[0] == 200
            assert (await asyncio.to_thread(as_account, NOBODY_UID, url, None, "wrong"))[0] == 401
        finally:
            daemon.stop()


@pytest.mark.parametrize("asked", ["netlink", "proc table"])
async def test_the_kernel_names_the_account_of_a_live_connection_only(asked, monkeypatch):
    """:func:`peers.account_of` on real sockets, by each way of asking: this process's uid
    while the client's socket is open, nobody's once it is closed (no live socket; a
    closed one in TIME_WAIT is listed with uid 0 and must not pass for root's)."""
    if asked == "proc table":  # as where a sandbox refuses netlink
        monkeypatch.setattr(peers, "_by_netlink", lambda *args: peers._NO_NETLINK)
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname())
        accepted, peer = server.accept()
        try:
            assert peers.can_tell()
            own = accepted.getsockname()
            assert peers.account_of(peer, own) == os.geteuid()
            assert peers.account_of(("127.0.0.1", 1), own) == peers.NOBODY  # no such socket
            client.close()
            accepted.close()  # both closed: the client's end is in TIME_WAIT or gone
            assert peers.account_of(peer, own) == peers.NOBODY
        finally:
            client.close()
            accepted.close()
    assert peers.account_of(None, ("127.0.0.1", 1)) == peers.NOBODY
    assert peers.account_of(("::1", 5), ("127.0.0.1", 1)) == peers.NOBODY


async def test_where_the_kernel_cannot_be_asked_every_account_is_let_through(monkeypatch):
    monkeypatch.setattr(peers, "_by_netlink", lambda *args: peers._NO_NETLINK)
    monkeypatch.setattr(peers, "_netlink_works", lambda: False)
    monkeypatch.setattr(peers, "_TABLES", {4: "/nonexistent/tcp", 6: "/nonexistent/tcp6"})
    assert not peers.can_tell()
    assert peers.account_of(("127.0.0.1", 40000), ("127.0.0.1", 7348)) is peers.UNKNOWN
