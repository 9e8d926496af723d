"""Streamed answers and clients that leave: the one way every route streams.

:func:`stream` writes an async iterator of items as one response that starts only with
the first item, so a failure before it (Ollama unreachable, a missing model) is still a
proper error status from the middleware or the route's error handling; a failure after
it is written in the stream's own shape (``on_error``).

:func:`cancel_on_disconnect` cancels the work of a request whose client has gone (and
with it the model's generation upstream), or when the daemon stops;
:func:`cancelled_on_disconnect` applies it to a whole handler. See :mod:`.disconnect` for
why the transport is watched as well as relying on aiohttp's handler cancellation.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing, asynccontextmanager
from typing import TypeVar

from aiohttp import web

from ..errors import Stopping
from .disconnect import client_gone
from .keys import stopping_key

log = logging.getLogger(__name__)

T = TypeVar("T")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# Set while a cancel_on_disconnect block runs in this task: an inner one does nothing,
# so a streaming helper can watch by itself and inside a handler that already watches.
_watching: contextvars.ContextVar[bool] = contextvars.ContextVar("watching_disconnect", default=False)
STOPPING = "the daemon is stopping"


class ClientGone(Exception):
    """The HTTP client closed its connection while its answer was being made."""


@asynccontextmanager
async def cancel_on_disconnect(request: web.Request) -> AsyncIterator[None]:
    """Cancel the block (and so the model's generation) when the client disconnects,
    raising :class:`ClientGone` instead of CancelledError, or when the daemon stops (its
    app's ``stopping_key`` event), raising :class:`~arcology_oracle.errors.Stopping`.
    Nested in another such block of the same task, it leaves the watching to the outer
    one."""
    if _watching.get():
        yield
        return
    task = asyncio.current_task()
    gone = stopped = False
    stopping = request.app.get(stopping_key)

    async def watch() -> None:
        nonlocal gone, stopped
        waits = [asyncio.ensure_future(client_gone(request))]
        if stopping is not None:
            waits.append(asyncio.ensure_future(stopping.wait()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()
        stopped = stopping is not None and stopping.is_set()
        gone = not stopped
        task.cancel()

    token = _watching.set(True)
    watcher = asyncio.create_task(watch(), name="disconnect-watch")
    try:
        yield
    except asyncio.CancelledError:
        if gone:
            task.uncancel()
            raise ClientGone from None
        if stopped:
            task.uncancel()
            raise Stopping(STOPPING) from None
        raise
    finally:
        watcher.cancel()
        _watching.reset(token)


def cancelled_on_disconnect(handler: Handler) -> Handler:
    """Run the handler until its client disconnects; then cancel it (which closes the
    upstream connection, so Ollama stops working for nobody) and answer 499."""

    @functools.wraps(handler)
    async def wrapper(request: web.Request) -> web.StreamResponse:
        try:
            async with cancel_on_disconnect(request):
                return await handler(request)
        except ClientGone:
            log.info("client left during %s %s; cancelling the upstream request", request.method, request.path)
            return web.Response(status=499, text="client closed the request")

    return wrapper


async def start_stream(
    request: web.Request, content_type: str, headers: Mapping[str, str] | None = None
) -> web.StreamResponse:
    """A prepared streaming response of ``content_type`` (and ``headers``), never cached."""
    headers = {"Content-Type": content_type, "Cache-Control": "no-store", **(headers or {})}
    response = web.StreamResponse(headers=headers)
    await response.prepare(request)
    return response


_END = object()


async def stream(
    request: web.Request,
    items: AsyncIterator[T],
    *,
    content_type: str,
    encode: Callable[[T], bytes],
    head: bytes | Callable[[], Awaitable[bytes]] = b"",
    tail: bytes | Callable[[], Awaitable[bytes]] = b"",
    stop: Callable[[T], bool] = lambda item: False,
    on_error: Callable[[Exception], bytes | None] = lambda exc: None,
    empty: Callable[[], Exception] | None = None,
    headers: Mapping[str, str] | None = None,
) -> web.StreamResponse:
    """Stream ``items`` to the client: ``head``, each item as ``encode`` makes it, then
    ``tail`` (left out when an item for which ``stop`` is true ended the stream), with
    ``headers`` besides its content type. A
    ``head`` or ``tail`` that is a function is awaited only when it is to be written:
    the head once the first item is there, the tail after the last.

    The response starts once the first item is there: what ``items`` raises before that
    propagates, and so does the exception ``empty()`` makes when there is no item at all
    (without ``empty``, no item is an empty stream). An exception after the start is
    written as ``on_error`` encodes it and ends the stream (re-raised when it gives None).
    ``items`` is closed in every case and cancelled with the request when the client
    leaves (:func:`cancel_on_disconnect`); then the answer is the response begun, or 499.
    When the daemon stops, a stream begun ends with ``on_error``'s line for
    :class:`~arcology_oracle.errors.Stopping` (nothing when it gives None), also when a
    handler's own :func:`cancel_on_disconnect` watches (the stop then cancels this from
    outside, and the handler returns the response ended); one not begun raises it (503
    from the middleware).
    """
    response: web.StreamResponse | None = None
    try:
        async with aclosing(items), cancel_on_disconnect(request):
            first = await anext(items, _END)
            if first is _END and empty is not None:
                raise empty()
            response = await start_stream(request, content_type, headers)
            try:
                if start := head if isinstance(head, bytes) else await head():
                    await response.write(start)
                stopped = False
                if first is not _END:
                    await response.write(encode(first))
                    stopped = stop(first)
                    while not stopped and (item := await anext(items, _END)) is not _END:
                        await response.write(encode(item))
                        stopped = stop(item)
                if not stopped and (end := tail if isinstance(tail, bytes) else await tail()):
                    await response.write(end)
            except ConnectionError:
                raise
            except Exception as exc:
                message = on_error(exc)
                if message is None:
                    raise
                await response.write(message)
            await response.write_eof()
            return response
    except (ClientGone, ConnectionError):
        log.info("client left %s; generation cancelled", request.path)
        return response if response is not None else web.Response(status=499)
    except Stopping as exc:
        if response is None:
            raise
        return await _end_stopped(request, response, on_error, exc)
    except asyncio.CancelledError:
        # Inside a handler that watches by itself (cancelled_on_disconnect: the compatible
        # APIs), the stop cancels this block from outside: a stream begun ends here all the
        # same. Left to the handler's Stopping, the middleware's 503 was written into the
        # chunked body of the 200 already sent (curl: "Illegal or missing hexadecimal sequence").
        stopping = request.app.get(stopping_key)
        if response is None or stopping is None or not stopping.is_set():
            raise
        if (task := asyncio.current_task()) is not None:
            task.uncancel()  # the outer block's cancel, answered here: it sees a response
        return await _end_stopped(request, response, on_error, Stopping(STOPPING))


async def _end_stopped(request: web.Request, response: web.StreamResponse,
                       on_error: Callable[[Exception], bytes | None], exc: Stopping) -> web.StreamResponse:  # fmt: skip
    """End the stream begun ``response`` as the daemon stops: ``on_error``'s line for
    ``exc`` (none when it gives None), then its end; a client already gone is no error."""
    log.info("the daemon is stopping: %s ended mid-answer", request.path)
    try:
        if (message := on_error(exc)) is not None:
            await response.write(message)
        await response.write_eof()
    except ConnectionError:
        log.info("client left %s as the daemon stopped", request.path)
    return response
