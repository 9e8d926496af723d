"""Noticing that an HTTP client went away while its answer is being made.

The daemon runs with ``handler_cancellation=True`` (see ``server.serve``), so aiohttp
cancels a handler whose client disconnects. Streaming handlers also poll the transport:
that catches a client that leaves while the handler is busy writing, and keeps the
behaviour when the app is served by a runner without handler cancellation.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

POLL_SECONDS = 0.05


async def client_gone(request: web.Request) -> None:
    """Return once the request's connection is closed or closing."""
    while True:
        transport = request.transport
        if transport is None or transport.is_closing():
            return
        await asyncio.sleep(POLL_SECONDS)
