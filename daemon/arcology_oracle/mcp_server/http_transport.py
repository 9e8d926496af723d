"""MCP over streamable HTTP, beside the daemon: ``arcology-oracle serve --mcp-port N``.

The SDK's streamable HTTP transport is an ASGI (Starlette) application; aiohttp cannot
host ASGI applications without an adapter we would have to write and keep, so the
daemon runs the SDK's app under uvicorn (a dependency of the SDK) on a second port, in
the same process and event loop, started and stopped with the daemon's app. Its tools
call the daemon's HTTP API over loopback like the stdio server does.

The same rules guard it as every daemon route: with a token configured, every request
must carry ``Authorization: Bearer <token>`` (checked with the daemon's own function);
the ``Host`` must be a loopback name, the configured host or one of ``allowed_hosts``,
else 421, and an ``Origin``, when sent, one of those
hosts' origins, else 403 (the SDK's DNS-rebinding check does the matching). The
endpoint is ``http://HOST:N/mcp``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import AsyncIterator

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings

from ..config import Settings
from ..errors import ConfigError
from ..http.client import DaemonClient, daemon_url
from ..http.middleware import bearer_matches
from .tools import build_server

log = logging.getLogger(__name__)

PATH = "/mcp"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """The Host/Origin rule for the MCP port, in the SDK's terms."""
    hosts = list(LOOPBACK_HOSTS)
    extra = [settings.host, *settings.allowed_hosts]
    for host in extra:
        if host and host not in ("0.0.0.0", "::"):
            host = f"[{host}]" if ":" in host and not host.startswith("[") else host
            if host not in hosts:
                hosts.append(host)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:*" for h in hosts] + hosts,
        allowed_origins=[f"{scheme}://{h}:*" for h in hosts for scheme in ("http", "https")]
        + [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")],
    )


class TokenGuard:
    """ASGI middleware: refuse any HTTP request without the bearer token (401 JSON)."""

    def __init__(self, app, token: str | None):
        self.app = app
        self.token = token

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and self.token:
            header = next((v for k, v in scope["headers"] if k == b"authorization"), b"").decode("latin-1")
            if not bearer_matches(header, self.token):
                body = json.dumps({"ok": False, "error": "missing or wrong bearer token", "status": 401}).encode()
                await send({
                    "type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="arcology-oracle"')],
                })  # fmt: skip
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def asgi_app(settings: Settings, client: DaemonClient):
    """The guarded ASGI application serving MCP at :data:`PATH`."""
    server = build_server(client, settings)
    app = server.streamable_http_app(
        streamable_http_path=PATH, transport_security=transport_security(settings), host=settings.host
    )
    return TokenGuard(app, settings.token)


class _Uvicorn(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self):
        # The daemon (aiohttp's run_app) owns SIGINT/SIGTERM and stops this server itself.
        yield


def bind(host: str, port: int) -> socket.socket:
    """A listening socket for the MCP port; ConfigError if it cannot be bound."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto must be IPPROTO_TCP, not 0 (socket.create_server's): asyncio sets TCP_NODELAY
    # only on connections whose socket says TCP, and without it a response written as
    # headers then body waits ~40 ms for the client's delayed ACK (48 ms -> 4 ms a call).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen for MCP on {host}:{port}: {exc.strerror}") from None
    sock.setblocking(False)
    return sock


def attach(app, settings: Settings) -> None:
    """Run the MCP port for as long as the daemon's aiohttp ``app`` runs."""
    sock = bind(settings.host, settings.mcp_port)

    async def mcp_ctx(_app) -> AsyncIterator[None]:
        client = DaemonClient(daemon_url(settings), settings.token, connect_timeout=settings.connect_timeout)
        config = uvicorn.Config(
            asgi_app(settings, client), log_level="warning", access_log=False, lifespan="on", ws="none"
        )
        server = _Uvicorn(config)
        task = asyncio.create_task(server.serve(sockets=[sock]), name="mcp-http")
        while not server.started and not task.done():
            await asyncio.sleep(0.02)
        if task.done():
            await client.aclose()
            task.result()
            raise RuntimeError("the MCP server stopped while starting")
        log.info("MCP (streamable HTTP) on http://%s:%d%s", settings.host, sock.getsockname()[1], PATH)
        yield
        server.should_exit = True
        await task
        await client.aclose()

    app.cleanup_ctx.append(mcp_ctx)
