"""Search and similar notes over the index: the async front of
:mod:`~arcology_oracle.answers.retrieval` for the HTTP routes and the CLI.

Each function embeds its query through the index (falling back to keywords when there
are no vectors or the embedder is down) and runs the synchronous retrieval on a reader
thread. Results are ``(mode, [retrieval.Result])``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence

from ..config import Settings
from ..errors import BadRequest, NotFound
from ..notes.files import unread_reason
from ..store import Store
from ..store.connection import in_snapshot
from . import graph, mentions, moves, relevance, retrieval, search_ranking, similarity, text_vectors, timeline, written
from .embed_wait import within_wait
from .index_api import NotesIndex
from .private_places import is_private_place, without_saved_private_lines
from .when import DateRange, parse_when


async def search(
    index: NotesIndex, query: str, k: int = 10, *, date_range: DateRange | None = None
) -> tuple[str, list[retrieval.Result]]:
    """Hybrid search, keyword-only when there are no vectors or no embedder; with
    ``date_range``, only among headings dated in it (see :mod:`.timeline`). The results
    keep the search's order and carry calibrated scores (:func:`.relevance.rescore`);
    nothing is cut: a heading looked up by its words is shown however it scores.

    The query's embedding is waited for ``settings.search_embed_wait`` seconds at most;
    after that the search is keyword-only (a busy Ollama must not make a phone's search
    time out), and the embedding, when it comes, is cached for the next search. A query
    of particles alone ("の") finds nothing (:func:`.retrieval.only_particles`)."""
    if not query.strip() and date_range is None:
        raise BadRequest("the query is empty")
    if date_range is None and retrieval.only_particles(query):
        return "keyword", []
    floor = index.settings.min_search_similarity
    if date_range is not None:
        words = timeline.subject(query, date_range)
        vector = await _query_vector_within(index, words) if words else None
        ranked = lambda s: timeline.search_in_range(s, query, k, vector, date_range, min_similarity=floor)  # noqa: E731
    else:
        # The words are looked up on a reader thread while the query is embedded: with
        # Ollama across a network the embedding is most of a search's wait.
        keyword, vector = await asyncio.gather(
            index.read(lambda s: search_ranking.keyword_half(s, query, k)), _query_vector_within(index, query)
        )
        ranked = lambda s: search_ranking.fused(s, keyword, query, k, vector, min_similarity=floor)  # noqa: E731

    @in_snapshot
    def run(store: Store) -> tuple[str, list[retrieval.Result]]:
        mode, results = ranked(store)
        return mode, relevance.ordered(relevance.rescore(store, results, relevance.Signals(vector)))

    return await index.read(run)


async def _query_vector(index: NotesIndex, text: str) -> list[float] | None:
    """The query vector of ``text``, None when the index has no vectors or the embedder
    is unavailable."""
    return await index.query_vector(text) if await index.has_vectors() else None


async def _query_vector_within(index: NotesIndex, text: str) -> list[float] | None:
    """:func:`_query_vector`, or None when it has not come within ``search_embed_wait``
    seconds (:func:`.embed_wait.within_wait`)."""
    return await within_wait(index, _query_vector(index, text))


async def question_range(index: NotesIndex, question: str) -> DateRange | None:
    """The date range ``question`` names ("last week"; an event dated from the notes),
    or None (also when ``settings.parse_dates`` is off). Parsed on a thread: dateparser
    loads its data on first use (most of a second)."""
    if not question or not question.strip() or not index.settings.parse_dates:
        return None
    found = await asyncio.to_thread(parse_when, question)
    return await resolve_event(index, found) if found is not None else None


async def resolve_event(index: NotesIndex, date_range: DateRange) -> DateRange | None:
    """For "since the move": the range from the date of the heading that best matches
    the event's words to the range's end; None when no dated heading matches."""
    if date_range.event is None:
        return date_range
    day = await index.read(lambda s: timeline.event_date(s, date_range.event))
    if day is None:
        return None
    return DateRange(day, date_range.until, f"{date_range.expression} ({day.isoformat()})")


async def similar_to_node(
    index: NotesIndex, node_id: str, k: int = 10, *, exclude_linked: bool = False, same_file: bool = False,
    keep_all: bool = False,
) -> tuple[str, list[retrieval.Result]]:
    """Notes similar to a whole node (:func:`similar_node` on a reader thread)."""
    return await index.read(
        lambda s: similar_node(s, index.settings, node_id, k, exclude_linked=exclude_linked, same_file=same_file, keep_all=keep_all)
    )


async def similar_to_line(
    index: NotesIndex, path: str, line: int, k: int = 10, *, exclude_linked: bool = False, same_file: bool = False,
    keep_all: bool = False,
) -> tuple[str, list[retrieval.Result]]:
    """Notes similar to the heading at ``path``:``line`` (:func:`similar_line` on a
    reader thread)."""
    return await index.read(
        lambda s: similar_line(s, index.settings, path, line, k, exclude_linked=exclude_linked, same_file=same_file, keep_all=keep_all)
    )


@in_snapshot
def similar_node(
    store: Store, settings: Settings, node_id: str, k: int, *, exclude_linked: bool = False, same_file: bool = False,
    keep_all: bool = False,
) -> tuple[str, list[retrieval.Result]]:
    """Notes similar to a whole node (by its stored vectors), never the node itself; nor,
    unless ``same_file``, the nodes enclosing it or nested in it. Scored, ordered and cut
    as :func:`_finish` says. Raises NotFound."""
    own = store.node(node_id)
    if own is None:
        raise NotFound(f"no node with ID {node_id!r} in the index")
    enclosing = enclosing_nodes(store, own)
    excluded = {node_id} | (set() if same_file else nested_nodes(store, own) | enclosing)
    if exclude_linked:
        excluded |= store.linked_nodes(node_id)
    vector, text, own_words = node_query(store, node_id)
    links = store.links_from(node_id)
    mode, results = graph.similar_with_graph(
        store, settings, node_id, k=k, vector=vector, text=text,
        naming=mentions.Naming(own_words, frozenset({node_id, *enclosing}), frozenset(links)),
        exclude_nodes=frozenset(excluded), whole_notes=True, note_query=True,
    )  # fmt: skip
    return mode, _finish(store, settings, mode, results, links, own["file"], keep_all, node_id)


def no_heading_at(path: str, line: int, settings: Settings) -> str:
    """The 404's words for ``path``:``line`` holding no indexed heading: why, when the
    index never reads ``path`` (a hidden folder, ``exclude_globs``)."""
    why = unread_reason(path, settings.exclude_globs)
    return f"no indexed heading at {path}:{line}" + (f": the daemon does not read {path} ({why})" if why else "")


@in_snapshot
def similar_line(
    store: Store, settings: Settings, path: str, line: int, k: int, *, exclude_linked: bool = False,
    same_file: bool = False, keep_all: bool = False,
) -> tuple[str, list[retrieval.Result]]:
    """Notes similar to the heading at ``path``:``line``, never from its own node; nor,
    unless ``same_file``, from the nodes enclosing that node or nested in it (as
    /suggest-links). Scored, ordered and cut as :func:`_finish` says. Raises NotFound."""
    row = store.heading_at(path, line)
    if row is None:
        raise NotFound(no_heading_at(path, line, settings))
    node = row["node_id"]
    excluded: set[str] = set()
    enclosing: set[str] = set()
    if node:
        excluded.add(node)
        own = store.node(node)
        enclosing = enclosing_nodes(store, own) if own is not None else set()
        if not same_file and own is not None:
            excluded |= nested_nodes(store, own) | enclosing
        if exclude_linked:
            excluded |= store.linked_nodes(node)
    elif not same_file:  # a heading in no node: its file's nodes are its enclosing and nested ones
        excluded |= {own_id for _, _, own_id in store.file_outline(path) if own_id}
    vector = retrieval.stored_vector(store, [row["id"]])
    links = store.links_from(node) if node else set()
    # Its words with their context (file title, outline path, aliases, tags: what the
    # heading's chunk is embedded with): a section "Notes" is about its note's subject.
    text = " ".join([row["olp_text"], row["title"], row["text"]])
    mode, results = graph.similar_with_graph(
        store,
        settings,
        node,
        k=k,
        naming=mentions.Naming(
            mentions.own_words_of(store, [row], above=mentions.titles_above(row)),
            frozenset({node, *enclosing} if node else ()), frozenset(links),
        ),
        vector=vector,
        text=text,
        exclude_nodes=frozenset(excluded),
        exclude_headings=frozenset({row["id"]}),
        section=row["id"],
        # Notes about the section's subject throughout rank above passing mentions:
        # section-level link prediction recall@10 0.557 -> 0.565, MRR 0.285 ->
        # 0.308, hit@5 0.51 -> 0.53 (BENCHMARKS.md, Info manuals, MiniLM).
        whole_notes=True,
    )
    return mode, _finish(store, settings, mode, results, links, path, keep_all, node)


def _finish(
    store: Store, settings: Settings, mode: str, results: list[retrieval.Result], links: set[str], path: str,
    keep_all: bool, node: str | None = None,
) -> list[retrieval.Result]:
    """Results marked ``linked`` (in ``links``, the nodes the query's node links to),
    ``links_here`` (linking to the query's ``node``: a capture of its text, whose
    ``:SOURCE:`` links back, among them) and ``same_file``, cut at
    ``settings.min_score`` (:func:`.relevance.cut`; with ``keep_all`` kept, marked)."""
    backlinks = store.links_to(node) if node else set()
    marked = [
        dataclasses.replace(r, linked=r.node_id in links, links_here=r.node_id in backlinks, same_file=r.file == path)
        for r in results
    ]
    return relevance.cut(marked, relevance.min_score_for(mode, settings.min_score), keep_all=keep_all)


async def similar_to_text(
    index: NotesIndex, text: str, k: int = 10, *, node: str | None = None, exclude_linked: bool = False,
    path: str | None = None, line: int | None = None, keep_all: bool = False,
) -> tuple[str, list[retrieval.Result]]:
    """Notes similar to free text, read as the index reads a note (from ``path`` and
    ``line`` when it is a part of that file: :func:`.text_vectors.posted_text`), by its
    vector and its words: :func:`similar_text` on a reader thread. No notes for a text from
    a private part of the saved file (:func:`.private_places.is_private_place`): it is
    neither embedded nor searched."""
    if not text.strip():
        raise BadRequest("the text is empty")
    if await is_private_place(index, path, line):  # cut off from what makes it private: nothing of it is read
        return ("vector" if await index.has_vectors() else "keyword"), []
    text = await without_saved_private_lines(index, text, path)  # a part cut off from its private heading
    if not text.strip():
        return ("vector" if await index.has_vectors() else "keyword"), []
    posted = await text_vectors.posted_text(index, text, path=path, line=line, embed=await index.has_vectors())
    return await index.read(
        lambda s: similar_text(
            s, index.settings, posted.words, posted.vector, k, node=node, exclude_linked=exclude_linked,
            section=posted.heading, note=posted.note, whole_note=text_vectors.is_whole_note(text), keep_all=keep_all,
            naming=mentions.Naming(posted.own_words, linked=frozenset(posted.links)),
        )
    )


def similar_text(
    store: Store, settings: Settings, text: str, vector: Sequence[float] | None, k: int, *, node: str | None = None,
    exclude_linked: bool = False, section: int | None = None, note: str | None = None, whole_note: bool = False,
    keep_all: bool = False, naming: mentions.Naming = mentions.Naming(),
) -> tuple[str, list[retrieval.Result]]:
    """Notes similar to a text, by its words ``text`` (what :class:`.text_vectors.Posted`
    reads in it) and its ``vector`` (None without one), ranked as ``?node=`` ranks a
    whole note (candidate notes rescored with their whole-note
    vectors, joined by the notes the text's rarest words find, re-ranked by the words
    they share) without the graph signal (a text has no place in the graph), then those
    written about the same time as ``node`` and those the text names moved up
    (:mod:`.moves`; ``naming``: the text's own words and links, to which its note's are
    added here); scored, ordered by the score where it disagrees by more than
    :data:`.relevance.ORDER_ODDS` and cut as the others (:mod:`.relevance`).

    ``node``: the node ``text`` is an unsaved state of (Emacs sends the ID enclosing the
    heading at point). Its saved self is left out, with the nodes enclosing it or nested
    in it (and, with ``exclude_linked``, those it links to or from), before the
    re-ranking, as ``?node=`` leaves them out, and the results are marked ``linked`` and
    ``same_file`` as ``?node=``'s are. An ID the index does not hold (a note never
    saved) leaves nothing out. ``section``: the saved heading the text is an unsaved
    state of (:class:`.text_vectors.Posted`), left out with its copies in other notes, as
    ``?file=&line=`` leaves them out (:func:`.similarity.similar`). ``note``: for a text
    with no saved heading, the saved note it is a new part of, which (as ``section``'s
    note) it does not name. ``whole_note``: the
    text is a whole note (:func:`.text_vectors.is_whole_note`), whose vector is the mean
    of its headings' as ``?node=``'s is: it asks as ``?node=`` does (``note_query``).

    Why (an unsaved buffer asks what its saved note would): measured with MiniLM on three
    corpora (BENCHMARKS.md, Retrieval across granularities), link prediction by text
    rose on all 12 numbers without the cut-off, e.g. Japanese notes recall@10 / MRR
    0.166 / 0.151 -> 0.310 / 0.296, English 0.398 / 0.389 -> 0.427 / 0.421. Why leave
    the saved note out in the daemon rather than only in Emacs (which drops it from the
    list as well): it matches the text best by vector and by every word, so it took one
    of the re-ranked candidates' places and squeezed the others' standardised scores
    (BENCHMARKS.md, Retrieval across granularities, fourth round)."""
    own = store.node(node) if node else None
    excluded: set[str] = set()
    enclosing: set[str] = set()
    if own is not None:
        enclosing = enclosing_nodes(store, own)
        excluded = {node} | nested_nodes(store, own) | enclosing
        if exclude_linked:
            excluded |= store.linked_nodes(node)
    day = written.day_of(store, node) if own is not None else None
    words: dict[str, float] = {}
    wanted, k = k, moves.ranked_for(k)  # the first results do not depend on k
    mode, results = similarity.similar(
        store, k=k, vector=vector, text=text, whole_notes=True, words=words, exclude_nodes=frozenset(excluded),
        section=section, exclude_headings=frozenset() if section is None else frozenset({section}),
        note_query=whole_note, depth=moves.depth(k),
    )
    near = written.supported(store, vector, words, written.nearness(store, day, results), results)
    naming, links = _text_naming(store, naming, own, enclosing, section, note)
    named = naming.named(store, results)
    results = moves.moved_up(results, moves.summed(written.places(near), mentions.places(named, whole_note)), k)
    results = relevance.in_evidence_order(
        relevance.rescore(store, results, relevance.Signals(vector, words=words, written=near, named=named))
    )[:wanted]
    if own is not None:
        return mode, _finish(store, settings, mode, results, links, own["file"], keep_all, own["own_id"])
    return mode, relevance.cut(results, relevance.min_score_for(mode, settings.min_score), keep_all=keep_all)


def _text_naming(
    store: Store, naming: mentions.Naming, own: dict | None, enclosing: set[str], section: int | None,
    note: str | None = None,
) -> tuple[mentions.Naming, set[str]]:
    """``(naming, links)`` of a posted text: ``naming`` with the text's note (its ``own``
    row and the ``enclosing`` nodes, else the note of its saved heading ``section``, else
    the saved ``note`` it is new in, and those enclosing it) and the notes that note links
    to, which are ``links``."""
    if own is None and (section is not None or note is not None):
        node = store.heading_owners([section]).get(section, (None, ""))[0] if section is not None else note
        own = store.node(node) if node else None
        enclosing = enclosing_nodes(store, own) if own is not None else set()
    if own is None:
        return naming, set()
    links = store.links_from(own["own_id"])
    return mentions.Naming(naming.words, frozenset({own["own_id"], *enclosing}), naming.linked | links), links


def node_query(store: Store, node_id: str) -> tuple[Sequence[float] | None, str, str]:
    """What a whole node is searched by: its mean stored vector (None if none is
    embedded), the titles and text of its headings, and their :func:`.mentions.own_words`
    (what names other notes). All three are the user's words: the oracle's in the note
    (an answer /converse wrote there, a grounded model's reply) are left out, unless the
    node holds nothing else (:meth:`~arcology_oracle.store.Store.node_vectors`)."""
    rows = store.node_headings(node_id)
    text = " ".join(r["title"] + " " + r["text"] for r in ([r for r in rows if not r["oracle"]] or rows))
    own_words = mentions.own_words_of(store, rows)
    return store.node_vectors([node_id]).get(node_id), text, own_words


def enclosing_nodes(store: Store, node_row: dict) -> set[str]:
    """IDs of the nodes whose subtree holds ``node_row`` (its file node among them)."""
    if node_row["level"] == 0:
        return set()
    stack: list[tuple[int, str | None]] = []  # (level, own ID) of the headings above
    for start_line, level, own_id in store.file_outline(node_row["file"]):
        if start_line >= node_row["start_line"]:
            break
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, own_id))
    return {own_id for level, own_id in stack if own_id and level < node_row["level"]}


def nested_nodes(store: Store, node_row: dict | None) -> set[str]:
    """IDs of the nodes inside ``node_row``'s subtree (a file node: the whole file)."""
    if node_row is None:
        return set()
    inside, level = set(), node_row["level"]
    for start_line, row_level, own_id in store.file_outline(node_row["file"]):
        if start_line <= node_row["start_line"]:
            continue
        if node_row["level"] > 0 and row_level <= level:
            break
        if own_id:
            inside.add(own_id)
    return inside
