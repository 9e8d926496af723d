"""Memory routes: ``POST /memorize`` and ``POST /forget`` (JSON bodies)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web

from ..answers.private_places import why_private_source, why_private_text
from ..errors import BadRequest
from ..index.memory import Memory
from ..notes.capture import clean_tags
from .keys import index_key, memory_key, ready_key, worker_key
from .params import parse_body
from .memory_schemas import ForgetRequest, MemorizeRequest

routes = web.RouteTableDef()


@routes.post("/memorize")
async def memorize(request: web.Request) -> web.Response:
    """Append a heading to today's daily note; answers where it went and its link. A text
    cut from a private part of the saved note ``file`` names (at ``line``) is refused
    before anything is written: cut out of its note, it no longer carries what made it
    private (a tag above it, the note's tags or setup files, ``exclude_globs``), and in a
    public daily it would be indexed and embedded. The refusal names the note, never the
    text. So is a text holding private parts of its own (a heading tagged private in it):
    the capture escapes its heading lines, which would make them public."""
    body = await parse_body(request, MemorizeRequest)
    if why := await why_private_source(request.app[index_key], body.text, body.file, body.line):
        raise BadRequest(f"{why} (private or crypt tags, ROAM_EXCLUDE, exclude_globs, a hidden folder): nothing was written")
    tags = clean_tags(list(body.tags) if body.tags is not None else None)
    if why := await why_private_text(request.app[index_key], body.text, body.file, tags or ()):
        raise BadRequest(f"{why}: nothing was written (tag the capture private to keep it out of the index)")
    captured = await request.app[memory_key].memorize(
        body.text, title=body.title, tags=tags, source=body.source, dailies_dir=body.dailies_dir, role=body.role,
        quiet_title=body.quiet_title, task=body.task, unsaved=tuple(body.unsaved or ()),
    )
    return web.json_response(captured.as_dict())


@routes.post("/forget")
async def forget(request: web.Request) -> web.Response:
    """Delete a heading the daemon captured; 409 for any other heading, and while its note
    is one the client's editor holds unsaved (``unsaved``, as for /memorize)."""
    body = await parse_body(request, ForgetRequest)
    forgotten = await request.app[memory_key].forget(body.id.strip(), unsaved=tuple(body.unsaved or ()))
    return web.json_response(forgotten)


def setup(app: web.Application) -> None:
    async def memory_ctx(app: web.Application) -> AsyncIterator[None]:
        # Runs after the index's cleanup context (they start in order).
        app[memory_key] = Memory(app[index_key], app[worker_key].wake, app[ready_key])
        await app[memory_key].clean_up()
        yield

    app.cleanup_ctx.append(memory_ctx)
    app.add_routes(routes)
