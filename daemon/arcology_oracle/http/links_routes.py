"""Link suggestion routes: ``GET /suggest-links``, ``POST /suggest-links/reject`` (JSON
only) and the rejections (``GET``/``DELETE /suggest-links/rejections``). Shapes in
:mod:`.links_schemas`."""

from __future__ import annotations

from aiohttp import web

from ..answers.links import suggest_links
from ..errors import BadRequest, NotFound
from .keys import index_key
from .params import parse_body, parse_query
from .links_schemas import RejectionsQuery, RejectLink, SuggestLinksQuery

routes = web.RouteTableDef()


@routes.get("/suggest-links")
async def suggest(request: web.Request) -> web.Response:
    index = request.app[index_key]
    q = parse_query(request, SuggestLinksQuery)
    if q.node:
        body = await suggest_links(index, node_id=q.node, k=q.k, keep_all=q.all_)
    elif q.file:
        body = await suggest_links(index, path=q.file, line=q.line, k=q.k, keep_all=q.all_)
    else:
        raise BadRequest("give node=ID, or file=REL&line=N")
    return web.json_response(body)


@routes.post("/suggest-links/reject")
async def reject(request: web.Request) -> web.Response:
    body = await parse_body(request, RejectLink)
    src, dst = body.from_, body.to
    if src == dst:
        raise BadRequest("from and to are the same node")
    index = request.app[index_key]
    # Checked where it is written, in one transaction: a node made private between a
    # separate check and the write would leave its ID in a rejection row.
    missing = await index.write(lambda s: s.reject_indexed_link(src, dst, index.withheld))
    if missing:
        raise NotFound(f"no node with ID {missing[0]!r} in the index")
    return web.json_response({"rejected": {"from": src, "to": dst}})


@routes.get("/suggest-links/rejections")
async def rejections(request: web.Request) -> web.Response:
    q = parse_query(request, RejectionsQuery)
    rows = await request.app[index_key].read(lambda s: s.link_rejections(q.from_, q.to))
    return web.json_response({"rejections": rows})


@routes.delete("/suggest-links/rejections")
async def clear_rejections(request: web.Request) -> web.Response:
    q = parse_query(request, RejectionsQuery)
    cleared = await request.app[index_key].write(lambda s: s.clear_link_rejections(q.from_, q.to))
    return web.json_response({"cleared": cleared})
