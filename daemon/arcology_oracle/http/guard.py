"""Who may talk to the daemon: the Host, Origin and Content-Type rules.

These keep web pages in the user's browser away from the daemon, token or not:

- **Host** (DNS rebinding): a page whose name re-resolves to 127.0.0.1 sends its own name
  in ``Host``. A request is answered only when its ``Host`` names a loopback name or
  address (``localhost``, ``127.0.0.0/8``, ``::1``; any port), the configured ``host``,
  or a name in ``allowed_hosts``; otherwise it gets a 403 before any handler runs. A
  request without ``Host`` (HTTP/1.0 tools) is let through: browsers always send one.
- **Origin** (cross-site requests): a browser names the page that made a request in
  ``Origin``. A present ``Origin`` must be the daemon's own origin, the host and port the
  request's (already accepted) ``Host`` names; anything else, ``null`` included, is a 403.
  The scheme is not compared: behind ``tailscale serve`` the page is ``https://`` while
  the daemon speaks plain HTTP, and no one else can serve a page from the daemon's own
  host and port. curl, Emacs, gptel, ellama and the ``openai`` client send no Origin.
  Browsers leave ``Origin`` out of ``no-cors`` GETs (an ``<img>`` or ``<script>`` source,
  ``fetch(url, {mode: "no-cors"})``) but say ``Sec-Fetch-Site: same-site`` or
  ``cross-site`` there: such requests are refused too, except GETs that open a page in a
  window or tab (``Sec-Fetch-Mode: navigate``), whose answer the other page never sees.
- **Content-Type**: every POST, PUT or PATCH to a route must say
  ``Content-Type: application/json`` (parameters such as ``charset`` allowed), or it gets
  a 415. A page can send ``text/plain`` or a form without asking the server first; it
  cannot send ``application/json`` to another origin without a CORS preflight, which the
  Origin rule refuses.

Errors use the called API's shape (:func:`.middleware.error_response`).
"""

from __future__ import annotations

import ipaddress
import logging
from urllib.parse import urlsplit

from aiohttp import hdrs, web

from ..config import Settings, split_host
from .keys import settings_key
from .middleware import error_response

log = logging.getLogger(__name__)

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_OTHER_SITES = frozenset({"same-site", "cross-site"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_logged_hosts: set[str] = set()  # refused names already logged (bounded below)


def is_loopback_name(name: str) -> bool:
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_allowed(name: str, settings: Settings) -> bool:
    """Whether the daemon answers to host ``name`` (as :func:`~..config.split_host` gives it)."""
    configured = split_host(settings.host if ":" not in settings.host else f"[{settings.host}]")
    return is_loopback_name(name) or (configured is not None and name == configured[0]) or name in settings.allowed_hosts


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


def _log_refused_host(value: str, request: web.Request) -> None:
    if value in _logged_hosts or len(_logged_hosts) >= 100:
        return
    _logged_hosts.add(value)
    log.warning(
        "refused a request for host %r from %s (logged once per name): not a loopback name, the configured "
        "host or in allowed_hosts", value[:100], request.remote,
    )  # fmt: skip


@web.middleware
async def host_origin_middleware(request: web.Request, handler):
    """The Host and Origin rules (module docstring), before anything else runs."""
    raw_host = request.headers.get(hdrs.HOST)
    host = split_host(raw_host) if raw_host is not None else None
    if raw_host is not None and (host is None or not host_allowed(host[0], request.app[settings_key])):
        _log_refused_host(raw_host, request)
        return error_response(
            request, 403, f"this daemon does not answer to the host name {raw_host[:100]!r}; add it to "
            "allowed_hosts if it is yours",
        )  # fmt: skip
    origin = request.headers.get(hdrs.ORIGIN)
    if origin is not None and not same_origin(origin, host):
        return error_response(request, 403, f"requests from pages on {origin[:100]!r} are not answered")
    if request.headers.get("Sec-Fetch-Site") in _OTHER_SITES and not _is_navigation(request):
        return error_response(request, 403, "requests from other web pages are not answered")
    return await handler(request)


def _is_navigation(request: web.Request) -> bool:
    headers = request.headers
    return request.method in ("GET", "HEAD") and headers.get("Sec-Fetch-Mode") == "navigate" and (
        headers.get("Sec-Fetch-Dest") in (None, "document")
    )


@web.middleware
async def json_content_middleware(request: web.Request, handler):
    """The Content-Type rule (module docstring), for routes that exist."""
    if (
        request.method in BODY_METHODS
        and request.match_info.http_exception is None
        and request.content_type.lower() != "application/json"
    ):
        return error_response(
            request, 415, "send the body as JSON with the header Content-Type: application/json "
            "(curl: --json, or -H 'Content-Type: application/json')",
        )  # fmt: skip
    return await handler(request)
