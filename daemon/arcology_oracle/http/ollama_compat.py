"""Ollama-compatible API: the daemon poses as an Ollama server.

``/api/chat``, ``/api/generate``, ``/api/tags``, ``/api/show``, ``/api/version``,
``/api/ps``, ``/api/embed`` and ``/api/embeddings`` behave as the upstream Ollama's (the settings'
``ollama_host``), to which they are proxied: bodies pass unchanged (options, tools,
images, format, keep_alive...), streams are relayed line by line as they arrive
(``Content-Type: application/x-ndjson``), errors keep Ollama's status and
``{"error": ...}``. Only grounded models (``<model>+notes``, see
:mod:`arcology_oracle.compat`) differ: the conversation gets the relevant notes as a
system message and the answer ends with a block of ``[[id:...][title]]`` links
(``sources_in_compat_answers``). Model management (pull, create, delete, push, copy)
is not offered: that stays with the real Ollama.

An unreachable upstream gives 502 (504 on a timeout) naming its host. A client that
disconnects cancels the upstream request, so Ollama stops generating. The OpenAI API
(:mod:`.openai_compat`) reuses the pipeline defined here.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from ..answers import grounding as compat
from ..errors import BadRequest, NotFound
from ..ollama.proxy import Upstream, UpstreamError, UpstreamUnavailable
from .disconnect import client_gone
from .keys import index_key, settings_key
from .middleware import error_response
from .params import json_body, str_param

log = logging.getLogger(__name__)

routes = web.RouteTableDef()
upstream_key = web.AppKey("upstream_ollama", Upstream)

NDJSON = "application/x-ndjson"
MAX_MODEL_NAME = 500


class UnknownModel(NotFound):
    """The requested model is not offered: the upstream lacks it, or it has no grounded variant."""

    def __init__(self, message: str, model: str):
        super().__init__(message)
        self.model = model


def setup(app: web.Application) -> None:
    """Register the routes and, once per app, the upstream client (opened in a cleanup_ctx)."""
    ensure_upstream(app)
    app.add_routes(routes)


def ensure_upstream(app: web.Application) -> None:
    if upstream_key in app:
        return
    settings = app[settings_key]
    app[upstream_key] = Upstream(
        settings.ollama_host, timeout=settings.chat_timeout, connect_timeout=settings.connect_timeout
    )

    async def upstream_ctx(app: web.Application) -> AsyncIterator[None]:
        await app[upstream_key].open()
        yield
        await app[upstream_key].close()

    app.cleanup_ctx.append(upstream_ctx)


# --------------------------------------------------------------------------- plumbing

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


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


def cancel_on_disconnect(handler: Handler) -> Handler:
    """Run the handler until its client disconnects; then cancel it (which closes the
    upstream connection, so Ollama stops working for nobody)."""

    @functools.wraps(handler)
    async def wrapper(request: web.Request) -> web.StreamResponse:
        work = asyncio.ensure_future(handler(request))
        watcher = asyncio.ensure_future(client_gone(request))
        try:
            await asyncio.wait((work, watcher), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            work.cancel()
            await asyncio.wait((work,))
            raise
        finally:
            watcher.cancel()
        if work.done():
            return work.result()
        log.info("client left during %s %s; cancelling the upstream request", request.method, request.path)
        work.cancel()
        await asyncio.wait((work,))
        return web.Response(status=499, text="client closed the request")

    return wrapper


def model_param(body: Mapping[str, Any]) -> str:
    name = str_param(body.get("model"), "model", required=True, max_len=MAX_MODEL_NAME)
    return name.strip()


async def start_stream(request: web.Request, content_type: str) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": content_type, "Cache-Control": "no-cache"})
    await response.prepare(request)
    return response


async def relay_json(request: web.Request, method: str, path: str, body: Mapping[str, Any] | None = None
                     ) -> web.Response:  # fmt: skip
    """The upstream's answer, status and content type unchanged."""
    model = body.get("model") if body else None
    raw = await request.app[upstream_key].request(method, path, body, model=model if isinstance(model, str) else None)
    return web.Response(status=raw.status, body=raw.body, headers={"Content-Type": raw.content_type})


async def relay_stream(request: web.Request, path: str, body: Mapping[str, Any]) -> web.StreamResponse:
    """Pass-through streaming: the upstream's lines, byte for byte, as they arrive."""
    upstream = request.app[upstream_key]
    response: web.StreamResponse | None = None
    try:
        async with upstream.stream(path, body, model=body.get("model")) as lines:
            response = await start_stream(request, NDJSON)
            try:
                async for line in lines:
                    await response.write(line + b"\n")
            except UpstreamUnavailable as exc:
                await response.write(json.dumps({"error": str(exc)}).encode() + b"\n")
        await response.write_eof()
    except ConnectionError:  # the client left while we wrote
        return response or web.Response(status=499)
    return response


# --------------------------------------------------------------------------- the pipeline


@dataclass
class ChatPlan:
    """What to send upstream for one chat or generate request, and how to answer.

    ``name`` is the model as the client named it (answers carry it); ``body`` is the
    upstream request; ``sources`` is the text to append to the answer ("" for none).
    """

    name: str
    body: dict[str, Any]
    grounded: bool = False
    sources: str = ""


async def require_chat_model(request: web.Request, base: str, name: str) -> None:
    """Raise UnknownModel unless the upstream has ``base`` and it can chat."""
    upstream = request.app[upstream_key]
    if not base:
        raise UnknownModel(f'model "{name}" not found: name the upstream model before "{compat.GROUNDED_SUFFIX}"', name)
    try:
        facts = await upstream.show_facts(base)
    except UpstreamError as exc:
        if exc.status == 404:
            raise UnknownModel(
                f'model "{name}" not found: the Ollama at {upstream.host} has no model "{base}" (try pulling it first)',
                name,
            ) from None
        raise
    if not compat.can_chat(base, facts.capabilities, facts.details):
        raise UnknownModel(f'model "{name}" not found: "{base}" cannot chat, so it has no grounded variant', name)


def _messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if messages is None:
        return []
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise BadRequest("messages must be a list of objects")
    return messages


def _sources_text(request: web.Request, sources) -> str:
    settings = request.app[settings_key]
    return compat.sources_text(sources, settings.roam_dir) if settings.sources_in_compat_answers else ""


async def plan_chat(request: web.Request, body: dict[str, Any]) -> ChatPlan:
    """Ground an ``/api/chat`` body when its model is a grounded name."""
    name = model_param(body)
    base, grounded = compat.split_model(name)
    if not grounded:
        return ChatPlan(name, body)
    await require_chat_model(request, base, name)
    grounding = await compat.ground_messages(request.app[index_key], _messages(body))
    return ChatPlan(name, {**body, "model": base, "messages": grounding.messages}, True,
                    _sources_text(request, grounding.sources))  # fmt: skip


async def plan_generate(request: web.Request, body: dict[str, Any]) -> ChatPlan:
    """Ground an ``/api/generate`` body (its ``system``) when its model is a grounded name.
    A ``raw`` prompt has no system part, so it is passed on without notes."""
    name = model_param(body)
    base, grounded = compat.split_model(name)
    if not grounded:
        return ChatPlan(name, body)
    await require_chat_model(request, base, name)
    prompt = str_param(body.get("prompt"), "prompt") or ""
    system = str_param(body.get("system"), "system")
    out = {**body, "model": base}
    if body.get("raw"):
        return ChatPlan(name, out, True)
    system, sources = await compat.ground_prompt(request.app[index_key], prompt, system)
    if system is not None:
        out["system"] = system
    return ChatPlan(name, out, True, _sources_text(request, sources))


def _parse_frame(line: bytes, host: str) -> dict[str, Any]:
    try:
        frame = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        frame = None
    if not isinstance(frame, dict):
        raise UpstreamUnavailable(f"the upstream Ollama at {host} sent a line that is not a JSON object", host=host)
    return frame


def _append_content(frame: dict[str, Any], text: str) -> None:
    if isinstance(frame.get("message"), dict):
        frame["message"]["content"] = (frame["message"].get("content") or "") + text
    else:
        frame["response"] = (frame.get("response") or "") + text


async def plan_frames(request: web.Request, plan: ChatPlan, path: str) -> AsyncIterator[dict[str, Any]]:
    """Stream ``plan`` upstream and yield its frames (Ollama's shape) for the client: the
    model renamed to the client's name, the sources as one more content frame before the
    last frame (not after tool calls), an upstream error as a final ``{"error": ...}``.

    Raises UpstreamError/UpstreamUnavailable before the first frame if the request fails.
    """
    upstream = request.app[upstream_key]
    async with upstream.stream(path, plan.body, model=plan.body.get("model")) as lines:
        tool_calls = False
        try:
            async for line in lines:
                frame = _parse_frame(line, upstream.host)
                if "error" in frame:
                    yield frame
                    return
                if "model" in frame:
                    frame["model"] = plan.name
                message = frame.get("message")
                if isinstance(message, dict) and message.get("tool_calls"):
                    tool_calls = True
                if frame.get("done") and plan.sources and not tool_calls:
                    extra = {"model": plan.name, "created_at": frame.get("created_at"), "done": False}
                    if path == "/api/chat":
                        extra["message"] = {"role": "assistant", "content": ""}
                    _append_content(extra, plan.sources)
                    yield extra
                yield frame
        except UpstreamUnavailable as exc:
            yield {"error": str(exc)}


async def complete(request: web.Request, plan: ChatPlan, path: str) -> dict[str, Any]:
    """The non-streaming answer to ``plan``: Ollama's JSON, model renamed, sources appended."""
    upstream = request.app[upstream_key]
    answer = await upstream.json("POST", path, {**plan.body, "stream": False}, model=plan.body.get("model"))
    if not isinstance(answer, dict):
        raise UpstreamUnavailable(f"the upstream Ollama at {upstream.host} sent an answer that is not an object",
                                  host=upstream.host)  # fmt: skip
    answer["model"] = plan.name
    message = answer.get("message")
    has_tool_calls = isinstance(message, dict) and bool(message.get("tool_calls"))
    if plan.sources and not has_tool_calls and answer.get("done_reason") != "load":
        _append_content(answer, plan.sources)
    return answer


async def send_frames(request: web.Request, frames: AsyncIterator[dict[str, Any]], *, content_type: str,
                      encode: Callable[[dict[str, Any]], bytes], trailer: bytes = b"") -> web.StreamResponse:  # fmt: skip
    """Stream ``frames`` (from :func:`plan_frames`) to the client, each as ``encode`` makes
    it, then ``trailer`` unless an error frame ended the stream. The response starts with
    the first frame, so a failed upstream request still gets a proper error status."""
    response: web.StreamResponse | None = None
    try:
        async with aclosing(frames):
            async for frame in frames:
                if response is None:
                    response = await start_stream(request, content_type)
                await response.write(encode(frame))
                if "error" in frame:
                    break
            else:
                if response is not None and trailer:
                    await response.write(trailer)
        if response is None:
            host = request.app[upstream_key].host
            raise UpstreamUnavailable(f"the upstream Ollama at {host} sent an empty answer", host=host)
        await response.write_eof()
    except ConnectionError:  # the client left while we wrote
        return response or web.Response(status=499)
    return response


def _ndjson(frame: dict[str, Any]) -> bytes:
    return json.dumps(frame).encode() + b"\n"


async def _answer(request: web.Request, plan: ChatPlan, path: str) -> web.StreamResponse:
    streaming = plan.body.get("stream", True) is not False
    if not plan.grounded:
        return await (relay_stream(request, path, plan.body) if streaming else relay_json(request, "POST", path, plan.body))
    if not streaming:
        return web.json_response(await complete(request, plan, path))
    return await send_frames(request, plan_frames(request, plan, path), content_type=NDJSON, encode=_ndjson)


# --------------------------------------------------------------------------- routes


@routes.post("/api/chat")
@cancel_on_disconnect
@upstream_errors
async def chat(request: web.Request) -> web.StreamResponse:
    body = await json_body(request)
    return await _answer(request, await plan_chat(request, body), "/api/chat")


@routes.post("/api/generate")
@cancel_on_disconnect
@upstream_errors
async def generate(request: web.Request) -> web.StreamResponse:
    body = await json_body(request)
    return await _answer(request, await plan_generate(request, body), "/api/generate")


async def offered_models(request: web.Request) -> list[dict[str, Any]]:
    """The upstream's ``/api/tags`` entries, each chat model followed by its grounded variant."""
    upstream = request.app[upstream_key]
    models = await upstream.tags()

    async def chats(entry: dict[str, Any]) -> bool:
        name = compat.entry_name(entry)
        try:
            facts = await upstream.show_facts(name, entry.get("digest"))
        except (UpstreamError, UpstreamUnavailable) as exc:
            log.debug("cannot ask the upstream about %s (%s); guessing from its family", name, exc)
            return compat.can_chat(name, None, entry.get("details"))
        return compat.can_chat(name, facts.capabilities, facts.details or entry.get("details"))

    flags = await asyncio.gather(*(chats(m) for m in models))
    names = {compat.entry_name(m) for m, chat_ok in zip(models, flags, strict=True) if chat_ok}
    return compat.with_grounded_variants(models, names)


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
    base, grounded = compat.split_model(name)
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
@cancel_on_disconnect
@upstream_errors
async def embed(request: web.Request) -> web.Response:
    return await relay_json(request, "POST", "/api/embed", await json_body(request))


@routes.post("/api/embeddings")
@cancel_on_disconnect
@upstream_errors
async def embeddings(request: web.Request) -> web.Response:
    """The older single-text embedding endpoint some clients still use."""
    return await relay_json(request, "POST", "/api/embeddings", await json_body(request))
