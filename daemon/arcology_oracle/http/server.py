"""Serving the app: the listening socket, signals, and requests aiohttp refuses itself.

aiohttp's HTTP parser refuses some requests before any handler or middleware runs (a
request line or header over 8,190 bytes, raw non-ASCII bytes in the URL, both
``Content-Length`` and ``Transfer-Encoding``, ...). By default it answers them in
``text/plain`` and logs a traceback for each. :class:`JsonErrorProtocol` (aiohttp's
per-connection protocol, with its ``handle_error`` hook replaced) answers them in the
native JSON error shape instead (the path is unknown at that point, so it cannot be the
called API's shape) and logs one line. The connection is closed after such an answer, as
aiohttp does.

:func:`serve` replaces ``web.run_app`` so that the listening socket uses that protocol;
the app's start-up and clean-up run as with ``run_app``. (The in-process test client does
not use it; the raw-socket tests run against the real daemon.)
"""

from __future__ import annotations

import asyncio
import logging
import signal

from aiohttp import web
from aiohttp.http_exceptions import BadHttpMethod, HttpProcessingError, LineTooLong

log = logging.getLogger(__name__)

KEEPALIVE_SECONDS = 75.0  # run_app's default
SHUTDOWN_SECONDS = 60.0


def parser_error_message(exc: BaseException | None, fallback: str | None) -> str:
    """A short, one-line description of why the parser refused a request."""
    if isinstance(exc, LineTooLong):
        return "the request line or a header is too long (at most 8190 bytes)"
    text = exc.message if isinstance(exc, HttpProcessingError) else (fallback or "")
    first = str(text).strip().splitlines()[0] if str(text).strip() else "malformed request"
    return first.rstrip(":")[:200]


class JsonErrorProtocol(web.RequestHandler):
    """aiohttp's request handler protocol, with its error answers as JSON and its error
    logging to one line (a traceback only for a 500, which is a bug)."""

    def handle_error(self, request, status: int = 500, exc: BaseException | None = None, message: str | None = None):
        if request.writer.output_size > 0 or status >= 500:
            response = super().handle_error(request, status, exc, message)  # raises if output began
            text = "internal error; see the daemon's log" if status == 500 else response.reason
        else:
            text = f"bad HTTP request: {parser_error_message(exc, message)}"
            # Not HTTP at all (TLS to this plain port, a port scan): not worth a warning.
            (log.debug if isinstance(exc, BadHttpMethod) else log.warning)("%s from %s", text, request.remote)
        response = web.json_response({"ok": False, "error": text, "status": status}, status=status)
        response.force_close()
        return response


async def _serve(app: web.Application, host: str, port: int) -> None:
    runner = web.AppRunner(app, handle_signals=False, access_log=None, handler_cancellation=True,
                           shutdown_timeout=SHUTDOWN_SECONDS)  # fmt: skip
    await runner.setup()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        server = await loop.create_server(
            lambda: JsonErrorProtocol(runner.server, loop=loop, access_log=None, keepalive_timeout=KEEPALIVE_SECONDS),
            host,
            port,
            reuse_address=True,
        )
        try:
            await stop.wait()
        finally:
            server.close()
    finally:
        await runner.cleanup()


def serve(app: web.Application, host: str, port: int) -> None:
    """Run ``app`` on ``host:port`` until SIGINT or SIGTERM, then shut it down cleanly."""
    asyncio.run(_serve(app, host, port))
