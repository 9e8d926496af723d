"""Only the owner's programs reach a daemon without a token: another account of the
machine gets a 403 on both ports and changes nothing, as the kernel tells the account
(``http/peers.py``). Against one real daemon process; the other account's client is the
system's Python run as ``nobody`` (``setpriv``), so the test needs root to switch to it.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import shutil
import socket
import struct
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from arcology_oracle.http import peers
from tests.conftest import copy_examples, daemon_with_mcp_port
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
url, body, token, extra = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **extra}
if token:
    headers["Authorization"] = "Bearer " + token
req = urllib.request.Request(url, data=body.encode() if body else None, headers=headers)
try:
    with urllib.request.urlopen(req, timeout=20) as resp:
        print(resp.status, resp.read(300).decode("utf-8", "replace"))
except urllib.error.HTTPError as e:
    print(e.code, e.read(300).decode("utf-8", "replace"))
"""


def as_account(
    uid: int | None, url: str, body: dict | None = None, token: str = "", headers: dict | None = None
) -> tuple[int, str]:
    """``CLIENT``'s request, run as ``uid`` (None: this test's own account), with
    ``headers`` added to its own."""
    python = shutil.which("python3", path="/usr/bin:/bin") or "python3"
    body_arg = json.dumps(body) if body is not None else ""
    command = [python, "-I", "-c", CLIENT, url, body_arg, token, json.dumps(headers or {})]
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
async def test_a_forwarded_for_header_names_no_account_on_the_mcp_port(tokenless):
    """The MCP port's server (uvicorn) took ``X-Forwarded-For`` from a loopback client as
    the client's address, port included: another account naming a socket the owner
    listens on (the daemon's own ports) was looked up as that socket's, the owner's, and
    answered. The connection's own end decides, whatever the headers say."""
    daemon, mcp_url, _roam = tokenless
    mcp_port = int(mcp_url.rsplit(":", 1)[1].split("/")[0])
    daemon_port = int(daemon.url.rsplit(":", 1)[1])
    for named in (f"127.0.0.1:{daemon_port}", f"127.0.0.1:{mcp_port}", "127.0.0.1"):
        forwarded = {"X-Forwarded-For": named}
        status, text = await asyncio.to_thread(as_account, NOBODY_UID, mcp_url, MCP_INIT, "", forwarded)
        assert status == 403, (named, status, text)
        assert "account" in text, text
        # The owner's own client is answered whatever it says there (it names no socket).
        assert (await asyncio.to_thread(as_account, None, mcp_url, MCP_INIT, "", forwarded))[0] == 200


@needs_root
async def test_with_a_token_the_token_decides_for_another_account(tmp_path):
    roam = copy_examples(tmp_path / "roam")
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


@pytest.mark.parametrize("asked", ["netlink", "proc table"])
async def test_a_listening_socket_is_no_connection_s_client(asked, monkeypatch):
    """Asked for a connection from an address where a socket listens (and none connected
    from it), the kernel's exact lookup answers with the listener, of whichever account
    listens there: no connection, nobody's."""
    if asked == "proc table":
        monkeypatch.setattr(peers, "_by_netlink", lambda *args: peers._NO_NETLINK)
    with socket.create_server(("127.0.0.1", 0)) as listener, socket.create_server(("127.0.0.1", 0)) as server:
        assert peers.account_of(listener.getsockname(), server.getsockname()) == peers.NOBODY


@pytest.mark.parametrize("asked", ["netlink", "proc table"])
@pytest.mark.parametrize("server_at", ["::1", "dual stack, IPv4 client"])
async def test_ipv6_connections_are_named_too(asked, server_at, monkeypatch):
    """A daemon on ``::1`` (``--host ::1`` or ``localhost``), and an IPv4 client of an
    IPv6 socket, which sees it at an IPv4-mapped address (``::ffff:127.0.0.1``) while the
    kernel lists the client's socket as IPv4."""
    if asked == "proc table":
        monkeypatch.setattr(peers, "_by_netlink", lambda *args: peers._NO_NETLINK)
    dual = server_at != "::1"
    with socket.create_server(("::" if dual else "::1", 0), family=socket.AF_INET6, dualstack_ipv6=dual) as server:
        client = socket.create_connection(("127.0.0.1" if dual else "::1", server.getsockname()[1]))
        accepted, peer = server.accept()
        with client, accepted:
            assert peer[0] == ("::ffff:127.0.0.1" if dual else "::1")
            assert peers.account_of(peer, accepted.getsockname()) == os.geteuid()


@pytest.mark.parametrize("asked", ["netlink", "proc table"])
async def test_a_client_bound_to_the_loopback_device_is_named(asked, monkeypatch):
    """A client socket bound to ``lo`` (``SO_BINDTODEVICE``, open to every account since
    Linux 5.7; ``curl --interface lo``): netlink's exact lookup, asked for no device,
    does not match it, and the owner's ``curl --interface lo`` got the 403."""
    if asked == "proc table":
        monkeypatch.setattr(peers, "_by_netlink", lambda *args: peers._NO_NETLINK)
    with socket.create_server(("127.0.0.1", 0)) as server, socket.socket() as client:
        try:
            client.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"lo")
        except OSError as exc:
            pytest.skip(f"this kernel does not let this account bind to a device: {exc}")
        client.connect(server.getsockname())
        accepted, peer = server.accept()
        with accepted:
            assert peers.account_of(peer, accepted.getsockname()) == os.geteuid()


def ask_again(monkeypatch) -> None:
    """Have :mod:`peers` choose its way of asking again (it chooses once per process)."""
    monkeypatch.setattr(peers, "_way", "unasked", raising=False)


class NoTcpDiag(socket.socket):
    """A socket where the kernel has no ``inet_diag`` for TCP (``CONFIG_INET_DIAG`` off, or
    its module not loadable): the netlink socket opens, and every ``SOCK_DIAG_BY_FAMILY``
    request is answered with ``NLMSG_ERROR`` ``-ENOENT``, as for a socket that is not there."""

    def send(self, data, *args):
        if self.family != socket.AF_NETLINK:
            return super().send(data, *args)
        self.asked = data[:16]
        return len(data)

    def recv(self, size, *args):
        if self.family != socket.AF_NETLINK:
            return super().recv(size, *args)
        return struct.pack("=IHHIIi", 36, 2, 0, 1, 0, -errno.ENOENT) + self.asked


async def test_a_kernel_without_tcp_diag_is_asked_through_the_proc_table(monkeypatch):
    """There netlink says "no such socket" of every connection, the owner's own too: the
    daemon refused its owner, while its log said only other accounts were. The way of
    asking is the one that names this process's own connection."""
    monkeypatch.setattr(socket, "socket", NoTcpDiag)
    ask_again(monkeypatch)
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname())
        accepted, peer = server.accept()
        with client, accepted:
            assert peers.can_tell()
            assert peers.account_of(peer, accepted.getsockname()) == os.geteuid()


async def test_where_neither_way_names_the_owner_every_account_is_let_through(monkeypatch, tmp_path):
    """Netlink refused and a ``/proc/net/tcp`` that lists no socket (a sandbox's stand-in):
    the kernel cannot be asked, as on macOS (the daemon says so when it starts), rather
    than a 403 for every request, the owner's too, under a log saying the owner is answered."""
    empty = tmp_path / "tcp"
    empty.write_text("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n")
    monkeypatch.setattr(peers, "_by_netlink", lambda *args: peers._NO_NETLINK)
    monkeypatch.setattr(peers, "_TABLES", {4: str(empty), 6: str(empty)})
    ask_again(monkeypatch)
    assert not peers.can_tell()
    assert peers.account_of(("127.0.0.1", 40000), ("127.0.0.1", 7348)) is peers.UNKNOWN


async def test_where_the_kernel_cannot_be_asked_every_account_is_let_through(monkeypatch):
    monkeypatch.setattr(peers, "_by_netlink", lambda *args: peers._NO_NETLINK)
    monkeypatch.setattr(peers, "_TABLES", {4: "/nonexistent/tcp", 6: "/nonexistent/tcp6"})
    ask_again(monkeypatch)
    assert not peers.can_tell()
    assert peers.account_of(("127.0.0.1", 40000), ("127.0.0.1", 7348)) is peers.UNKNOWN
