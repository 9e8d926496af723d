"""The upstream Ollama as seen by the compatible APIs: a small, faithful proxy client.

The compatible endpoints forward request bodies as they are (options, tools, images,
format, keep_alive and any field this module does not know) and relay answers line by
line, so this client never builds requests from typed fields as the ``ollama`` package
does. It is a plain ``httpx`` client made by :func:`~.client.make_http` (the timeouts and
connection limits of the official client's) serving the whole daemon:
:meth:`Upstream.open` and :meth:`Upstream.close` belong in a ``cleanup_ctx``.

Failures, through the package's one translator (:func:`~.client.translate_errors`):

* Ollama answered with an HTTP error: :class:`UpstreamError` carrying its status and its
  own message, so a proxy can hand both on unchanged.
* Ollama cannot be reached, timed out, broke off a stream or answered something that is
  not its API (a 404 that names no model: no Ollama answers there):
  :class:`UpstreamUnavailable`, whose message names the host and whose ``status`` is 502
  (504 for a timeout).

Both derive from :class:`~arcology_oracle.errors.ServiceUnavailable`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from .client import (
    UpstreamError,
    UpstreamUnavailable,
    cancelled_once,
    close_unless_cancelled,
    make_http,
    not_ollama,
    says_no_model,
    translate_errors,
)

__all__ = ["ModelFacts", "RawResponse", "Upstream", "UpstreamError", "UpstreamUnavailable", "error_message", "upstream_error"]

_NEWLINE = b"\n"
_JSON = {"Content-Type": "application/json"}


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


def upstream_error(body: bytes, status: int, host: str, model: str | None) -> UpstreamError | UpstreamUnavailable:
    """The error for Ollama's answer ``body`` with the error ``status``: Ollama's own
    (:class:`UpstreamError`, passed on to clients as it is), or, for a 404 that names no
    model (a server at ``host`` that is not Ollama), :func:`~.client.not_ollama`'s."""
    message = error_message(body, status)
    if status == 404 and not says_no_model(message):
        return not_ollama(host, status, message, model)
    return UpstreamError(message, status=status, host=host, model=model)


@dataclass(frozen=True)
class ModelFacts:
    """From ``/api/show``: ``capabilities`` (None when this Ollama does not report them),
    ``details`` (family, families, parameter size...) and ``system``, the Modelfile's
    ``SYSTEM`` prompt (None for none)."""

    capabilities: list[str] | None
    details: dict[str, Any] | None
    system: str | None = None


class Upstream:
    """The upstream Ollama at ``host``. Create, ``await open()``, use, ``await close()``.

    ``timeout`` bounds each wait for data (a model can take long to load before its
    first token, so it is a read timeout, not a total); ``connect_timeout`` bounds
    connecting.
    """

    def __init__(self, host: str, *, timeout: float, connect_timeout: float):
        self.host = host.rstrip("/")
        self._timeouts = (timeout, connect_timeout)
        self._http: httpx.AsyncClient | None = None
        # name -> (digest or None, facts): /api/show answers only change when the
        # model does, and then its digest changes.
        self._shown: dict[str, tuple[str | None, ModelFacts]] = {}

    async def open(self) -> None:
        if self._http is None:
            timeout, connect = self._timeouts
            self._http = make_http(self.host, timeout=timeout, connect_timeout=connect)

    async def close(self) -> None:
        http, self._http = self._http, None
        if http is not None:
            await http.aclose()

    @property
    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            raise RuntimeError("Upstream.open() has not been awaited")
        return self._http

    # -- plain requests -----------------------------------------------------------------

    async def request(self, method: str, path: str, body: Mapping[str, Any] | None = None,
                      *, model: str | None = None) -> RawResponse:  # fmt: skip
        """Send ``body`` (JSON) and return the answer whatever its status.

        Raises :class:`UpstreamUnavailable` when Ollama cannot be reached or times out.
        """
        data = None if body is None else json.dumps(body).encode()
        headers = _JSON if data is not None else None
        with translate_errors(self.host, model):
            resp = await cancelled_once(self.http.request(method, path, content=data, headers=headers))
        return RawResponse(resp.status_code, resp.headers.get("Content-Type", "application/json"), resp.content)

    async def json(self, method: str, path: str, body: Mapping[str, Any] | None = None,
                   *, model: str | None = None) -> Any:  # fmt: skip
        """The JSON answer of a successful request; :class:`UpstreamError` otherwise."""
        raw = await self.request(method, path, body, model=model)
        if raw.status >= 400:
            raise upstream_error(raw.body, raw.status, self.host, model)
        with translate_errors(self.host, model):
            return raw.json()

    # -- streaming ----------------------------------------------------------------------

    @asynccontextmanager
    async def stream(self, path: str, body: Mapping[str, Any], *, model: str | None = None
                     ) -> AsyncIterator[AsyncIterator[bytes]]:  # fmt: skip
        """POST ``body`` and yield an iterator over the answer's non-empty lines (bytes,
        without the newline) as they arrive.

        Raises :class:`UpstreamError` before yielding when Ollama answers an error status,
        and :class:`UpstreamUnavailable` (from the context or while iterating) when it
        cannot be reached or breaks the stream off. Leaving the context early (an
        exception, a cancellation, even a repeated one: :func:`~.client.cancelled_once`)
        closes the connection, so Ollama stops generating.
        """
        request = self.http.build_request("POST", path, content=json.dumps(body).encode(), headers=_JSON)
        with translate_errors(self.host, model):
            resp = await cancelled_once(self.http.send(request, stream=True), orphan=lambda resp: resp.aclose())
        try:
            if resp.status_code >= 400:
                with translate_errors(self.host, model):
                    raw = await cancelled_once(resp.aread())
                raise upstream_error(raw, resp.status_code, self.host, model)
            yield self._lines(resp, model)
        finally:
            # An answer left unread closes its connection rather than going back to the pool.
            await close_unless_cancelled(resp.aclose)

    async def _lines(self, resp: httpx.Response, model: str | None) -> AsyncIterator[bytes]:
        # Ollama streams one JSON object per line; a generate's final line carries the
        # whole token context, so lines are split here, with no length limit.
        buffer = bytearray()
        chunks = resp.aiter_bytes()
        with translate_errors(self.host, model, streaming=True):
            while (chunk := await cancelled_once(anext(chunks, None))) is not None:
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
        system = shown.get("system")
        facts = ModelFacts(
            [c for c in caps if isinstance(c, str)] if isinstance(caps, list) else None,
            details if isinstance(details, dict) else None,
            system if isinstance(system, str) and system else None,
        )
        self._shown[name] = (digest, facts)
        return facts
