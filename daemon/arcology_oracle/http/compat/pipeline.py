"""The upstream plumbing both compatible APIs share: the upstream client, grounded chat
plans, streaming a plan's frames, complete answers, the models on offer.

A request names a model; a grounded name (``<model>+notes``, see
:mod:`arcology_oracle.answers.grounding`) makes a :class:`ChatPlan` whose conversation
holds the relevant notes and whose answer ends with their links. Frames are Ollama's;
:mod:`.ollama` sends them as they are, :mod:`.openai` translates them.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from ...answers import grounding
from ...answers.held_sources import held_sources
from ...errors import BadRequest, NotFound, Stopping
from ...notes.org_escape import diary_sexps_quieted
from ...notes.streamed_sexps import SexpQuieter
from ...ollama.proxy import ModelFacts, Upstream, UpstreamError, UpstreamUnavailable
from ..keys import index_key, settings_key
from ..params import str_param
from ..retrieval import retrieval_headers
from ..streaming import stream

log = logging.getLogger(__name__)

upstream_key = web.AppKey("upstream_ollama", Upstream)

MAX_MODEL_NAME = 500


class UnknownModel(NotFound):
    """The requested model is not offered: the upstream lacks it, or it has no grounded variant."""

    def __init__(self, message: str, model: str):
        super().__init__(message)
        self.model = model


def ensure_upstream(app: web.Application) -> None:
    """Give the app its one upstream client (once, whichever API asks first), opened and
    closed with the app."""
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


def model_param(body: Mapping[str, Any]) -> str:
    """The request's ``model``, required (BadRequest otherwise)."""
    name = str_param(body.get("model"), "model", required=True, max_len=MAX_MODEL_NAME)
    return name.strip()


@dataclass
class ChatPlan:
    """What to send upstream for one chat or generate request, and how to answer.

    ``name`` is the model as the client named it (answers carry it); ``body`` is the
    upstream request; ``sources`` are the notes to name after the answer (none: no block);
    ``retrieval`` how they were searched (:mod:`..retrieval`; None: not searched).
    """

    name: str
    body: dict[str, Any]
    grounded: bool = False
    sources: tuple = ()
    retrieval: str | None = None

    @property
    def headers(self) -> dict[str, str]:
        """What the answer's response says besides its body (:mod:`..retrieval`)."""
        return retrieval_headers(self.retrieval)


async def require_chat_model(request: web.Request, base: str, name: str) -> ModelFacts:
    """What the upstream says of ``base``; UnknownModel unless it has it and it can chat."""
    upstream = request.app[upstream_key]
    if not base:
        raise UnknownModel(f'model "{name}" not found: name the upstream model before "{grounding.GROUNDED_SUFFIX}"', name)
    try:
        facts = await upstream.show_facts(base)
    except UpstreamError as exc:
        if exc.status == 404:
            raise UnknownModel(
                f'model "{name}" not found: the Ollama at {upstream.host} has no model "{base}" (try pulling it first)',
                name,
            ) from None
        raise
    if not grounding.can_chat(base, facts.capabilities, facts.details):
        raise UnknownModel(f'model "{name}" not found: "{base}" cannot chat, so it has no grounded variant', name)
    return facts


def _messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A grounded chat's messages: objects whose content, if any, is text, as Ollama
    takes them; other content (OpenAI's list of parts) would reach the model uncleaned."""
    messages = body.get("messages")
    if messages is None:
        return []
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise BadRequest("messages must be a list of objects")
    for i, message in enumerate(messages):
        if not isinstance(message.get("content", ""), (str, type(None))):
            raise BadRequest(f"messages[{i}].content must be a string")
    return messages


def answer_sources(request: web.Request, sources, body: dict[str, Any]) -> tuple:
    """The sources to name after a grounded answer: none when the settings leave the
    block out, and for an answer in a ``format`` (JSON, a schema), which one more line of
    text would break."""
    if not request.app[settings_key].sources_in_compat_answers or body.get("format"):
        return ()
    return tuple(sources)


async def sources_block(request: web.Request, plan: ChatPlan) -> str:
    """The block naming ``plan``'s sources, written once the model has answered: those
    the index no longer holds (made private, or deleted, meanwhile) are left out."""
    if not plan.sources:
        return ""
    held = await held_sources(request.app[index_key], plan.sources)
    return grounding.sources_text(held, request.app[settings_key].roam_dir)


async def plan_chat(request: web.Request, body: dict[str, Any]) -> ChatPlan:
    """Ground an ``/api/chat`` body when its model is a grounded name."""
    name = model_param(body)
    base, grounded = grounding.split_model(name)
    if not grounded:
        return ChatPlan(name, body)
    facts = await require_chat_model(request, base, name)
    grounded_chat = await grounding.ground_messages(request.app[index_key], _messages(body), model_system=facts.system)
    return ChatPlan(name, {**body, "model": base, "messages": grounded_chat.messages}, True,
                    answer_sources(request, grounded_chat.sources, body), grounded_chat.mode)  # fmt: skip


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


def _take_content(frame: dict[str, Any]) -> str:
    """The text a frame carries, taken out of it (the frame is left with "")."""
    holder, key = (frame["message"], "content") if isinstance(frame.get("message"), dict) else (frame, "response")
    text = holder.get(key)
    if not isinstance(text, str) or not text:
        return ""
    holder[key] = ""
    return text


async def plan_frames(request: web.Request, plan: ChatPlan, path: str) -> AsyncIterator[dict[str, Any]]:
    """Stream ``plan`` upstream and yield its frames (Ollama's shape) for the client: the
    model renamed to the client's name, the sources as one more content frame before the
    last frame (not after tool calls), an upstream error as a final ``{"error": ...}``.
    Text the last frame carries (Ollama's tool-call parser sends there what it held back)
    moves into that content frame, before the sources, so they end the answer. A grounded
    answer's diary sexps are quieted (:mod:`~...notes.streamed_sexps`).

    An upstream error mid-answer comes after the text held back so far, so the client
    has every character the model sent.

    Raises UpstreamError/UpstreamUnavailable before the first frame if the request fails.
    """
    upstream = request.app[upstream_key]
    quieters = (SexpQuieter(), SexpQuieter())  # the answer's text, its thinking
    async with upstream.stream(path, plan.body, model=plan.body.get("model")) as lines:
        tool_calls = False
        created_at = None
        try:
            async for line in lines:
                frame = _parse_frame(line, upstream.host)
                if "error" in frame:
                    break
                created_at = frame.get("created_at", created_at)
                if "model" in frame:
                    frame["model"] = plan.name
                if plan.grounded:
                    _quiet_frame(frame, quieters)
                message = frame.get("message")
                if isinstance(message, dict) and message.get("tool_calls"):
                    tool_calls = True
                if frame.get("done") and plan.sources and not tool_calls and (block := await sources_block(request, plan)):
                    extra = _text_frame(plan, path, created_at)
                    _append_content(extra, _take_content(frame) + block)
                    yield extra
                yield frame
            else:
                return
        except UpstreamUnavailable as exc:
            frame = {"error": str(exc)}
        if held := _held_frame(plan, path, created_at, quieters):
            yield held
        yield frame


def _text_frame(plan: ChatPlan, path: str, created_at: Any) -> dict[str, Any]:
    """A frame of ``path``'s answer to ``plan`` carrying no text yet."""
    frame = {"model": plan.name, "created_at": created_at, "done": False}
    if path == "/api/chat":
        frame["message"] = {"role": "assistant", "content": ""}
    return frame


def _held_frame(plan: ChatPlan, path: str, created_at: Any,
                quieters: tuple[SexpQuieter, SexpQuieter]) -> dict[str, Any] | None:  # fmt: skip
    """A frame with what ``quieters`` hold back (the thinking's, then the text's), or
    None when they hold nothing: the answer broke off before its last frame."""
    text, thinking = (quieter.flush() for quieter in quieters)
    if not (text or thinking):
        return None
    frame = _text_frame(plan, path, created_at)
    holder, (text_key, thinking_key) = _texts(frame)
    holder[text_key] = text
    if thinking:
        holder[thinking_key] = thinking
    return frame


def _texts(frame: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, str]]:
    """Where ``frame`` holds its text and its thinking: the holder and their two keys."""
    if isinstance(frame.get("message"), dict):
        return frame["message"], ("content", "thinking")
    return frame, ("response", "thinking")


def _quiet_frame(frame: dict[str, Any], quieters: tuple[SexpQuieter, SexpQuieter]) -> None:
    """``frame``'s text and thinking with no diary sexp (:mod:`~...notes.streamed_sexps`):
    what may start one waits for the next frame; the thinking's rest is handed on once the
    text starts, the text's with the last frame."""
    holder, keys = _texts(frame)
    pieces = [quieter.feed(text) if isinstance(text := holder.get(key), str) else "" for key, quieter in zip(keys, quieters)]
    if pieces[0] or frame.get("done"):
        pieces[1] += quieters[1].flush()
    if frame.get("done"):
        pieces[0] += quieters[0].flush()
    for key, piece in zip(keys, pieces):
        if piece or isinstance(holder.get(key), str):
            holder[key] = piece


async def complete(request: web.Request, plan: ChatPlan, path: str) -> dict[str, Any]:
    """The non-streaming answer to ``plan``: Ollama's JSON, model renamed, sources appended."""
    upstream = request.app[upstream_key]
    answer = await upstream.json("POST", path, {**plan.body, "stream": False}, model=plan.body.get("model"))
    if not isinstance(answer, dict):
        raise UpstreamUnavailable(f"the upstream Ollama at {upstream.host} sent an answer that is not an object",
                                  host=upstream.host)  # fmt: skip
    answer["model"] = plan.name
    if plan.grounded:
        holder, keys = _texts(answer)
        for key in keys:
            if isinstance(text := holder.get(key), str):
                holder[key] = diary_sexps_quieted(text, cr_breaks=True)
    message = answer.get("message")
    has_tool_calls = isinstance(message, dict) and bool(message.get("tool_calls"))
    if plan.sources and not has_tool_calls and answer.get("done_reason") != "load":
        _append_content(answer, await sources_block(request, plan))
    return answer


async def send_frames(request: web.Request, frames: AsyncIterator[dict[str, Any]], *, content_type: str,
                      encode: Callable[[dict[str, Any]], bytes], trailer: bytes = b"",
                      headers: Mapping[str, str] | None = None) -> web.StreamResponse:  # fmt: skip
    """Stream ``frames`` (from :func:`plan_frames`) to the client, each as ``encode`` makes
    it, then ``trailer`` unless an error frame ended the stream (``headers``: a plan's). The response starts with
    the first frame, so a failed upstream request still gets a proper error status. A stop
    of the daemon ends a stream begun with an error frame (``{"error": message}`` as
    ``encode`` writes it), so a client never takes the answer cut short for a whole one."""
    host = request.app[upstream_key].host
    return await stream(
        request,
        frames,
        content_type=content_type,
        encode=encode,
        tail=trailer,
        stop=lambda frame: "error" in frame,
        on_error=lambda exc: encode({"error": str(exc)}) if isinstance(exc, Stopping) else None,
        empty=lambda: UpstreamUnavailable(f"the upstream Ollama at {host} sent an empty answer", host=host),
        headers=headers,
    )


async def offered_models(request: web.Request) -> list[dict[str, Any]]:
    """The upstream's ``/api/tags`` entries, each chat model followed by its grounded variant."""
    upstream = request.app[upstream_key]
    models = await upstream.tags()

    async def chats(entry: dict[str, Any]) -> bool:
        name = grounding.entry_name(entry)
        try:
            facts = await upstream.show_facts(name, entry.get("digest"))
        except (UpstreamError, UpstreamUnavailable) as exc:
            log.debug("cannot ask the upstream about %s (%s); guessing from its family", name, exc)
            return grounding.can_chat(name, None, entry.get("details"))
        return grounding.can_chat(name, facts.capabilities, facts.details or entry.get("details"))

    flags = await asyncio.gather(*(chats(m) for m in models))
    names = {grounding.entry_name(m) for m, chat_ok in zip(models, flags, strict=True) if chat_ok}
    return grounding.with_grounded_variants(models, names)
