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
not use it; the raw-socket tests run against the real daemon.) The sockets come from
:func:`listen`, called before anything else: a port in use fails at once, before the app's
start-up (the index, the clean-up of the notes) has touched anything.

One daemon per database and per notes directory: :func:`lock_database` and
:func:`lock_notes` take an exclusive ``flock`` for the daemon's life (the kernel releases
it when the process ends, however it ends), on ``<database>.lock`` and on the notes
directory itself (nothing is written into the notes). A second daemon is refused.
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import logging
import os
import signal
import socket
from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from aiohttp.http_exceptions import BadHttpMethod, HttpProcessingError, LineTooLong

from ..errors import ConfigError, OracleError
from ..store.db import open_lock_file

log = logging.getLogger(__name__)

KEEPALIVE_SECONDS = 75.0  # run_app's default
SHUTDOWN_SECONDS = 60.0
BACKLOG = 128


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


def listen(host: str, port: int) -> list[socket.socket]:
    """Bound, listening sockets for every address of ``host`` (as ``loop.create_server``
    would bind them); ConfigError, in one line, when one cannot be had. Connections wait
    in the backlog until :func:`serve` accepts them."""
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            try:
                sock = socket.socket(family, kind, proto)
            except OSError:
                continue  # a family this system lacks (as asyncio skips it)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                if exc.errno != errno.EADDRNOTAVAIL:
                    raise
                sockets.pop().close()  # IPv6 disabled, say (as asyncio skips it)
                continue
            sock.listen(BACKLOG)
            sock.setblocking(False)
        if not sockets:
            raise OSError(errno.EADDRNOTAVAIL, os.strerror(errno.EADDRNOTAVAIL))
    except OSError as exc:
        for sock in sockets:
            sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(f"port {port} is already in use: another daemon? pass --port") from None
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sockets


def lock_database(db_path: Path | str, busy: str) -> int | None:
    """Hold the exclusive lock of ``<db_path>.lock`` (created if needed; the database's
    real path, so a symlink to it locks the same file): the descriptor to close to
    release it. OracleError(``busy``) when another process holds it (StoreError when its
    folder cannot be made); None, with a warning, where locks cannot be taken (then
    nothing keeps a second daemon off)."""
    if str(db_path) == ":memory:":
        return None
    path, fd = open_lock_file(db_path, ".lock", "nothing keeps another daemon off this database")
    return None if fd is None else _flock(fd, busy, path)


def lock_notes(roam_dir: Path, busy: str) -> int | None:
    """Hold the exclusive lock of the notes directory itself (nothing is written into
    it): as :func:`lock_database`; None when the directory does not exist."""
    try:
        fd = os.open(roam_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None  # missing or unreadable: the daemon says so itself, and watches nothing
    return _flock(fd, busy, roam_dir)


def _flock(fd: int, busy: str, path: Path) -> int | None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise OracleError(busy) from None
    except OSError as exc:  # a file system without locks (some network ones)
        os.close(fd)
        log.warning("cannot lock %s (%s): nothing keeps another daemon off it", path, exc.strerror or exc)
        return None
    return fd


async def _serve(app: web.Application, sockets: list[socket.socket], on_listening: Callable[[], None] | None) -> None:
    runner = web.AppRunner(app, handle_signals=False, access_log=None, handler_cancellation=True,
                           shutdown_timeout=SHUTDOWN_SECONDS)  # fmt: skip
    await runner.setup()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    servers: list[asyncio.AbstractServer] = []
    try:
        for sock in sockets:
            servers.append(await loop.create_server(
                lambda: JsonErrorProtocol(runner.server, loop=loop, access_log=None, keepalive_timeout=KEEPALIVE_SECONDS),
                sock=sock,
            ))  # fmt: skip
        if on_listening is not None:
            on_listening()
        try:
            await stop.wait()
        finally:
            for server in servers:
                server.close()
    finally:
        await runner.cleanup()


def serve(app: web.Application, sockets: list[socket.socket], on_listening: Callable[[], None] | None = None) -> None:
    """Run ``app`` on ``sockets`` (from :func:`listen`) until SIGINT or SIGTERM, then shut
    it down cleanly; ``on_listening`` is called once connections are accepted."""
    try:
        asyncio.run(_serve(app, sockets, on_listening))
    finally:
        for sock in sockets:
            sock.close()
