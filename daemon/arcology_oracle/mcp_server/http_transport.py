"""MCP over streamable HTTP, beside the daemon: ``arcology-oracle serve --mcp-port N``.

The SDK's streamable HTTP transport is an ASGI (Starlette) application; aiohttp cannot
host ASGI applications without an adapter we would have to write and keep, so the
daemon runs the SDK's app under uvicorn (a dependency of the SDK) on a second port, in
the same process and event loop, started and stopped with the daemon's app. Its tools
call the daemon's HTTP API over loopback like the stdio server does.

The daemon's own guard (:func:`..http.guard.refusal`) stands before the SDK's app, so
both ports answer every request alike: the same Host, Origin, Fetch Metadata, token and
Content-Type rules, in the same order, with the same statuses and the daemon's native
error shape. The SDK's own Host/Origin check is off (it differed: 421, any loopback port
in ``Origin``, case-sensitive names). The endpoint is ``http://HOST:N/mcp``.

Every response of this port says ``Cache-Control: no-store``, as the daemon's do
(:func:`..http.middleware.no_store`): tool results carry note text; the SDK's own
``no-cache`` on its event streams is replaced (that one lets a cache store them).
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
from multidict import CIMultiDict

from ..config import Settings
from ..errors import ConfigError
from ..http.client import DaemonClient, daemon_url
from ..http import peers
from ..http.guard import Incoming, mimetype, refusal
from ..http.middleware import error_parts
from .tools import build_server

log = logging.getLogger(__name__)

PATH = "/mcp"
_AS_AIOHTTP = ("utf-8", "surrogateescape")
_NO_STORE = (b"cache-control", b"no-store")


class Guarded:
    """ASGI middleware: the daemon's guard before the SDK's app (module docstring)."""

    def __init__(self, app, settings: Settings):
        self.app = app
        self.settings = settings

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            # Decoded as aiohttp decodes them, so both ports compare the same strings.
            headers = CIMultiDict((k.decode(*_AS_AIOHTTP), v.decode(*_AS_AIOHTTP)) for k, v in scope["headers"])
            client = scope.get("client")
            path = scope["path"]
            account = peers.UNKNOWN if self.settings.token else await peers.account_of_off_loop(client, scope.get("server"))
            incoming = Incoming(
                scope["method"], path, headers, client[0] if client else None, path.rstrip("/") == PATH, account
            )
            found = refusal(incoming, self.settings)
            if found is not None:
                body, extra = error_parts(path, found.status, found.message)
                start = [(b"content-type", b"application/json"), _NO_STORE,
                         *((k.lower().encode(), v.encode()) for k, v in extra.items())]
                await send({"type": "http.response.start", "status": found.status, "headers": start})
                await send({"type": "http.response.body", "body": json.dumps(body).encode()})
                return
            if mimetype(headers.get("content-type")) == "application/json":
                # The guard reads media types in any case (RFC 9110); the SDK wants this
                # exact name. JSON is UTF-8 whatever a charset parameter says.
                kept = [(k, v) for k, v in scope["headers"] if k != b"content-type"]
                scope = {**scope, "headers": [*kept, (b"content-type", b"application/json")]}
            send = _no_store(send)
        await self.app(scope, receive, send)


def _no_store(send):
    """``send`` with ``Cache-Control: no-store`` in place of any the SDK's app sets."""

    async def sending(message) -> None:
        if message["type"] == "http.response.start":
            kept = [(k, v) for k, v in message.get("headers", ()) if k.lower() != b"cache-control"]
            message = {**message, "headers": [*kept, _NO_STORE]}
        await send(message)

    return sending


def asgi_app(settings: Settings, client: DaemonClient):
    """The guarded ASGI application serving MCP at :data:`PATH`."""
    server = build_server(client, settings)
    app = server.streamable_http_app(
        streamable_http_path=PATH, transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=settings.host,
    )
    return Guarded(app, settings)


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


def attach(app, settings: Settings, sock: socket.socket) -> None:
    """Run the MCP port on ``sock`` (from :func:`bind`) for as long as the daemon's
    aiohttp ``app`` runs."""

    async def mcp_ctx(_app) -> AsyncIterator[None]:
        client = DaemonClient(daemon_url(settings), settings.token, connect_timeout=settings.connect_timeout)
        # proxy_headers off: uvicorn would take X-Forwarded-For from a loopback client as
        # its address, and the guard asks the kernel whose connection that address is.
        config = uvicorn.Config(
            asgi_app(settings, client), log_level="warning", access_log=False, lifespan="on", ws="none",
            proxy_headers=False,
        )  # fmt: skip
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
