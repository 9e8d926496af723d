"""Error shaping for every route, and the bearer-token comparison (the guard, :mod:`.guard`, uses it).

Errors leave in the shape of the API that was called: native routes get
``{"ok": false, "error": message, "status": code}`` (a 409 adds ``retry``: whether the same
request can succeed if sent again in a moment, :class:`~arcology_oracle.errors.Conflict`;
a 503 of a model Ollama does not have adds ``missing_model``, its name: see
:func:`missing_model_field`), Ollama-compatible ``/api/*`` routes
``{"error": message}``, OpenAI-compatible ``/v1/*`` routes
``{"error": {"message", "type", "code"}}``. A 500 never carries the exception text.

Caching: every response says ``Cache-Control: no-store`` (:func:`no_store`) unless its
handler chose otherwise (only the web page's own files do, :mod:`.web`: they hold no note
text). Answers carry note text or a token, and a browser other than the page (which asks
``no-store`` itself), or a caching proxy on the way, must keep none of them.
"""

from __future__ import annotations

import hmac
import logging

from aiohttp import web

from ..errors import BadRequest, Conflict, ModelNotFound, NotFound, ServiceUnavailable
from .keys import settings_key

log = logging.getLogger(__name__)


def missing_model_field(exc: Exception) -> dict[str, str]:
    """``{"missing_model": name}`` for a :class:`~arcology_oracle.errors.ModelNotFound`
    naming its model, else ``{}``: the fact a client acts on (pull the model, then ask
    again) without reading the message's words, which say it for people. Native error
    bodies and the ``error`` events of streamed answers carry it."""
    if isinstance(exc, ModelNotFound) and exc.model:
        return {"missing_model": exc.model}
    return {}


def error_parts(
    path: str, status: int, message: str, retry: bool | None = None, extra: dict | None = None
) -> tuple[dict, dict[str, str]]:
    """The JSON body and extra headers of an error in the shape the API at ``path`` uses
    (see the module docstring; ``retry`` and the fields of ``extra`` go into a native
    body only); shared with the MCP port, which is not an aiohttp app."""
    if path.startswith("/api/"):
        body: dict = {"error": message}
    elif path.startswith("/v1/"):
        kind = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error"}.get(
            status, "server_error" if status >= 500 else "invalid_request_error"
        )
        body = {"error": {"message": message, "type": kind, "code": status}}
    else:
        body = {"ok": False, "error": message, "status": status}
        if retry is not None:
            body["retry"] = retry
        body.update(extra or {})
    headers = {"WWW-Authenticate": 'Bearer realm="arcology-oracle"'} if status == 401 else {}
    return body, headers


def error_response(
    request: web.Request, status: int, message: str, retry: bool | None = None, extra: dict | None = None
) -> web.Response:
    """A JSON error in the shape the called API uses (see the module docstring)."""
    body, headers = error_parts(request.path, status, message, retry, extra)
    return web.json_response(body, status=status, headers=headers or None)


def bearer_matches(header: str, token: str) -> bool:
    """Whether an ``Authorization`` header value is ``Bearer <token>`` (constant time).

    Header bytes that are not UTF-8 arrive as lone surrogates: such a header never
    matches, and is logged in one line.
    """
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    try:
        given_bytes = given.strip().encode("utf-8")
    except UnicodeEncodeError:
        log.warning("refused a request whose Authorization header is not UTF-8")
        return False
    return hmac.compare_digest(given_bytes, token.encode("utf-8"))


NO_STORE = "no-store"


async def no_store(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare``: ``Cache-Control: no-store`` unless the handler set one
    (streams and errors included: this runs when their headers are sent)."""
    response.headers.setdefault("Cache-Control", NO_STORE)


@web.middleware
async def error_middleware(request: web.Request, handler):
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        message = exc.text if exc.text and not exc.text.startswith(f"{exc.status}:") else exc.reason
        if exc.status == 413:
            message = f"request body too large (limit {request.app[settings_key].max_body_bytes} bytes)"
        return error_response(request, exc.status, message)
    except BadRequest as exc:
        return error_response(request, 400, str(exc))
    except NotFound as exc:
        return error_response(request, 404, str(exc))
    except Conflict as exc:
        return error_response(request, 409, str(exc), exc.retry)
    except ModelNotFound as exc:
        status = 404 if request.path.startswith(("/api/", "/v1/")) else 503
        return error_response(request, status, str(exc), extra=missing_model_field(exc))
    except ServiceUnavailable as exc:
        return error_response(request, 503, str(exc))
    except Exception:
        log.exception("error handling %s %s", request.method, request.path)
        return error_response(request, 500, "internal error; see the daemon's log")
