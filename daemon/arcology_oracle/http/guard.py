"""Who may talk to the daemon: the Host, Origin, token and Content-Type rules.

One guard, :func:`refusal`, for both of the daemon's ports: the aiohttp app's
(:func:`guard_middleware`) and the MCP port's (``serve --mcp-port``, an ASGI app that
calls :func:`refusal` the same way). It reads a request's method, path and headers only,
and checks, in this order, the first failure answering:

- **Account** (other people on the machine): without a token the daemon listens on
  loopback, where every account of the machine can connect. On Linux it asks the kernel
  which account opened each connection (:mod:`.peers`) and answers only programs of the
  account it runs as; another account's gets a 403, and so does a connection the kernel
  no longer lists. With a token the token decides instead (a proxy such as ``tailscale
  serve`` connects as its own account). Where the kernel cannot be asked (macOS), every
  account is answered, as the daemon's log says when it starts.
- **Host** (DNS rebinding): a page whose name re-resolves to 127.0.0.1 sends its own name
  in ``Host``. A request is answered only when its ``Host`` names a loopback name or
  address (``localhost``, ``127.0.0.0/8``, ``::1``; any port, any letter case, a trailing
  dot allowed), the configured ``host``, or a name in ``allowed_hosts``; otherwise 403. A
  request without ``Host`` (HTTP/1.0 tools) is let through: browsers always send one.
- **Origin** (cross-site requests): a browser names the page that made a request in
  ``Origin``. A present ``Origin`` must be the port's own origin, the host and port the
  request's (already accepted) ``Host`` names; anything else, ``null`` included, is a 403.
  The scheme is not compared: behind ``tailscale serve`` the page is ``https://`` while
  the daemon speaks plain HTTP, and no one else can serve a page from the daemon's own
  host and port. curl, Emacs, gptel, ellama and the ``openai`` client send no Origin.
  Browsers leave ``Origin`` out of ``no-cors`` GETs (an ``<img>`` or ``<script>`` source,
  ``fetch(url, {mode: "no-cors"})``) but say ``Sec-Fetch-Site: same-site`` or
  ``cross-site`` there: such requests are refused too, except GETs that open the daemon's
  own page (``/``, ``/static/*``) in a window or tab (``Sec-Fetch-Mode: navigate``), whose
  answer the other page never sees; a link to any other route (``/ask?q=...`` would run
  the model on a question and a model another page chose) is refused.
- **Token**: with a token configured, every request but ``/health`` and the web page's
  own files (``GET /``, ``/static/*``) must carry ``Authorization: Bearer <token>``, else 401.
- **Content-Type**: a POST, PUT or PATCH to a route must say
  ``Content-Type: application/json`` (parameters such as ``charset`` allowed), or it gets
  a 415. A page can send ``text/plain``, a form or ``multipart/form-data`` without asking
  the server first; it cannot send ``application/json`` to another origin without a CORS
  preflight, which the Origin rule refuses. One exception, for Ollama's and OpenAI's own
  examples (``curl URL/api/generate -d '{...}'`` sends a form type): on ``/api/*`` and
  ``/v1/*``, a request no web page could have sent, with neither ``Origin`` nor any
  ``Sec-Fetch-*`` header, may carry its JSON under any Content-Type, as Ollama accepts
  it. Browsers send ``Origin`` with every POST (``null`` when they hide the page) and
  ``Sec-Fetch-*`` with every request to a loopback address, so a page's request keeps the
  rule.

Errors use the called API's shape (:func:`.middleware.error_parts`).
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import os
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import hdrs, web

from ..config import Settings, split_host
from . import peers
from .keys import settings_key
from .middleware import bearer_matches, error_response

log = logging.getLogger(__name__)

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
PUBLIC_PATHS = frozenset({"/health"})
# Ollama- and OpenAI-compatible routes: JSON under any Content-Type from non-browsers.
COMPAT_PREFIXES = ("/api/", "/v1/")
_OTHER_SITES = frozenset({"same-site", "cross-site"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_logged_hosts: set[str] = set()  # refused names already logged (bounded below)


@dataclass(frozen=True)
class Incoming:
    """What the guard reads of a request, whichever server received it. ``headers``
    looks names up case-insensitively (a multidict); ``route_exists`` is False for a
    path no handler serves (the Content-Type rule leaves those to the 404); ``account``
    is the connection's :func:`.peers.account_of` (read only when no token is set)."""

    method: str
    path: str
    headers: Mapping[str, str]
    remote: str | None = None
    route_exists: bool = True
    account: int | None = peers.UNKNOWN


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str


def refusal(request: Incoming, settings: Settings) -> Refusal | None:
    """The answer the guard gives instead of the handler's, or None to let it through
    (the rules and their order: the module docstring)."""
    token = settings.token
    if not token and request.account is not peers.UNKNOWN and request.account != os.geteuid():
        return Refusal(
            403, "this daemon answers only programs of the account it runs as; "
            "to let another account in, set a token (see \"Who may talk to the daemon\")",
        )  # fmt: skip
    headers = request.headers
    raw_host = headers.get(hdrs.HOST)
    host = split_host(raw_host) if raw_host is not None else None
    if raw_host is not None and (host is None or not host_allowed(host[0], settings)):
        _log_refused_host(raw_host, request.remote)
        return Refusal(
            403, f"this daemon does not answer to the host name {raw_host[:100]!r}; add it to allowed_hosts if it is yours"
        )
    origin = headers.get(hdrs.ORIGIN)
    if origin is not None and not same_origin(origin, host):
        return Refusal(403, f"requests from pages on {origin[:100]!r} are not answered")
    if headers.get("Sec-Fetch-Site") in _OTHER_SITES and not _is_navigation(request):
        return Refusal(403, "requests from other web pages are not answered")
    if token and not _is_public(request) and not bearer_matches(headers.get(hdrs.AUTHORIZATION, ""), token):
        return Refusal(401, "missing or wrong bearer token")
    if (
        request.method in BODY_METHODS
        and request.route_exists
        and mimetype(headers.get(hdrs.CONTENT_TYPE)) != "application/json"
        and not (request.path.startswith(COMPAT_PREFIXES) and not from_browser(headers))
    ):
        return Refusal(
            415, "send the body as JSON with the header Content-Type: application/json "
            "(curl: --json, or -H 'Content-Type: application/json')",
        )  # fmt: skip
    return None


@web.middleware
async def guard_middleware(request: web.Request, handler):
    """:func:`refusal` for the aiohttp app, before any handler runs."""
    settings = request.app[settings_key]
    incoming = Incoming(
        request.method, request.path, request.headers, request.remote, request.match_info.http_exception is None,
        peers.UNKNOWN if settings.token else await _account(request.transport),
    )  # fmt: skip
    found = refusal(incoming, settings)
    if found is not None:
        return error_response(request, found.status, found.message)
    return await handler(request)


# Each open connection's account, asked of the kernel once (its first request), not on
# every request of a kept-alive connection. Gone with the connection.
_accounts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


async def _account(transport) -> int | None:
    """:func:`.peers.account_of` for an aiohttp request's connection (``NOBODY`` once it
    is closed), off the event loop where asking is slow (:func:`.peers.account_of_off_loop`)."""
    if transport is None:
        return peers.NOBODY
    account = _accounts.get(transport, False)
    if account is False:
        account = await peers.account_of_off_loop(
            transport.get_extra_info("peername"), transport.get_extra_info("sockname")
        )
        _accounts[transport] = account
    return account


def mimetype(content_type: str | None) -> str:
    """The lowercased type/subtype of a Content-Type value, parameters dropped ("" if none)."""
    return (content_type or "").partition(";")[0].strip().lower()


def from_browser(headers: Mapping[str, str]) -> bool:
    """Whether a request carries what every browser adds to a request a page could make."""
    return hdrs.ORIGIN in headers or any(name.lower().startswith("sec-fetch-") for name in headers)


@functools.lru_cache(maxsize=256)  # a pure function of the name; every request asks it
def is_loopback_name(name: str) -> bool:
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_allowed(name: str, settings: Settings) -> bool:
    """Whether the daemon answers to host ``name`` (as :func:`~..config.split_host` gives it)."""
    configured = _configured_host(settings.host)
    return is_loopback_name(name) or (configured is not None and name == configured[0]) or name in settings.allowed_hosts


@functools.lru_cache(maxsize=16)
def _configured_host(host: str) -> tuple[str, int | None] | None:
    """``Settings.host`` as :func:`~..config.split_host` reads a Host header (an IPv6
    address bracketed first)."""
    return split_host(host if ":" not in host else f"[{host}]")


def same_origin(origin: str, host: tuple[str, int | None] | None) -> bool:
    """Whether ``Origin: origin`` is the page the request's ``Host`` names (see the module
    docstring: host and port compared, the scheme's default port filled in)."""
    if host is None:
        return False
    try:
        parts = urlsplit(origin.strip())
        origin_port = parts.port
    except ValueError:
        return False
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path or parts.username:
        return False
    default = _DEFAULT_PORTS[parts.scheme]
    name, port = host
    return parts.hostname.rstrip(".") == name and (origin_port or default) == (port or default)


def _log_refused_host(value: str, remote: str | None) -> None:
    if value in _logged_hosts or len(_logged_hosts) >= 100:
        return
    _logged_hosts.add(value)
    log.warning(
        "refused a request for host %r from %s (logged once per name): not a loopback name, the configured "
        "host or in allowed_hosts", value[:100], remote,
    )  # fmt: skip


def _is_navigation(request: Incoming) -> bool:
    """A link that opens the daemon's own page in a window or tab. Only the page (and its
    files): a link to ``/ask?q=...`` would have the model answer a question another page
    chose, with a model it chose."""
    headers = request.headers
    return (
        request.method in ("GET", "HEAD")
        and headers.get("Sec-Fetch-Mode") == "navigate"
        and headers.get("Sec-Fetch-Dest") in (None, "document")
        and (request.path == "/" or request.path.startswith("/static/"))
    )


def _is_public(request: Incoming) -> bool:
    """``/health``, and the web page and its static files: they carry no note text; the
    page asks for the token itself and sends it with every API call."""
    return request.path in PUBLIC_PATHS or (
        request.method in ("GET", "HEAD") and (request.path == "/" or request.path.startswith("/static/"))
    )
