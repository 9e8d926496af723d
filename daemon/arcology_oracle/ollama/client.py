"""The one place that decides how the daemon talks to Ollama: clients, timeouts,
connection limits, and what every failure becomes.

Both kinds of client are ``httpx`` underneath: :func:`make_client` builds the official
``ollama.AsyncClient`` (embedding and chatting) and :func:`make_http` the plain
``httpx.AsyncClient`` the compatible APIs' pass-through needs, with the same timeouts and
:data:`LIMITS`. The ollama client has no timeout by default, so one is always given.

:func:`translate_errors` is the only error translator. Inside it, the ollama client's
``ResponseError`` (an HTTP error from Ollama), ``ConnectionError`` (refused), and the raw
``httpx`` errors it lets through when streaming or timing out, plus a body that is not
JSON (``ValueError``...), become:

* :class:`~arcology_oracle.errors.ModelNotFound` when Ollama says the model is missing;
* :class:`UpstreamError` for another HTTP error: Ollama's status and its own message,
  so a proxy can hand both on;
* :class:`UpstreamUnavailable` when Ollama cannot be reached, timed out (``status``
  504), broke off a stream or did not speak its API (502).

All of them are :class:`~arcology_oracle.errors.ServiceUnavailable` naming host and model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

import httpx
import ollama

from ..errors import ModelNotFound, ServiceUnavailable

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


class OllamaConnection:
    """Owns one lazily created AsyncClient for ``host``; ``close()`` releases its
    connections and a later call creates a fresh client."""

    def __init__(self, host: str, *, timeout: float, connect_timeout: float):
        self.host = host
        self._timeouts = (timeout, connect_timeout)
        self._client: ollama.AsyncClient | None = None

    @property
    def client(self) -> ollama.AsyncClient:
        if self._client is None:
            timeout, connect = self._timeouts
            self._client = make_client(self.host, timeout=timeout, connect_timeout=connect)
        return self._client

    async def close(self) -> None:
        """Close the HTTP connections to Ollama (idempotent)."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()


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


@contextmanager
def translate_errors(host: str, model: str | None, *, streaming: bool = False) -> Iterator[None]:
    """Re-raise Ollama client failures inside the block as the errors above.

    ``streaming``: the block reads an answer that has begun, so a transport error means
    Ollama broke it off.
    """
    what = f"model {model!r} at {host}" if model else host
    try:
        yield
    except ollama.ResponseError as exc:
        message = str(exc.error)
        if exc.status_code == 404 or "not found" in message.lower():
            raise ModelNotFound(
                f"Ollama at {host} has no model {model!r} ({message}); try `ollama pull {model}`",
                host=host,
                model=model,
            ) from None
        raise UpstreamError(
            f"Ollama error from {what} (HTTP {exc.status_code}): {message}",
            status=exc.status_code, host=host, model=model,
        ) from None  # fmt: skip
    except (ConnectionError, httpx.ConnectError) as exc:
        raise UpstreamUnavailable(f"cannot connect to Ollama at {host}: {exc}", host=host, model=model) from None
    except (httpx.TimeoutException, asyncio.TimeoutError):
        raise UpstreamUnavailable(f"Ollama at {host} timed out ({what})", host=host, model=model, status=504) from None
    except httpx.HTTPError as exc:
        how = "broke off its answer" if streaming else "failed"
        raise UpstreamUnavailable(f"Ollama at {host} {how} ({type(exc).__name__}: {exc})", host=host, model=model) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise UpstreamUnavailable(f"invalid response from {what}: {exc}", host=host, model=model) from None
