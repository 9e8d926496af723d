"""The upstream Ollama as seen by the compatible APIs: a small, faithful proxy client.

The compatible endpoints forward request bodies as they are (options, tools, images,
format, keep_alive and any field this module does not know) and relay answers line by
line, so this client never builds requests from typed fields as the ``ollama`` package
does. One :class:`aiohttp.ClientSession` serves the whole daemon: :meth:`Upstream.open`
and :meth:`Upstream.close` belong in a ``cleanup_ctx``.

Failures:

* Ollama answered with an HTTP error: :class:`UpstreamError` carrying its status and its
  own message, so a proxy can hand both on unchanged.
* Ollama cannot be reached, timed out, broke off a stream or answered something that is
  not its API: :class:`UpstreamUnavailable`, whose message names the host and whose
  ``status`` is 502 (504 for a timeout).

Both derive from :class:`~arcology_oracle.errors.ServiceUnavailable`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp

from ..errors import ServiceUnavailable

log = logging.getLogger(__name__)

# Ollama streams one JSON object per line; a generate's final line carries the whole
# token context, which can exceed aiohttp's readline limit, so lines are split here.
_NEWLINE = b"\n"


class UpstreamError(ServiceUnavailable):
    """The upstream Ollama answered with an HTTP error status (``status``, ``message``)."""

    def __init__(self, message: str, *, status: int, host: str, model: str | None = None):
        super().__init__(message, host=host, model=model)
        self.status = status
        self.message = message


class UpstreamUnavailable(ServiceUnavailable):
    """The upstream Ollama cannot be reached or did not speak its API; see ``status``."""

    def __init__(self, message: str, *, host: str, model: str | None = None, status: int = 502):
        super().__init__(message, host=host, model=model)
        self.status = status


@dataclass(frozen=True)
class RawResponse:
    """An upstream answer as received: status, content type and body bytes."""

    status: int
    content_type: str
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def error_message(body: bytes, status: int) -> str:
    """Ollama's ``{"error": ...}`` message from an error body, else the body's text."""
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        data = None
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return data["error"]
    text = body.decode("utf-8", "replace").strip()
    return text[:500] or f"HTTP {status}"


@dataclass(frozen=True)
class ModelFacts:
    """From ``/api/show``: ``capabilities`` (None when this Ollama does not report them)
    and ``details`` (family, families, parameter size...)."""

    capabilities: list[str] | None
    details: dict[str, Any] | None


class Upstream:
    """The upstream Ollama at ``host``. Create, ``await open()``, use, ``await close()``.

    ``timeout`` bounds each wait for data (a model can take long to load before its
    first token, so it is a read timeout, not a total); ``connect_timeout`` bounds
    connecting.
    """

    def __init__(self, host: str, *, timeout: float, connect_timeout: float):
        self.host = host.rstrip("/")
        self._timeout = aiohttp.ClientTimeout(total=None, connect=connect_timeout, sock_read=timeout)
        self._session: aiohttp.ClientSession | None = None
        # name -> (digest or None, facts): /api/show answers only change when the
        # model does, and then its digest changes.
        self._shown: dict[str, tuple[str | None, ModelFacts]] = {}

    async def open(self) -> None:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=self._timeout, raise_for_status=False)

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise RuntimeError("Upstream.open() has not been awaited")
        return self._session

    # -- plain requests -----------------------------------------------------------------

    async def request(self, method: str, path: str, body: Mapping[str, Any] | None = None,
                      *, model: str | None = None) -> RawResponse:  # fmt: skip
        """Send ``body`` (JSON) and return the answer whatever its status.

        Raises :class:`UpstreamUnavailable` when Ollama cannot be reached or times out.
        """
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else None
        with self._translate(model):
            async with self.session.request(method, self.host + path, data=data, headers=headers) as resp:
                raw = await resp.read()
        return RawResponse(resp.status, resp.headers.get("Content-Type", "application/json"), raw)

    async def json(self, method: str, path: str, body: Mapping[str, Any] | None = None,
                   *, model: str | None = None) -> Any:  # fmt: skip
        """The JSON answer of a successful request; :class:`UpstreamError` otherwise."""
        raw = await self.request(method, path, body, model=model)
        if raw.status >= 400:
            raise UpstreamError(error_message(raw.body, raw.status), status=raw.status, host=self.host, model=model)
        try:
            return raw.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise UpstreamUnavailable(
                f"the upstream Ollama at {self.host} sent an answer to {path} that is not JSON",
                host=self.host, model=model,
            ) from None  # fmt: skip

    # -- streaming ----------------------------------------------------------------------

    @asynccontextmanager
    async def stream(self, path: str, body: Mapping[str, Any], *, model: str | None = None
                     ) -> AsyncIterator[AsyncIterator[bytes]]:  # fmt: skip
        """POST ``body`` and yield an iterator over the answer's non-empty lines (bytes,
        without the newline) as they arrive.

        Raises :class:`UpstreamError` before yielding when Ollama answers an error status,
        and :class:`UpstreamUnavailable` (from the context or while iterating) when it
        cannot be reached or breaks the stream off. Leaving the context early (an
        exception, a cancellation) closes the connection, so Ollama stops generating.
        """
        data = json.dumps(body).encode()
        with self._translate(model):
            resp = await self.session.post(self.host + path, data=data, headers={"Content-Type": "application/json"})
        try:
            if resp.status >= 400:
                with self._translate(model):
                    raw = await resp.read()
                raise UpstreamError(error_message(raw, resp.status), status=resp.status, host=self.host, model=model)
            yield self._lines(resp, model)
        finally:
            if resp.content.at_eof():
                resp.release()
            else:
                resp.close()  # left early: drop the connection so Ollama stops generating

    async def _lines(self, resp: aiohttp.ClientResponse, model: str | None) -> AsyncIterator[bytes]:
        buffer = bytearray()
        with self._translate(model, streaming=True):
            async for chunk in resp.content.iter_any():
                buffer += chunk
                start = 0
                while (end := buffer.find(_NEWLINE, start)) >= 0:
                    line = bytes(buffer[start:end]).strip()
                    start = end + 1
                    if line:
                        yield line
                del buffer[:start]
        rest = bytes(buffer).strip()
        if rest:
            yield rest

    # -- models -------------------------------------------------------------------------

    async def tags(self) -> list[dict[str, Any]]:
        """The ``models`` list of ``GET /api/tags``, entries unchanged."""
        data = await self.json("GET", "/api/tags")
        models = data.get("models") if isinstance(data, dict) else None
        if not isinstance(models, list):
            raise UpstreamUnavailable(f"the upstream Ollama at {self.host} sent a model list without 'models'",
                                      host=self.host)  # fmt: skip
        return [m for m in models if isinstance(m, dict) and isinstance(m.get("name") or m.get("model"), str)]

    async def show_facts(self, name: str, digest: str | None = None) -> ModelFacts:
        """What ``/api/show`` says about ``name``, cached while ``digest`` (from
        ``/api/tags``; None: any) is unchanged. Raises UpstreamError (404 for a model
        Ollama does not have)."""
        cached = self._shown.get(name)
        if cached is not None and (digest is None or cached[0] in (None, digest)):
            return cached[1]
        shown = await self.json("POST", "/api/show", {"model": name}, model=name)
        shown = shown if isinstance(shown, dict) else {}
        caps = shown.get("capabilities")
        details = shown.get("details")
        facts = ModelFacts(
            [c for c in caps if isinstance(c, str)] if isinstance(caps, list) else None,
            details if isinstance(details, dict) else None,
        )
        self._shown[name] = (digest, facts)
        return facts

    def _translate(self, model: str | None, *, streaming: bool = False):
        return _translated(self.host, model, streaming)


@contextmanager
def _translated(host: str, model: str | None, streaming: bool) -> Iterator[None]:
    """Turn aiohttp client failures inside the block into UpstreamUnavailable."""
    try:
        yield
    except asyncio.TimeoutError:
        raise UpstreamUnavailable(f"the upstream Ollama at {host} timed out", host=host, model=model,
                                  status=504) from None  # fmt: skip
    except aiohttp.ClientConnectorError as exc:
        reason = exc.os_error.strerror or str(exc.os_error) or type(exc.os_error).__name__
        raise UpstreamUnavailable(f"cannot connect to the upstream Ollama at {host}: {reason}",
                                  host=host, model=model) from None  # fmt: skip
    except aiohttp.ClientError as exc:
        what = "broke off its answer" if streaming else "failed"
        raise UpstreamUnavailable(f"the upstream Ollama at {host} {what} ({type(exc).__name__}: {exc})",
                                  host=host, model=model) from None  # fmt: skip
