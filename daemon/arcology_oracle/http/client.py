"""The client side of the native HTTP API: how programs beside the daemon (the MCP
server) reach a running daemon.

:class:`DaemonClient` sends the bearer token when one is configured and turns every
failure into a domain error whose message names the daemon's URL: a refused or timed-out
connection is :class:`DaemonUnreachable`; a JSON error answer is :class:`NotFound` (404),
:class:`Conflict` (a 409 with its ``retry``), :class:`BadRequest` (other 4xx) or
:class:`DaemonError` (5xx, 401, anything unexpected).
It never returns partial data and never raises an ``httpx`` exception.
"""

from __future__ import annotations

from typing import Any

import httpx

from ..config import Settings
from ..errors import BadRequest, Conflict, NotFound, OracleError, ServiceUnavailable

_WILDCARD_HOSTS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}


class DaemonUnreachable(ServiceUnavailable):
    """No daemon answers at the URL (connection refused, timed out, name unknown)."""


class DaemonError(OracleError):
    """The daemon answered with an error that is not the caller's to fix (5xx, 401)."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def daemon_url(settings: Settings) -> str:
    """Where the daemon of ``settings`` listens: ``daemon_url`` if set, else
    ``http://host:port`` (a wildcard bind address is reached through loopback)."""
    if settings.daemon_url:
        return settings.daemon_url
    host = _WILDCARD_HOSTS.get(settings.host, settings.host)
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{settings.port}"


class DaemonClient:
    """An asynchronous client of one daemon. Use ``async with`` or call :meth:`aclose`."""

    def __init__(self, url: str, token: str | None = None, *, timeout: float = 60.0, connect_timeout: float = 5.0):
        self.url = url.rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.AsyncClient(
            base_url=self.url, headers=headers, timeout=httpx.Timeout(timeout, connect=connect_timeout)
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> "DaemonClient":
        return cls(daemon_url(settings), settings.token, connect_timeout=settings.connect_timeout)

    async def __aenter__(self) -> "DaemonClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def get(self, path: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """GET ``path`` and return its JSON object. Raises the errors in the module docstring."""
        clean = {k: str(v) for k, v in (params or {}).items() if v is not None}
        return await self._request("GET", path, params=clean)

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` as JSON to ``path`` and return the JSON object answered."""
        return await self._request("POST", path, json=body)

    async def _request(self, method: str, path: str, **kwargs) -> dict[str, Any]:
        try:
            resp = await self._http.request(method, path, **kwargs)
        except httpx.TimeoutException:
            raise DaemonUnreachable(f"the arcology-oracle daemon at {self.url} did not answer in time") from None
        except httpx.TransportError as exc:
            raise DaemonUnreachable(
                f"no arcology-oracle daemon answers at {self.url} ({exc.__class__.__name__}); "
                "start it with `arcology-oracle serve`, or point daemon_url (ARCOLOGY_ORACLE_DAEMON_URL) at it"
            ) from None
        try:
            body = resp.json()
        except ValueError:
            body = None
        if resp.status_code == 200 and isinstance(body, dict):
            return body
        message = _error_text(body) or f"HTTP {resp.status_code}"
        if resp.status_code == 404:
            raise NotFound(message)
        if resp.status_code == 409 and isinstance(body, dict) and isinstance(body.get("retry"), bool):
            raise Conflict(message, retry=body["retry"])
        if resp.status_code == 401:
            raise DaemonError(f"the daemon at {self.url} refused the token: {message}", 401)
        if 400 <= resp.status_code < 500:
            raise BadRequest(message)
        raise DaemonError(f"the daemon at {self.url} answered {resp.status_code}: {message}", resp.status_code)


def _error_text(body: Any) -> str | None:
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, dict):
        error = error.get("message")
    return str(error) if error else None
