"""Native index routes: health, status, search, similar, journal, nodes and heading text."""

from __future__ import annotations

import asyncio
import json

from aiohttp import web
from pydantic_core import PydanticSerializationError, to_json

from ..answers import retrieval
from ..answers import search as notes_search
from ..answers import timeline
from ..answers.relevance import min_score_for
from ..answers.roles import roles_of
from ..answers.when import DateRange, explicit_range
from .keys import index_key
from .params import parse_body, parse_query
from .schemas import HeadingQuery, JournalQuery, SearchQuery, SimilarQuery, SimilarText

routes = web.RouteTableDef()


def json_answer(data) -> web.Response:
    """``data`` as a JSON response, as ``web.json_response`` gives it but encoded by
    pydantic-core's encoder (about half the time of ``json.dumps`` on a page of results):
    the same JSON values, written compactly and with non-ASCII characters as UTF-8 instead
    of ``\\u`` escapes. ``NaN`` and infinities are written as ``json.dumps`` writes them. A
    value that encoder refuses (a lone surrogate, which UTF-8 cannot hold) goes through
    ``json.dumps`` as before, so an answer that encoded before still does."""
    try:
        body = to_json(data)
    except PydanticSerializationError:
        body = json.dumps(data).encode("utf-8")
    return web.Response(body=body, content_type="application/json", charset="utf-8")


def results_response(mode: str, results, date_range=None, **extra) -> web.Response:
    if date_range is not None:
        extra["date_range"] = date_range.as_dict()
    return json_answer({"mode": mode, "results": [r.as_dict() for r in results], **extra})


async def date_range_param(since: str | None, until: str | None) -> DateRange | None:
    """The explicit ``since``/``until`` of a request (ISO dates or e.g. ``last week``,
    read on a thread: dateparser's first use loads its data), or None."""
    if not since and not until:
        return None
    return await asyncio.to_thread(explicit_range, since, until)


def in_range(results, date_range, k: int) -> list:
    """``results`` dated within ``date_range`` (all when None), at most ``k``."""
    if date_range is None:
        return results[:k]
    return [r for r in results if date_range.contains(r.date)][:k]


@routes.get("/health")
async def health(request: web.Request) -> web.Response:
    return web.json_response({"ok": True})


@routes.get("/status")
async def status(request: web.Request) -> web.Response:
    return web.json_response(await request.app[index_key].status())


@routes.get("/search")
async def search(request: web.Request) -> web.Response:
    query = parse_query(request, SearchQuery)
    rng = await date_range_param(query.since, query.until)
    mode, results = await notes_search.search(request.app[index_key], query.q, query.k, date_range=rng)
    empty = not results and rng is None and retrieval.only_particles(query.q)
    return results_response(mode, results, rng, **({"note": retrieval.NOTHING_TO_SEARCH} if empty else {}))


def _fallback_note(mode: str) -> dict:
    if mode == "keyword":
        return {"note": "keyword similarity: the query or the other notes have no vectors yet (embeddings pending or embedder down)"}
    return {}


@routes.get("/similar")
async def similar_get(request: web.Request) -> web.Response:
    index = request.app[index_key]
    q = parse_query(request, SimilarQuery)
    rng = await date_range_param(q.since, q.until)
    wide = q.k if rng is None else 100  # filtered by date below
    options = {"exclude_linked": q.exclude_linked, "same_file": q.same_file, "keep_all": q.all_}
    if q.node:
        mode, results = await notes_search.similar_to_node(index, q.node, wide, **options)
    elif q.file:
        mode, results = await notes_search.similar_to_line(index, q.file, q.line, wide, **options)
    else:
        raise web.HTTPBadRequest(text="give node=ID, or file=REL&line=N (or POST a JSON text)")
    return results_response(
        mode, in_range(results, rng, q.k), rng, min_score=min_score_for(mode, index.settings.min_score), **_fallback_note(mode)
    )


@routes.post("/similar")
async def similar_post(request: web.Request) -> web.Response:
    body = await parse_body(request, SimilarText)
    rng = await date_range_param(body.since, body.until)
    index = request.app[index_key]
    mode, results = await notes_search.similar_to_text(
        index, body.text, body.k if rng is None else 100, node=body.node, exclude_linked=body.exclude_linked,
        path=body.file, line=body.line, keep_all=body.all_,
    )
    return results_response(
        mode, in_range(results, rng, body.k), rng, min_score=min_score_for(mode, index.settings.min_score), **_fallback_note(mode)
    )


@routes.get("/journal")
async def journal(request: web.Request) -> web.Response:
    """Headings of daily notes dated in ``since``..``until``, oldest first; a ``note``
    says whether an empty answer means no journal at all or none in the range."""
    q = parse_query(request, JournalQuery)
    rng = await date_range_param(q.since, q.until) or DateRange(None, None, "any time")
    results, more, any_daily = await request.app[index_key].read(lambda s: timeline.journal(s, rng, q.k))
    note = None
    if not results:
        span = rng.as_dict()
        note = (
            f"no journal headings dated {span['since'] or 'any time'} to {span['until'] or 'now'}"
            if any_daily
            else "the notes have no journal: no daily note (a file named YYYY-MM-DD.org) is indexed"
        )
    return web.json_response(
        {"results": [r.as_dict() for r in results], "date_range": rng.as_dict(), "more": more, "note": note}
    )


@routes.get("/nodes/{node_id}")
async def node(request: web.Request) -> web.Response:
    index = request.app[index_key]
    node_row, headings = await index.node(request.match_info["node_id"])
    links, backlinks = await index.node_links(node_row["own_id"])
    # Whose words each heading is (answers/roles.py): a conversation's answers are the
    # oracle's, and a reader of the note (MCP read_note) must see so; so are the lines of a
    # grounded model's reply in a heading of the user's (notes/oracle_words.py).
    roles, replies = await index.read(lambda store: (roles_of(store, headings), store.replies_held(headings)))
    return web.json_response(
        {
            "node_id": node_row["own_id"],
            "title": node_row["node_title"] if node_row["level"] else node_row["title"],
            "file": node_row["file"],
            "line": node_row["start_line"],
            "level": node_row["level"],
            "tags": node_row["tags"],
            "aliases": node_row["aliases"],
            "date": node_row["date"],
            "headings": [
                {
                    "heading": h["title"], "level": h["level"], "line": h["start_line"], "olp": h["olp"],
                    "heading_id": h["own_id"], "todo": h["todo"], "tags": h["tags"], "body": h["body"],
                    "end_line": h["end_line"], "role": roles.get(h["id"]),
                    "replies": _reply_spans(replies, h["id"]),
                }
                for h in headings
            ],
            "links": links,
            "backlinks": backlinks,
        }
    )


@routes.get("/heading")
async def heading(request: web.Request) -> web.Response:
    q = parse_query(request, HeadingQuery)
    index = request.app[index_key]
    row = await index.heading_at(q.file, q.line)
    # Whose words it is, as /nodes/ID says: the oracle's (role), or the user's with the
    # lines of a grounded model's reply held in it (replies).
    roles, replies = await index.read(lambda store: (roles_of(store, [row]), store.replies_held([row])))
    answer = {
        "node_id": row["node_id"],
        "heading_id": row["own_id"],
        "title": row["node_title"],
        "heading": row["title"],
        "olp": row["olp"],
        "file": row["file"],
        "line": row["start_line"],
        "end_line": row["end_line"],
        "tags": row["tags"],
        "body": row["body"],
        "role": roles.get(row["id"]),
        "replies": _reply_spans(replies, row["id"]),
    }
    if q.end_line is not None:
        # A window of dialogue in an org conversation starts at its root, whose own body
        # is empty: its turns are the headings below, each marked as /search marks it.
        def below(store):
            rows = store.headings_between(row["file"], row["start_line"], q.end_line)
            roles, replies = roles_of(store, rows), store.replies_held(rows)
            return [
                {"heading": h["title"], "level": h["level"], "line": h["start_line"], "end_line": h["end_line"],
                 "body": h["body"], "role": roles.get(h["id"]), "replies": _reply_spans(replies, h["id"])}
                for h in rows
            ]  # fmt: skip

        answer["below"] = await index.read(below)
    return web.json_response(answer)


def _reply_spans(replies: dict, heading_id: int) -> list[dict[str, int]]:
    """A heading's ``replies`` as the API gives them: its grounded model's replies' lines."""
    return [{"line": first, "end_line": last} for first, last in replies.get(heading_id, ())]
