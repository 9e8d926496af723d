"""Link suggestions: the related notes a note does not link to yet, and where in it each
link belongs.

:func:`suggest_links` ranks candidates as /similar does (text fused with the graph signal
when that is on, :func:`~arcology_oracle.answers.graph.similar_with_graph`) and keeps
only those that may be suggested: never the note itself, a node nested in it or
enclosing it (a heading node's own file: a link to the note one is in), a node
already linked in either direction (from the note or from a node nested in it), a
private or excluded node (they are not in the index), or a rejected pair
(``POST /suggest-links/reject``); one suggestion per target node.

For each target, the paragraph of the query note that best matches it is where the link
belongs: the paragraphs (:mod:`~arcology_oracle.notes.paragraphs`) are read from the note's
file as it is on disk now, through the org reader (so private headings stay out and the
line numbers are the current ones; a heading asked for by its line is found there by
its ID, else its title and outline path, never by the index's line: a 409 when it
cannot be), and ranked by SQLite's BM25 against the target's
title, aliases and most frequent words; paragraphs no word matches follow, their
heading's vector similarity to the target deciding. A note with no paragraph gets
``paragraph: null`` and its own heading.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config import Settings
from ..errors import BadRequest, Conflict, NotFound
from ..notes import cjk
from ..notes.conversations import is_sources_list
from ..notes.oracle_words import oracle_words_of
from ..notes.codings import shown_lines
from ..notes.org_syntax import link_text, org_link
from ..notes.paragraphs import Paragraph, paragraphs
from ..notes.reader import read_org_bytes
from ..notes.records import Heading
from ..store import Store
from ..store.search import bm25_order
from . import graph, mentions, relevance, retrieval, similarity
from .index_api import NotesIndex
from .search import enclosing_nodes, nested_nodes, no_heading_at, node_query

# Words of the target note the paragraphs are matched against (its title and aliases
# always among them).
TARGET_WORDS = 32


@dataclass(frozen=True, slots=True)
class _Place:
    heading: Heading
    paragraph: Paragraph


async def suggest_links(
    index: NotesIndex, *, node_id: str | None = None, path: str | None = None, line: int = 1, k: int = 10,
    keep_all: bool = False,
) -> dict:
    """Suggestions for the node ``node_id``, or for the heading at ``path``:``line`` (its
    subtree within its node), scored as /similar's results and cut at
    ``settings.min_score`` (:mod:`.relevance`; with ``keep_all`` kept, marked
    ``below_cutoff``). Raises NotFound for an unknown node or heading, BadRequest for
    a heading in no node, and Conflict when the heading the index has at that line cannot
    be found again in the file as it is now (:func:`_asked_heading`). See the module
    docstring and README.org."""
    heading_query = None
    if node_id is None:
        heading_query = await index.read(lambda s: _heading_query(s, path, line, index.settings))
        node_id = heading_query["node_id"]
    query_node = node_id

    def run(store: Store) -> dict:
        own = store.node(query_node)
        if own is None:
            raise NotFound(f"no node with ID {query_node!r} in the index")
        asked = None if heading_query is None else heading_query["row"]
        mode, found = link_candidates(store, index.settings, query_node, k, heading_query=heading_query)
        min_score = relevance.min_score_for(mode, index.settings.min_score)
        found = relevance.cut(found, min_score, keep_all=keep_all)
        alike = 1 if heading_query is None else heading_query["alike"]
        places = _places(index, store, own["file"], query_node, asked, alike)
        return {
            "node_id": query_node,
            "mode": mode,
            "graph": bool(index.settings.graph_similarity),
            "min_score": min_score,
            "suggestions": [_suggestion(store, r, places, own) for r in found],
        }

    return await index.read(run)


def link_candidates(
    store: Store, settings: Settings, node_id: str, k: int, *, heading_query: dict | None = None, graph_on: bool | None = None
) -> tuple[str, list[retrieval.Result]]:
    """The ranked targets a link from ``node_id`` may be suggested to (the rules of the
    module docstring), as ``(mode, results)``; ``graph_on`` overrides
    ``settings.graph_similarity`` (the benchmark compares both)."""
    own = store.node(node_id)
    if own is None:
        raise NotFound(f"no node with ID {node_id!r} in the index")
    nested, enclosing = nested_nodes(store, own), enclosing_nodes(store, own)
    linked: set[str] = set()
    for node in {node_id} | nested:
        linked |= store.linked_nodes(node)
    excluded = frozenset({node_id} | nested | enclosing | linked | store.rejected_targets(node_id))
    if heading_query is None:
        vector, text, own_words = node_query(store, node_id)
    else:
        vector = retrieval.stored_vector(store, heading_query["heading_ids"])
        text, own_words = heading_query["text"], heading_query["own_words"]
    mode, found = graph.similar_with_graph(
        store, settings, node_id, k=k, graph_on=graph_on, vector=vector, text=text,
        naming=mentions.Naming(own_words, frozenset({node_id, *enclosing}), frozenset(linked)),
        exclude_nodes=excluded, whole_notes=True, note_query=heading_query is None,  # a whole node: as ?node=
    )  # fmt: skip
    return mode, [r for r in found if r.node_id is not None]


def _heading_query(store: Store, path: str, line: int, settings: Settings) -> dict:
    row = store.heading_at(path, line)
    if row is None:
        raise NotFound(no_heading_at(path, line, settings))
    if row["node_id"] is None:
        raise BadRequest(f"the heading at {path}:{line} is in no org-roam node: links need a node to come from")
    inside, every = [row], store.file_headings(path)
    for other in every:
        if other["start_line"] <= row["start_line"]:
            continue
        if other["level"] <= row["level"]:
            break
        if other["node_id"] == row["node_id"]:
            inside.append(other)
    return {
        "node_id": row["node_id"],
        "row": row,
        # How many of the node's headings in the file the index holds with its level,
        # title and outline path: of several, the one asked about is told by its text.
        "alike": sum(_key(h) == _key(row) for h in every if h["node_id"] == row["node_id"]),
        "heading_ids": [h["id"] for h in inside],
        "text": " ".join(t for h in inside for t in (h["title"], *h["olp"], h["text"])),
        "own_words": mentions.own_words_of(store, inside, above=mentions.titles_above(row)),
    }


def _places(
    index: NotesIndex, store: Store, path: str, node_id: str, asked: dict | None, alike: int = 1
) -> list[_Place]:
    """The paragraphs of ``node_id``'s own headings in ``path`` as the file is now (only
    the subtree of the heading ``asked``, the index's row, when given; ``alike`` as for
    :func:`_asked_heading`), in file order; never in the
    oracle's own words (the one rule, :func:`~arcology_oracle.notes.oracle_words.oracle_headings`,
    on the file as it is now: an answer however marked, a heading below one, a grounded
    chat's reply, in a heading of the user's too...) nor in a ``Sources:`` list the daemon wrote."""
    try:
        data = (index.settings.roam_dir / path).read_bytes()
    except OSError:
        return []
    parsed = read_org_bytes(data, path, frozenset(index.settings.private_tags), log_problems=False,
                            root=index.settings.roam_dir)  # fmt: skip
    lines = shown_lines(data)  # as the headings read: a note not in UTF-8 as Emacs shows it
    settings = index.settings
    oracle, replies = oracle_words_of(parsed, settings.chunk_chars, settings.chunk_overlap)
    # (position in the file, heading) of the node's own headings.
    headings = [(i, h) for i, h in enumerate(parsed.headings) if h.node_id == node_id]
    if asked is not None:
        at = _asked_heading([h for _, h in headings], asked, alike, path)
        level = headings[at][1].level
        end = next((j for j in range(at + 1, len(headings)) if headings[j][1].level <= level), len(headings))
        headings = headings[at:end]
    return [
        _Place(h, p)
        for i, h in headings
        if i not in oracle
        for p in paragraphs(lines, h.start_line, h.end_line)
        if not is_sources_list(p.text)
        and not any(first <= p.end_line and p.start_line <= last for first, last in replies.get(i, ()))
    ]


def _key(row: dict) -> tuple:
    return (row["level"], row["title"], tuple(row["olp"]))


def _asked_heading(headings: list[Heading], asked: dict, alike: int, path: str) -> int:
    """Where in ``headings`` (a node's, in the file as it is now) the heading ``asked``
    (its row in the index) is: the one with its ID, else its level, title and outline
    path; of several, in the file or in the index (``alike``: how many it held), the one
    whose text is unchanged, then the one still on its line. Never by its line alone:
    the file may have changed since the index read it (a line typed above), and another
    heading would be on it; nor, of two alike in the index, by its title alone: the other
    is the only one left with it once the one asked about is renamed or deleted.
    Conflict when none or several."""
    own_id = asked["own_id"]
    key = _key(asked)
    same = [j for j, h in enumerate(headings) if (h.own_id == own_id if own_id else (h.level, h.title, h.olp) == key)]
    if len(same) > 1 or (not own_id and alike > 1):
        same = [j for j in same if headings[j].content_hash() == asked["hash"]]
    if len(same) > 1:
        same = [j for j in same if headings[j].start_line == asked["start_line"]]
    if len(same) != 1:
        raise Conflict(f"the heading at {path}:{asked['start_line']} ({asked['title']!r}) changed in the file since it "
                       "was indexed, so where its links belong cannot be told: ask again once it is indexed", retry=True)  # fmt: skip
    return same[0]


def _suggestion(store: Store, target: retrieval.Result, places: list[_Place], own: dict) -> dict:
    place = _best_place(store, target.node_id, places, own["file"])
    if place is None:
        at = {"heading": own["title"], "olp": own["olp"], "line": own["start_line"], "heading_id": own["own_id"]}
        paragraph = None
    else:
        h = place.heading
        at = {"heading": h.title, "olp": list(h.olp), "line": h.start_line, "heading_id": h.own_id}
        p = place.paragraph
        paragraph = {"start_line": p.start_line, "end_line": p.end_line, "text": p.text}
    return {
        "node_id": target.node_id,
        "title": target.title,
        "file": target.file,
        "line": target.line,
        "score": target.score,
        "relevance": target.relevance,
        "below_cutoff": target.below_cutoff,
        "snippet": target.snippet,
        "role": target.role,
        "link": org_link(target.node_id, target.title),
        "heading": at,
        "paragraph": paragraph,
    }


def _best_place(store: Store, target: str, places: list[_Place], path: str) -> _Place | None:
    if not places:
        return None
    node = store.node(target)
    title_words = " ".join([node["node_title"], *node["aliases"]]) if node else ""
    body = " ".join(r["title"] + " " + r["text"] for r in store.node_headings(target))
    # The title thrice: the words naming the target weigh more than its most frequent ones.
    words = similarity.frequent_words_query((title_words + " ") * 3 + body, TARGET_WORDS)
    # With their CJK bigrams: the words are the target's bigrams too, which no run of
    # Japanese in a paragraph equals.
    lexical = bm25_order([cjk.with_bigrams(link_text(p.paragraph.text)) for p in places], words) if words else []
    if lexical:
        return places[lexical[0]]
    target_vector = store.node_vectors([target]).get(target)
    if target_vector is None:
        return places[0]
    closeness: dict[int, float] = {}
    for place in places:
        line = place.heading.start_line
        if line not in closeness:
            row = store.heading_at(path, line)
            vector = retrieval.stored_vector(store, [row["id"]]) if row else None
            closeness[line] = -2.0 if vector is None else float(np.dot(target_vector, vector))
    return max(places, key=lambda p: closeness[p.heading.start_line])
