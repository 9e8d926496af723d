"""OpenAI-compatible API over the upstream Ollama: ``/v1/chat/completions``,
``/v1/models`` (and ``/v1/models/{id}``), ``/v1/embeddings``.

Requests are translated to Ollama's ``/api/chat`` and ``/api/embed`` and answers back
(:mod:`.openai_shapes`), in the shapes Ollama's own OpenAI layer uses. Chat runs
through the same pipeline as the Ollama API (:mod:`.pipeline`), so grounded models
(``<model>+notes``) work the same way here. Streaming is Server-Sent Events
(``Content-Type: text/event-stream``): ``data: {chunk}`` lines, then ``data: [DONE]``; an
error after the stream began is sent as ``data: {"error": {...}}`` with no ``[DONE]``.

Errors are ``{"error": {"message", "type", ...}}``; a model the upstream lacks is 404
with ``"code": "model_not_found"``, as OpenAI answers.
"""

from __future__ import annotations

import functools
import json
from struct import error as struct_error
from typing import Any

from aiohttp import web

from ...answers import grounding
from ...errors import BadRequest
from ...ollama.proxy import UpstreamError, UpstreamUnavailable
from ..middleware import error_response
from ..params import json_body, str_param
from ..streaming import Handler, cancelled_on_disconnect
from . import openai_shapes as shapes
from .pipeline import (
    UnknownModel,
    complete,
    ensure_upstream,
    offered_models,
    plan_chat,
    plan_frames,
    send_frames,
    upstream_key,
)

routes = web.RouteTableDef()

SSE = "text/event-stream"


def setup(app: web.Application) -> None:
    ensure_upstream(app)
    app.add_routes(routes)


def model_not_found(message: str) -> web.Response:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": "model", "code": "model_not_found"}}
    return web.json_response(body, status=404)


def openai_errors(handler: Handler) -> Handler:
    """Unknown models as OpenAI's 404 ``model_not_found``; other upstream failures with
    the upstream's status (502/504 when it cannot be reached), in OpenAI's shape."""

    @functools.wraps(handler)
    async def wrapper(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except UnknownModel as exc:
            return model_not_found(str(exc))
        except UpstreamError as exc:
            if exc.status == 404:
                return model_not_found(exc.message)
            return error_response(request, exc.status, exc.message)
        except UpstreamUnavailable as exc:
            return error_response(request, exc.status, str(exc))

    return wrapper


def _sse(data: Any) -> bytes:
    return b"data: " + json.dumps(data).encode() + b"\n\n"


@routes.post("/v1/chat/completions")
@cancelled_on_disconnect
@openai_errors
async def chat_completions(request: web.Request) -> web.StreamResponse:
    body = await json_body(request)
    str_param(body.get("model"), "model", required=True, max_len=500)
    plan = await plan_chat(request, shapes.openai_chat_to_ollama(body))
    if not plan.body.get("stream"):
        answer = await complete(request, plan, "/api/chat")
        return web.json_response(shapes.openai_completion(answer, model=plan.name), headers=plan.headers)
    stream_options = body.get("stream_options") if isinstance(body.get("stream_options"), dict) else {}
    translator = shapes.ChunkTranslator(plan.name, include_usage=bool(stream_options.get("include_usage")))

    def encode(frame: dict[str, Any]) -> bytes:
        if "error" in frame:
            return _sse({"error": {"message": str(frame["error"]), "type": "api_error"}})
        return b"".join(_sse(chunk) for chunk in translator.translate(frame))

    frames = plan_frames(request, plan, "/api/chat")
    return await send_frames(request, frames, content_type=SSE, encode=encode, trailer=b"data: [DONE]\n\n",
                             headers=plan.headers)  # fmt: skip


@routes.get("/v1/models")
@openai_errors
async def models(request: web.Request) -> web.Response:
    return web.json_response(shapes.openai_models(await offered_models(request)))


@routes.get("/v1/models/{model:.+}")
@openai_errors
async def model(request: web.Request) -> web.Response:
    wanted = request.match_info["model"]
    for entry in await offered_models(request):
        if grounding.same_model(wanted, grounding.entry_name(entry)):
            return web.json_response({**shapes.openai_model(entry), "id": wanted})
    return model_not_found(f"The model `{wanted}` does not exist")


@routes.post("/v1/embeddings")
@cancelled_on_disconnect
@openai_errors
async def embeddings(request: web.Request) -> web.Response:
    body = await json_body(request)
    name = str_param(body.get("model"), "model", required=True, max_len=500)
    encoding = body.get("encoding_format")
    if encoding not in (None, "float", "base64"):
        raise BadRequest('encoding_format must be "float" or "base64"')
    upstream = request.app[upstream_key]
    answer = await upstream.json("POST", "/api/embed", shapes.openai_embeddings_to_ollama(body), model=name)
    try:
        return web.json_response(shapes.openai_embeddings(answer, model=name, encoding_format=encoding))
    except (ValueError, TypeError, struct_error) as exc:
        raise UpstreamUnavailable(f"the upstream Ollama at {upstream.host} sent malformed embeddings ({exc})",
                                  host=upstream.host) from None  # fmt: skip
