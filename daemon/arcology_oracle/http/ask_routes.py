"""Routes that answer from the notes: ``/ask``, ``/summarize``, ``/converse``.

Handlers are thin: validate, call :class:`~arcology_oracle.answers.oracle.Oracle`, shape the answer.
Sources named once the model has begun (a stream's ``sources`` event, sent with its first
piece), or has answered (an answer sent whole, ``GET /ask``'s list), are those the index
still holds then (:func:`~arcology_oracle.answers.held_sources.held_sources`).
Streams (NDJSON, or plain text for ``GET /ask``) start only once the model has produced
its first piece, so an unreachable Ollama or a missing model is still a proper 503 from
the error middleware; a failure after that arrives as a final ``{"type": "error"}`` event
(or an ``[error: ...]`` line); except ``POST /ask`` with ``progress``, whose stream
starts with the notes found (:func:`stream_ndjson`). A client that disconnects cancels
the model's generation: see :mod:`.streaming`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing

from aiohttp import web

from ..answers.held_sources import held_sources
from ..answers.oracle import Oracle, Reply
from ..answers.recall import recall
from ..answers.sources import sources_text_block
from ..errors import ServiceUnavailable
from ..ollama.chat import OllamaChat
from .keys import index_key, ready_key, settings_key
from .middleware import missing_model_field
from .params import parse_body, parse_query
from .retrieval import retrieval_headers
from .routes import date_range_param
from .ask_schemas import AskQuery, AskRequest, ConverseRequest, RecallRequest, SummarizeRequest
from .streaming import ClientGone, cancel_on_disconnect, stream

log = logging.getLogger(__name__)

routes = web.RouteTableDef()
llm_key = web.AppKey("chat_llm", OllamaChat)

NDJSON = "application/x-ndjson"


def setup(app: web.Application) -> None:
    """Add the routes and the chat client (closed with the app)."""
    app.add_routes(routes)

    async def llm_ctx(app: web.Application) -> AsyncIterator[None]:
        app[llm_key] = OllamaChat(app[settings_key])
        yield
        await app[llm_key].close()

    app.cleanup_ctx.append(llm_ctx)


def oracle(request: web.Request) -> Oracle:
    return Oracle(request.app[index_key], request.app[llm_key], ready=request.app[ready_key])


def wants_ndjson(request: web.Request, stream: bool | None) -> bool:
    return NDJSON in request.headers.get("Accept", "") if stream is None else stream


def _line(obj: dict) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\n"


async def stream_ndjson(request: web.Request, reply: Reply, *, found: bool = False, **extra) -> web.StreamResponse:
    """``sources`` event, ``token`` events, then ``done`` (or ``error``). The ``sources``
    event is made once the model's first piece has come (a model loading can take
    minutes): it names those the index still holds then.

    ``found`` (``/ask``'s ``progress``): the stream starts at once with a ``found`` event
    (how many notes, ``used_notes``, ``extra``), so that a client can say it is waiting
    for the model; a model that cannot be reached is then an ``error`` event, not a 503.
    """

    def on_error(exc: Exception) -> bytes:
        if isinstance(exc, ServiceUnavailable):
            return _line({"type": "error", "message": str(exc), **missing_model_field(exc)})
        log.error("error while streaming %s", request.path, exc_info=exc)
        return _line({"type": "error", "message": "internal error; see the daemon's log"})

    async def head() -> bytes:
        held = await held_sources(request.app[index_key], reply.sources)
        sources = [s.as_dict() for s in held]
        return _line({"type": "sources", "sources": sources, "used_notes": reply.used_notes, "model": reply.model, **extra})

    if found:
        first = {"type": "found", "count": len(reply.sources), "used_notes": reply.used_notes, **extra}
        return await stream(request, _found_first(_line(first), head, reply.pieces), content_type=NDJSON,
                            encode=lambda line: line, tail=_line({"type": "done"}), on_error=on_error)  # fmt: skip
    return await stream(
        request,
        reply.pieces,
        content_type=NDJSON,
        head=head,
        encode=lambda piece: _line({"type": "token", "text": piece}),
        tail=_line({"type": "done"}),
        on_error=on_error,
    )


async def _found_first(
    found: bytes, head: Callable[[], Awaitable[bytes]], pieces: AsyncIterator[str]
) -> AsyncIterator[bytes]:
    """``found``, then the lines :func:`stream_ndjson` writes without it: ``head()`` (the
    ``sources`` event) once the model's first piece has come, or it has ended with none."""
    sent_head = False
    async with aclosing(pieces):  # closed however this ends, as stream() closes what it is given
        yield found
        async for piece in pieces:
            if not sent_head:
                sent_head = True
                yield await head()
            yield _line({"type": "token", "text": piece})
    if not sent_head:
        yield await head()


async def stream_text(request: web.Request, reply: Reply) -> web.StreamResponse:
    """The answer as plain text, then a ``Sources:`` list (for curl) of those still held,
    "Sources (keyword match only):" when the notes were found by keywords; the header of
    :mod:`.retrieval` says it too."""
    head = "Sources (keyword match only):" if reply.mode == "keyword" else "Sources:"
    dates = ""
    if reply.date_range is not None:
        used = reply.date_range.as_dict()
        dates = f"\n\nDates: {used['since'] or '…'} to {used['until'] or '…'} ({used['expression']})"

    async def tail() -> bytes:
        held = await held_sources(request.app[index_key], reply.sources)
        if held and reply.used_notes:
            text = f"{dates}\n\n{head}\n" + sources_text_block(held) + "\n"
        elif reply.used_notes:
            text = f"{dates}\n\n{head} none (the notes used have left the index since: made private or deleted)\n"
        else:
            text = f"{dates}\n\n{head} none (no notes were relevant enough, so none were used)\n"
        return text.encode("utf-8")

    return await stream(
        request,
        reply.pieces,
        content_type="text/plain; charset=utf-8",
        encode=lambda piece: piece.encode("utf-8"),
        tail=tail,
        on_error=lambda exc: f"\n\n[error: {exc}]\n".encode("utf-8") if isinstance(exc, ServiceUnavailable) else None,
        headers=retrieval_headers(reply.mode),
    )


async def whole_text(request: web.Request, reply: Reply) -> tuple[str, list[dict]]:
    """The whole text of ``reply``, then its sources the index still holds (as dicts)."""
    try:
        async with cancel_on_disconnect(request):
            text = await reply.text()
    except ClientGone:
        raise web.HTTPServiceUnavailable(text="client disconnected") from None
    return text, [s.as_dict() for s in await held_sources(request.app[index_key], reply.sources)]


@routes.post("/ask")
async def ask_post(request: web.Request) -> web.StreamResponse:
    body = await parse_body(request, AskRequest)
    reply = await oracle(request).ask(
        body.question, buffer=body.buffer, file=body.file, line=body.line, visiting=body.visiting, k=body.k,
        model=body.model or None,
        date_range=await date_range_param(body.since, body.until),
    )
    used = {"date_range": reply.date_range.as_dict()} if reply.date_range else {}
    used["mode"] = reply.mode
    if wants_ndjson(request, body.stream):
        return await stream_ndjson(request, reply, found=body.progress, **used)
    answer, sources = await whole_text(request, reply)
    return web.json_response(
        {"answer": answer, "sources": sources, "used_notes": reply.used_notes, "model": reply.model, **used}
    )


@routes.get("/ask")
async def ask_get(request: web.Request) -> web.StreamResponse:
    q = parse_query(request, AskQuery)
    reply = await oracle(request).ask(q.q, k=q.k, model=q.model or None)
    return await stream_text(request, reply)


@routes.post("/summarize")
async def summarize(request: web.Request) -> web.StreamResponse:
    body = await parse_body(request, SummarizeRequest)
    reply = await oracle(request).summarize(
        node=body.node or None, file=body.file, question=body.question, k=body.k, model=body.model or None
    )
    if wants_ndjson(request, body.stream):
        return await stream_ndjson(request, reply, cached=reply.cached, mode=reply.mode)
    summary, sources = await whole_text(request, reply)
    return web.json_response(
        {
            "summary": summary,
            "sources": sources,
            "cached": reply.cached,
            "used_notes": reply.used_notes,
            "model": reply.model,
            "mode": reply.mode,
        }
    )


@routes.post("/converse")
async def converse(request: web.Request) -> web.Response:
    body = await parse_body(request, ConverseRequest)
    try:
        async with cancel_on_disconnect(request):
            result = await oracle(request).converse(
                body.org, k=body.k, model=body.model or None, marker=body.marker or "oracle", file=body.file, line=body.line
            )
    except ClientGone:
        raise web.HTTPServiceUnavailable(text="client disconnected") from None
    return web.json_response(
        {
            "org": result.org,
            "answer": result.answer,
            "sources": [s.as_dict() for s in result.sources],
            "used_notes": result.used_notes,
            "model": result.model,
            "mode": result.mode,
        }
    )


@routes.post("/recall")
async def recall_post(request: web.Request) -> web.Response:
    """The notes for a question (no answer); see :mod:`arcology_oracle.answers.recall`."""
    body = await parse_body(request, RecallRequest)
    result = await recall(
        oracle(request),
        body.question,
        k=body.k,
        multi_query=body.multi_query,
        date_range=await date_range_param(body.since, body.until),
        model=body.model or None,
    )
    return web.json_response(result)
