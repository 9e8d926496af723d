"""The one place that decides how the daemon talks to Ollama: clients, timeouts,
connection limits, what every failure becomes, and how a request that is cancelled
(once or more) still closes its connection (:func:`cancelled_once`).

Three clients, with the same timeouts and connection limits: :func:`make_client` builds
the official ``ollama.AsyncClient`` (chatting, and asking about a model), :func:`make_http`
the plain ``httpx.AsyncClient`` the compatible APIs' pass-through needs, and
:func:`make_session` the ``aiohttp`` session that embeds (:func:`post_json`). Embedding is
the daemon's hot path: every chunk at indexing time and every ``/search``. Through
aiohttp, with the answer decoded by pydantic-core, a batch of 32 vectors costs the caller
about 40% of the CPU it costs through the official client (httpx, ``json.loads``, then a
pydantic model of every float), and a one-text query about a quarter (BENCHMARKS.md,
issue 30). The ollama client has no timeout by default, so one is always given.

:func:`translate_errors` is the only error translator. Inside it, the ollama client's
``ResponseError`` (an HTTP error from Ollama; :func:`post_json` raises it too),
``ConnectionError`` (refused), the raw ``httpx`` errors it lets through when streaming or
timing out, the ``aiohttp`` session's errors, and a body that is not JSON
(``ValueError``...), become:

* :class:`~arcology_oracle.errors.ModelNotFound` when Ollama says the model is missing;
* :class:`UpstreamError` for another HTTP error: Ollama's status and its own message,
  so a proxy can hand both on;
* :class:`UpstreamUnavailable` when Ollama cannot be reached, timed out (``status``
  504), broke off a stream or did not speak its API (502).

All of them are :class:`~arcology_oracle.errors.ServiceUnavailable` naming host and model.
"""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TypeVar

import aiohttp
import anyio
import httpx
import ollama
import pydantic_core

from .. import __version__
from ..errors import ModelNotFound, ServiceUnavailable

T = TypeVar("T")

# Per client (embedding, chat, pass-through). Requests beyond max_connections wait for a
# free connection (bounded by the read timeout); idle ones beyond the keep-alive count close.
LIMITS = httpx.Limits(max_connections=64, max_keepalive_connections=16)


class UpstreamError(ServiceUnavailable):
    """Ollama answered with an HTTP error status (``status``, its ``message``)."""

    def __init__(self, message: str, *, status: int, host: str, model: str | None = None):
        super().__init__(message, host=host, model=model)
        self.status = status
        self.message = message


class UpstreamUnavailable(ServiceUnavailable):
    """Ollama cannot be reached, timed out or did not speak its API; see ``status``."""

    def __init__(self, message: str, *, host: str, model: str | None = None, status: int = 502):
        super().__init__(message, host=host, model=model)
        self.status = status


def timeouts(timeout: float, connect_timeout: float) -> httpx.Timeout:
    """``timeout`` bounds each wait for data (a model can take long to load before its
    first token: a read timeout, not a total); ``connect_timeout`` bounds connecting."""
    return httpx.Timeout(timeout, connect=connect_timeout)


def make_client(host: str, *, timeout: float, connect_timeout: float) -> ollama.AsyncClient:
    """The official client for ``host`` with explicit timeouts and :data:`LIMITS`."""
    return ollama.AsyncClient(host=host, timeout=timeouts(timeout, connect_timeout), limits=LIMITS)


def make_http(host: str, *, timeout: float, connect_timeout: float) -> httpx.AsyncClient:
    """A plain HTTP client for ``host`` (paths relative to it), configured like :func:`make_client`."""
    return httpx.AsyncClient(base_url=host, timeout=timeouts(timeout, connect_timeout), limits=LIMITS)


def make_session(*, timeout: float, connect_timeout: float) -> aiohttp.ClientSession:
    """An aiohttp session configured like :func:`make_client`: ``timeout`` bounds each
    wait for data, ``connect_timeout`` connecting, :data:`LIMITS`' connection count;
    ``OLLAMA_API_KEY`` as a bearer token as the official client sends it. It goes straight
    to the configured host: no proxy from the environment (aiohttp's default; reading the
    environment tripled the CPU of a one-text request, and every text embedded is the
    user's). Must be made, used and closed in one event loop."""
    headers = {"Accept": "application/json", "User-Agent": f"arcology-oracle/{__version__}"}
    if api_key := os.environ.get("OLLAMA_API_KEY"):
        headers["Authorization"] = f"Bearer {api_key}"
    return aiohttp.ClientSession(
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=connect_timeout, sock_read=timeout),
        connector=aiohttp.TCPConnector(limit=LIMITS.max_connections),
        headers=headers,
    )


async def post_json(session: aiohttp.ClientSession, url: str, payload: dict) -> object:
    """POST ``payload`` as JSON and return the decoded answer. An HTTP error status raises
    ``ollama.ResponseError`` with Ollama's own message, as the official client does, so
    that :func:`translate_errors` reads both clients' failures alike; a body that is not
    JSON raises ``ValueError``."""
    async with session.post(url, json=payload) as response:
        body = await response.read()
        if response.status >= 400:
            raise ollama.ResponseError(body.decode("utf-8", "replace"), response.status)
    return pydantic_core.from_json(body)


async def load_http_backend() -> None:
    """Import now what httpx imports at a process's first request (anyio's asyncio
    backend), from a coroutine at a start: at the first chat or model check it took 18-22
    ms of imports on the event loop, against 0.6 ms for a later request (~2 ms after
    this), and every request the loop served then waited for it."""
    await anyio.sleep(0)


class OllamaConnection:
    """Owns lazily created clients for ``host``: the official AsyncClient and an aiohttp
    session per event loop; ``close()`` releases the AsyncClient's connections and the
    running loop's session (close in each loop that used it), and a later call creates
    fresh ones."""

    def __init__(self, host: str, *, timeout: float, connect_timeout: float):
        self.host = host
        self._timeouts = (timeout, connect_timeout)
        self._client: ollama.AsyncClient | None = None
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aiohttp.ClientSession] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def client(self) -> ollama.AsyncClient:
        if self._client is None:
            timeout, connect = self._timeouts
            self._client = make_client(self.host, timeout=timeout, connect_timeout=connect)
        return self._client

    @property
    def session(self) -> aiohttp.ClientSession:
        """The aiohttp session of the running event loop (call from a coroutine): one per
        loop, as an aiohttp session belongs to the loop it was made in."""
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            timeout, connect = self._timeouts
            session = self._sessions[loop] = make_session(timeout=timeout, connect_timeout=connect)
        return session

    async def close(self) -> None:
        """Close the HTTP connections to Ollama (idempotent)."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
        session = self._sessions.pop(asyncio.get_running_loop(), None)
        if session is not None:
            await session.close()


_closing: set[asyncio.Future] = set()  # strong references until each close has finished


async def close_unless_cancelled(close: Callable[[], Awaitable[object]]) -> None:
    """Run ``close()`` (closing a stream, and so its HTTP response) to its end even when
    the calling task already has a cancellation pending: it runs in its own shielded
    task. A plain close there is interrupted at its first await, leaving the connection
    checked out for good and Ollama generating for nobody."""
    closing = asyncio.ensure_future(close())
    _closing.add(closing)
    closing.add_done_callback(_closing.discard)
    try:
        await asyncio.shield(closing)
    except asyncio.CancelledError:
        await asyncio.wait([closing])  # finish closing, then let the cancellation go on
        raise


async def cancelled_once(step: Awaitable[T], *, orphan: Callable[[T], Awaitable[object]] | None = None) -> T:
    """Await ``step`` (a request to Ollama, or one read of its answer) in a task of its
    own, which a cancellation of the caller reaches once, however often it comes.

    A cancelled httpx request or read closes its connection in the task it runs in, past
    awaits (a lock) that a second ``Task.cancel()`` cuts short: anyio's shields hold off
    only anyio's cancellations. Cut short, the close leaves the connection open and checked
    out, and Ollama generates for nobody. A handler whose client leaves is cancelled twice,
    by aiohttp's handler cancellation and by the disconnect watcher (``http/streaming.py``).
    Here the caller's first cancellation cancels the step; the caller then waits, through
    any further cancellation, until the step's clean-up has ended, and its CancelledError
    goes on. A result the step made all the same goes to ``orphan`` (to close it).
    """
    task = asyncio.ensure_future(step)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        task.cancel()
        # Also so that the caller's own clean-up (closing the stream) never meets the step still running.
        while not task.done():
            with suppress(asyncio.CancelledError):
                await asyncio.wait([task])
        if not task.cancelled() and task.exception() is None and orphan is not None:
            await close_unless_cancelled(lambda: orphan(task.result()))
        raise


# A connection closed before the end of Ollama's answer (Ollama crashed or restarted).
_CUT_SHORT = (httpx.RemoteProtocolError, aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError)


def says_no_model(message: str) -> bool:
    """Whether an error message of Ollama's says that it has no such model (``model "x"
    not found, try pulling it first``, ``model 'x' not found``). A 404 that does not say
    so came from no Ollama (``404 page not found``, a web page): :func:`not_ollama`."""
    lower = message.lower()
    return "model" in lower and "not found" in lower


def not_ollama(host: str, status: int, message: str, model: str | None = None) -> UpstreamUnavailable:
    """The error for an answer from ``host`` that no Ollama gives (a 404 naming no model,
    a web page): the URL is most likely not Ollama's. Its message is one line."""
    text = " ".join(message.split())
    gist = "a web page" if text.startswith("<") else repr(text[:80] + ("..." if len(text) > 80 else ""))
    return UpstreamUnavailable(
        f"{host} does not answer as Ollama does (HTTP {status}, {gist}): is it the URL of Ollama? "
        "(ollama_host in the config file, OLLAMA_HOST, --ollama-host)",
        host=host, model=model,
    )  # fmt: skip


@contextmanager
def translate_errors(host: str, model: str | None, *, streaming: bool = False) -> Iterator[None]:
    """Re-raise Ollama client failures inside the block as the errors above.

    ``streaming``: the block reads an answer that has begun, so a transport error means
    Ollama broke it off.
    """
    what = f"model {model!r} at {host}" if model else host
    # For the messages that begin "Ollama at HOST": the host is named once.
    which = f" (model {model!r})" if model else ""
    try:
        yield
    except ollama.ResponseError as exc:
        message = str(exc.error)
        if says_no_model(message):
            raise ModelNotFound(
                f"Ollama at {host} has no model {model!r} ({message}); try `ollama pull {model}`",
                host=host,
                model=model,
            ) from None
        if exc.status_code == 404 or message.lstrip().startswith("<"):
            raise not_ollama(host, exc.status_code, message, model) from None
        if exc.status_code == -1:  # the official client's code for an error line inside a streamed answer
            raise UpstreamError(f"{what} stopped with an error while it answered: {message}", status=502, host=host,
                                model=model) from None  # fmt: skip
        raise UpstreamError(
            f"Ollama error from {what} (HTTP {exc.status_code}): {message}",
            status=exc.status_code, host=host, model=model,
        ) from None  # fmt: skip
    except (ConnectionError, httpx.ConnectError, aiohttp.ClientConnectorError) as exc:
        raise UpstreamUnavailable(f"cannot connect to Ollama at {host}: {exc}", host=host, model=model) from None
    except (httpx.TimeoutException, asyncio.TimeoutError):
        raise UpstreamUnavailable(f"Ollama at {host} timed out{which}", host=host, model=model, status=504) from None
    except _CUT_SHORT:
        # Said in words: the page and Emacs show this message as it is.
        raise UpstreamUnavailable(
            f"Ollama at {host} broke off its answer: the connection closed before its end{which}",
            host=host, model=model,
        ) from None  # fmt: skip
    except (httpx.HTTPError, aiohttp.ClientError) as exc:
        how = "broke off its answer" if streaming else "failed"
        raise UpstreamUnavailable(f"Ollama at {host} {how} ({type(exc).__name__}: {exc})", host=host, model=model) from None
    except json.JSONDecodeError:
        raise UpstreamUnavailable(
            f"invalid response from {what}: it is not Ollama's (not JSON: is it Ollama that answers there?)",
            host=host, model=model,
        ) from None  # fmt: skip
    except (ValueError, KeyError, TypeError) as exc:
        raise UpstreamUnavailable(f"invalid response from {what}: {exc}", host=host, model=model) from None
