"""Link suggestion routes: ``GET /suggest-links``, ``POST /suggest-links/reject`` and the
list of rejections (``GET``/``DELETE /suggest-links/rejections``). JSON bodies only."""

from __future__ import annotations

from aiohttp import web

from ..answers.links import suggest_links
from ..errors import BadRequest, NotFound
from .keys import index_key
from .params import int_param, json_body, rel_path_param, str_param

routes = web.RouteTableDef()
ID_MAX = 200


@routes.get("/suggest-links")
async def suggest(request: web.Request) -> web.Response:
    index = request.app[index_key]
    q = request.query
    k = int_param(q.get("k"), "k", default=10)
    if q.get("node"):
        node = str_param(q.get("node"), "node", required=True, max_len=ID_MAX)
        body = await suggest_links(index, node_id=node, k=k)
    elif q.get("file"):
        path = rel_path_param(q.get("file"))
        line = int_param(q.get("line"), "line", default=1, high=10_000_000)
        body = await suggest_links(index, path=path, line=line, k=k)
    else:
        raise BadRequest("give node=ID, or file=REL&line=N")
    return web.json_response(body)


@routes.post("/suggest-links/reject")
async def reject(request: web.Request) -> web.Response:
    body = await json_body(request)
    src = str_param(body.get("from"), "from", required=True, max_len=ID_MAX)
    dst = str_param(body.get("to"), "to", required=True, max_len=ID_MAX)
    if src == dst:
        raise BadRequest("from and to are the same node")
    index = request.app[index_key]
    known = await index.read(lambda s: s.indexed_nodes([src, dst]))
    for node in (src, dst):
        if node not in known:
            raise NotFound(f"no node with ID {node!r} in the index")
    await index.write(lambda s: s.reject_link(src, dst))
    return web.json_response({"rejected": {"from": src, "to": dst}})


@routes.get("/suggest-links/rejections")
async def rejections(request: web.Request) -> web.Response:
    src = str_param(request.query.get("from"), "from", max_len=ID_MAX)
    rows = await request.app[index_key].read(lambda s: s.link_rejections(src))
    return web.json_response({"rejections": rows})


@routes.delete("/suggest-links/rejections")
async def clear_rejections(request: web.Request) -> web.Response:
    src = str_param(request.query.get("from"), "from", max_len=ID_MAX) or None
    dst = str_param(request.query.get("to"), "to", max_len=ID_MAX) or None
    cleared = await request.app[index_key].write(lambda s: s.clear_link_rejections(src, dst))
    return web.json_response({"cleared": cleared})
