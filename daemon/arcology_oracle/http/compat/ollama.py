"""Ollama-compatible API: the daemon poses as an Ollama server.

``/api/chat``, ``/api/generate``, ``/api/tags``, ``/api/show``, ``/api/version``,
``/api/ps``, ``/api/embed`` and ``/api/embeddings`` behave as the upstream Ollama's (the settings'
``ollama_host``), to which they are proxied: bodies pass unchanged (options, tools,
images, format, keep_alive...), streams are relayed line by line as they arrive
(``Content-Type: application/x-ndjson``), errors keep Ollama's status and
``{"error": ...}``. Only grounded models (``<model>+notes``, see
:mod:`arcology_oracle.answers.grounding`) differ: the conversation gets the relevant notes as a
system message and the answer ends with a block of ``[[id:...][title]]`` links
(``sources_in_compat_answers``). Model management (pull, create, delete, push, copy)
is not offered: that stays with the real Ollama.

An unreachable upstream gives 502 (504 on a timeout) naming its host. A client that
disconnects cancels the upstream request, so Ollama stops generating. The pipeline is
:mod:`.pipeline`, shared with the OpenAI API (:mod:`.openai`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from ...answers import grounding
from ...errors import Stopping
from ...ollama.proxy import UpstreamError, UpstreamUnavailable, upstream_error
from ..keys import index_key
from ..middleware import error_response
from ..params import json_body, str_param
from ..streaming import Handler, cancelled_on_disconnect, stream
from .pipeline import (
    ChatPlan,
    answer_sources,
    complete,
    ensure_upstream,
    model_param,
    offered_models,
    plan_chat,
    plan_frames,
    require_chat_model,
    send_frames,
    upstream_key,
)

routes = web.RouteTableDef()

NDJSON = "application/x-ndjson"


def setup(app: web.Application) -> None:
    """Register the routes and, once per app, the upstream client (opened in a cleanup_ctx)."""
    ensure_upstream(app)
    app.add_routes(routes)


# --------------------------------------------------------------------------- plumbing


def upstream_errors(handler: Handler) -> Handler:
    """Answer upstream failures in the called API's error shape: Ollama's own status and
    message for its HTTP errors, 502/504 naming the host when it cannot be reached."""

    @functools.wraps(handler)
    async def wrapper(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except UpstreamError as exc:
            return error_response(request, exc.status, exc.message)
        except UpstreamUnavailable as exc:
            return error_response(request, exc.status, str(exc))

    return wrapper


async def relay_json(request: web.Request, method: str, path: str, body: Mapping[str, Any] | None = None
                     ) -> web.Response:  # fmt: skip
    """The upstream's answer, status and content type unchanged, but for a 404 naming no
    model: the server there is not Ollama, said as :mod:`...ollama.proxy` says it (502)."""
    model = body.get("model") if body else None
    model = model if isinstance(model, str) else None
    upstream = request.app[upstream_key]
    raw = await upstream.request(method, path, body, model=model)
    if raw.status == 404 and isinstance(error := upstream_error(raw.body, raw.status, upstream.host, model),
                                        UpstreamUnavailable):  # fmt: skip
        raise error
    return web.Response(status=raw.status, body=raw.body, headers={"Content-Type": raw.content_type})


async def relay_stream(request: web.Request, path: str, body: Mapping[str, Any]) -> web.StreamResponse:
    """Pass-through streaming: the upstream's lines, byte for byte, as they arrive."""

    def on_error(exc: Exception) -> bytes | None:
        return json.dumps({"error": str(exc)}).encode() + b"\n" if isinstance(exc, (UpstreamUnavailable, Stopping)) else None

    async with request.app[upstream_key].stream(path, body, model=body.get("model")) as lines:
        return await stream(request, lines, content_type=NDJSON, encode=lambda line: line + b"\n", on_error=on_error)


# --------------------------------------------------------------------------- generate


async def plan_generate(request: web.Request, body: dict[str, Any]) -> ChatPlan:
    """Ground an ``/api/generate`` body (its ``system``) when its model is a grounded name.
    A ``raw`` prompt has no system part, and a ``suffix`` asks for code to fill a gap
    (an editor's completion), so both are passed on without notes, their texts without
    their private parts all the same."""
    name = model_param(body)
    base, grounded = grounding.split_model(name)
    if not grounded:
        return ChatPlan(name, body)
    facts = await require_chat_model(request, base, name)
    prompt = str_param(body.get("prompt"), "prompt") or ""
    system = str_param(body.get("system"), "system")
    out = {**body, "model": base}
    index = request.app[index_key]
    if body.get("raw") or body.get("suffix"):
        texts = {"prompt": prompt, "system": system, "suffix": str_param(body.get("suffix"), "suffix")}
        cleaned = await grounding.without_private_prompt(index, *texts.values())
        out.update((key, text) for key, text in zip(texts, cleaned) if body.get(key) is not None)
        return ChatPlan(name, out, True)
    out["prompt"], system, sources, mode = await grounding.ground_prompt(index, prompt, system, model_system=facts.system)
    if system is not None:
        out["system"] = system
    return ChatPlan(name, out, True, answer_sources(request, sources, body), mode)


def _ndjson(frame: dict[str, Any]) -> bytes:
    return json.dumps(frame).encode() + b"\n"


async def _answer(request: web.Request, plan: ChatPlan, path: str) -> web.StreamResponse:
    streaming = plan.body.get("stream", True) is not False
    if not plan.grounded:
        return await (relay_stream(request, path, plan.body) if streaming else relay_json(request, "POST", path, plan.body))
    if not streaming:
        return web.json_response(await complete(request, plan, path), headers=plan.headers)
    frames = plan_frames(request, plan, path)
    return await send_frames(request, frames, content_type=NDJSON, encode=_ndjson, headers=plan.headers)


# --------------------------------------------------------------------------- routes


@routes.post("/api/chat")
@cancelled_on_disconnect
@upstream_errors
async def chat(request: web.Request) -> web.StreamResponse:
    body = await json_body(request)
    return await _answer(request, await plan_chat(request, body), "/api/chat")


@routes.post("/api/generate")
@cancelled_on_disconnect
@upstream_errors
async def generate(request: web.Request) -> web.StreamResponse:
    body = await json_body(request)
    return await _answer(request, await plan_generate(request, body), "/api/generate")


@routes.get("/api/tags")
@upstream_errors
async def tags(request: web.Request) -> web.Response:
    return web.json_response({"models": await offered_models(request)})


@routes.post("/api/show")
@upstream_errors
async def show(request: web.Request) -> web.Response:
    body = await json_body(request)
    if body.get("model") is None and body.get("name") is not None:  # older clients
        body = {**body, "model": body["name"]}
    name = model_param(body)
    base, grounded = grounding.split_model(name)
    if not grounded:
        return await relay_json(request, "POST", "/api/show", body)
    await require_chat_model(request, base, name)
    return await relay_json(request, "POST", "/api/show", {**body, "model": base, "name": base})


@routes.get("/api/version")
@upstream_errors
async def version(request: web.Request) -> web.Response:
    return await relay_json(request, "GET", "/api/version")


@routes.get("/api/ps")
@upstream_errors
async def running_models(request: web.Request) -> web.Response:
    """The models loaded in the upstream, for clients that show them."""
    return await relay_json(request, "GET", "/api/ps")


@routes.post("/api/embed")
@cancelled_on_disconnect
@upstream_errors
async def embed(request: web.Request) -> web.Response:
    return await relay_json(request, "POST", "/api/embed", await json_body(request))


@routes.post("/api/embeddings")
@cancelled_on_disconnect
@upstream_errors
async def embeddings(request: web.Request) -> web.Response:
    """The older single-text embedding endpoint some clients still use."""
    return await relay_json(request, "POST", "/api/embeddings", await json_body(request))
