"""Choosing the notes for a question: retrieval, the relevance gate, near-duplicates,
the context budget.

:func:`gather_context` retrieves candidate headings (hybrid search over the question and
the buffer the user is looking at), keeps those that pass the **relevance gate**, drops
near-duplicates, groups them by node and fits them into the context budget; the result
is a :class:`~arcology_oracle.answers.sources.NoteContext` with the notes numbered and
delimited as data, ready for :func:`~arcology_oracle.answers.prompts.grounding_system_message`.

The relevance gate: with vectors, a heading is relevant when the cosine similarity of
its best chunk to the question (or buffer) vector reaches ``settings.min_vector_similarity``
(0.35: measured with all-MiniLM-L6-v2 on examples/roam, answerable questions scored
0.42-0.80 and unrelated ones 0.10-0.29), or when it holds every word of its subject, not
its time nor frame ("what do I know about"; :func:`.timeline.subject`; :func:`.windows.terms`:
in Japanese a noun of three characters is two, as "miso soup" is) of a question of two
or more words (names and error codes that embeddings blur). In keyword mode (no vectors,
embedder down) it is relevant when it holds ``settings.min_keyword_coverage`` or more of
the query's content words (at most ``KEYWORD_TERMS`` for long buffers). When none is
relevant the model is asked without notes and told to say so (``used_notes`` False).

Privacy: note text reaches a prompt only from the index, where excluded, crypt and
private headings never are; this module never reads org files.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..config import Settings
from ..errors import BadRequest
from ..store import Store
from . import retrieval, timeline, windows
from .embed_wait import within_wait
from .index_api import NotesIndex
from .prompts import escape_data
from .sources import NoteContext, Source, org_link_label
from .when import DateRange
from .windows import terms as _terms

KEYWORD_TERMS = 6  # a long buffer needs this many shared words, not half its vocabulary
BUFFER_QUERY_CHARS = 4000  # how much of the buffer is embedded / searched
DEDUP_JACCARD = 0.8


def keyword_coverage(query_terms: set[str], text: str) -> float:
    """The share of the query's content words found in ``text`` (at most KEYWORD_TERMS
    words are required, so a long buffer is not held to half its vocabulary)."""
    if not query_terms:
        return 0.0
    shared = len(query_terms & _terms(text))
    return min(1.0, shared / min(len(query_terms), KEYWORD_TERMS))


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b))


def _normal(text: str) -> str:
    return " ".join(retrieval.WORD.findall(text.lower()))


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = retrieval.WORD.findall(text.lower())
    if len(words) < 3:
        return {tuple(words)}
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def _jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


@dataclass(slots=True)
class _Candidate:
    heading_id: int
    row: dict
    fused: float
    relevance: float
    excerpt: str


def _excerpt(row: dict, chunks: list[tuple[str, str]], best_hash: str | None, cap: int) -> str:
    text = (row["text"] or "").strip()
    if len(text) <= cap:
        return text
    # A long heading: its best-matching window, not its first characters.
    for text_hash, chunk_text in chunks:
        if text_hash == best_hash:
            head, _, body = chunk_text.partition("\n\n")
            text = body.strip() or text
            break
    return text if len(text) <= cap else text[: cap - 1].rstrip() + "…"


@dataclass(slots=True)
class _Pool:
    """The fused candidates for one question and what the gate reads about them:
    heading rows, chunks ``(hash, text)`` by heading, file info by path, and (vector
    mode only) stored vectors by chunk hash."""

    fused: list[tuple[int, float]]
    rows: dict[int, dict]
    chunks: dict[int, list[tuple[str, str]]]
    files: dict[str, dict]
    stored: dict
    range_gate: timeline.RangeGate | None = None  # with a date range
    oracle: frozenset[int] = frozenset()  # the oracle's words (Store.oracle_words)


def select_context(
    store: Store,
    settings: Settings,
    *,
    question: str,
    buffer: str | None,
    vectors: Sequence[Sequence[float]],
    k: int,
    exclude_nodes: frozenset[str] = frozenset(),
    now: _dt.date | None = None,
    date_range: DateRange | None = None,
    seen: Sequence[str] = (),
    with_answers: bool = False,
) -> NoteContext:
    """The synchronous part of :func:`gather_context` (runs on a reader thread): rank
    the candidates, gate them, drop near-duplicates, fit the budget, number the notes.
    With ``date_range``, only headings dated in it, and the notes in date order.
    ``with_answers``: windows of a conversation show the oracle's turns too (/recall)."""
    vectors = [v for v in vectors if v is not None]
    mode = "vector" if vectors and store.has_vector_table() else "keyword"
    size, searched = max(4 * k, 40), vectors if mode == "vector" else []
    if date_range is None:
        pool = _candidate_pool(store, question, buffer, searched, size)
    else:  # see timeline.dated_candidates
        pool = _pool_of(store, *timeline.dated_candidates(store, question, buffer, searched, size, date_range), searched)
    seen = [f" {_normal(t)} " for t in seen]
    candidates, best_score = _gate(
        pool, settings, question=question, buffer=buffer, vectors=vectors,
        exclude_nodes=exclude_nodes, now=now or _dt.date.today(), k=k, seen=seen,
    )  # fmt: skip
    # Dialogue headings give windows of turns instead (answers/windows.py), in a share of
    # the budget as large as their share of the k notes.
    found = windows.find_windows(
        store, settings, question=question, vectors=vectors, k=k, date_range=date_range, exclude_nodes=exclude_nodes,
        seen=seen, with_answers=with_answers,
    )  # fmt: skip
    dialogue = store.dialogue_members([c.heading_id for c in candidates]) if store.has_turns() else set()
    only_time = pool.range_gate is not None and pool.range_gate.only_time  # relevance says nothing: by date
    shared = [c for c in candidates if c.heading_id not in dialogue]
    candidates, found = windows.share(shared, found, k, settings.context_chars, by_date=only_time)
    groups = windows.interleave(
        _fit_budget(_drop_near_duplicates(candidates), k - len(found), settings.context_chars - found.chars), found
    )
    return _number_notes(timeline.journal_order(groups, by_date=date_range is not None), pool.files, mode, best_score)


def _candidate_pool(
    store: Store, question: str, buffer: str | None, vectors: Sequence[Sequence[float]], size: int
) -> _Pool:
    """The best ``size`` headings by reciprocal rank fusion of a vector ranking per query
    vector (none in keyword mode), BM25 over the question, and BM25 (any word) over the
    buffer; with what the gate needs to know about each."""
    rankings: list[list[int]] = [[h for h, _ in retrieval.vector_hits(store, v, size)] for v in vectors]
    if question:
        rankings.append([h for h, _, _ in retrieval.keyword_hits(store, question, size)])
    if buffer:
        rankings.append([h for h, _, _ in retrieval.keyword_hits(store, buffer, size, any_term=True)])
    fused = retrieval.reciprocal_rank_fusion(*rankings)[:size]
    return _pool_of(store, fused, None, vectors)


def _pool_of(store: Store, fused: list[tuple[int, float]], gate: timeline.RangeGate | None, vectors: Sequence) -> _Pool:
    """The pool of the ``fused`` headings: their rows, chunks, files and stored vectors."""
    ids = [h for h, _ in fused]
    rows = store.headings(ids)
    chunks = store.heading_chunks(ids)
    files = store.file_info([r["file"] for r in rows.values()])
    stored = store.vectors_for_hashes([h for cs in chunks.values() for h, _ in cs]) if vectors else {}
    return _Pool(fused, rows, chunks, files, stored, gate, frozenset(store.oracle_words(ids)))


def _gate(
    pool: _Pool,
    settings: Settings,
    *,
    question: str,
    buffer: str | None,
    vectors: Sequence[Sequence[float]],
    exclude_nodes: frozenset[str],
    now: _dt.date,
    k: int = 8,
    seen: Sequence[str] = (),
) -> tuple[list[_Candidate], float | None]:
    """The candidates that pass the relevance gate (see the module docstring), best
    first by fused score (weighted by recency when ``recency_half_life_days`` is set),
    each with its excerpt; and the best relevance seen (passed or not). A heading whose
    excerpt is already in the buffer is left out: it is in front of the model, and so
    are the oracle's own earlier answers (unless ``oracle_answers_as_evidence``): they
    are not the user's notes. A date range gates too (:class:`.timeline.RangeGate`)."""
    gate = pool.range_gate
    # What the question is about, without its time or frame ("what do I know about"): a
    # heading holds no "know" (:func:`.timeline.subject`); all frame, the question's words.
    question_terms = _terms(timeline.subject(question, gate.rng if gate else None)) or _terms(question)
    query_terms = question_terms | _terms((buffer or "")[:BUFFER_QUERY_CHARS])
    buffer_norm = _normal(buffer) if buffer else ""
    cap = max(400, settings.context_chars // 3)
    half_life = settings.recency_half_life_days
    candidates: list[_Candidate] = []
    best_score: float | None = None
    for heading_id, score in pool.fused:
        row = pool.rows.get(heading_id)
        if row is None or (row["node_id"] is not None and row["node_id"] in exclude_nodes):
            continue
        if (gate is not None and not gate.admits(row)) or (
            not settings.oracle_answers_as_evidence and heading_id in pool.oracle
        ):
            continue
        if seen and any(f" {_normal(row['title'] + ' ' + (row['text'] or ''))} " in turn for turn in seen):
            continue  # a turn of the conversation being answered
        if retrieval.is_empty_heading(row) or (row["level"] == 0 and not (row["text"] or "").strip()):
            continue  # an empty heading, or a file's title alone (its headings carry it)
        chunks = pool.chunks.get(heading_id, [])
        best_hash, relevance = _best_chunk(chunks, pool.stored, vectors)
        file = pool.files.get(row["file"], {})
        words = " ".join([file.get("title") or "", *row["olp"], row["title"], row["node_title"], row["text"] or ""])
        if relevance is not None:
            # Vector mode; a heading holding every word of a question (names, error
            # codes: what embeddings blur) passes too.
            passed = relevance >= settings.min_vector_similarity or (
                len(_terms(question)) >= 2 and keyword_coverage(question_terms, words) >= 1.0
            )
        else:  # keyword mode, or this heading's chunks are not embedded yet
            relevance = keyword_coverage(query_terms, words)
            passed = relevance >= settings.min_keyword_coverage
        best_score = relevance if best_score is None else max(best_score, relevance)
        if not passed and not (gate is not None and gate.passes(heading_id, len(candidates), k)):
            continue
        excerpt = _excerpt(row, chunks, best_hash, cap)
        if buffer_norm and excerpt and _normal(excerpt) in buffer_norm:
            continue  # already in front of the model, as the buffer
        if half_life:
            score *= timeline.recency_weight(row["date"], file.get("mtime_ns"), half_life, now)
        candidates.append(_Candidate(heading_id, row, score, relevance, excerpt))
    candidates.sort(key=lambda c: c.fused, reverse=True)
    return candidates, best_score


def _best_chunk(
    chunks: Iterable[tuple[str, str]], stored: dict, vectors: Sequence[Sequence[float]]
) -> tuple[str | None, float | None]:
    """``(hash, cosine)`` of the heading's chunk most similar to any query vector, or
    ``(None, None)`` when none of its chunks has a stored vector."""
    best_hash, relevance = None, None
    for text_hash, _ in chunks:
        vector = stored.get(text_hash)
        if vector is None:
            continue
        sim = max(_dot(vector, q) for q in vectors)
        if relevance is None or sim > relevance:
            best_hash, relevance = text_hash, sim
    return best_hash, relevance


def _drop_near_duplicates(candidates: list[_Candidate]) -> list[_Candidate]:
    """Near-duplicates (copied paragraphs, the same text in two files) given once: the
    first of each group, by word-trigram Jaccard similarity of title and excerpt."""
    kept: list[_Candidate] = []
    kept_shingles: list[set] = []
    for cand in candidates:
        sh = _shingles(" ".join([cand.row["title"], cand.excerpt]))
        if any(_jaccard(sh, other) >= DEDUP_JACCARD for other in kept_shingles):
            continue
        kept.append(cand)
        kept_shingles.append(sh)
    return kept


def _fit_budget(candidates: list[_Candidate], k: int, budget: int) -> list[list[_Candidate]]:
    """The candidates grouped by node (first appearance orders the notes), at most ``k``
    notes, within ``budget`` characters; a first note too long for the budget is cut."""
    groups: dict[str, list[_Candidate]] = {}
    for cand in candidates:
        key = cand.row["node_id"] or f"file:{cand.row['file']}"
        if key not in groups and len(groups) >= k:
            continue
        cost = len(cand.excerpt) + len(cand.row["title"]) + 40 + (0 if key in groups else 120)
        if cost > budget:
            if groups:
                continue
            cand.excerpt = cand.excerpt[: max(0, budget - 200)]
            cost = budget
        budget -= cost
        groups.setdefault(key, []).append(cand)
    return list(groups.values())


def _number_notes(
    groups: list[list[_Candidate]], files: dict[str, dict], mode: str, best_score: float | None
) -> NoteContext:
    """The notes numbered from 1 in order: a :class:`Source` each (its most relevant
    heading) and the ``<note>`` blocks for the prompt."""
    sources: list[Source] = []
    blocks: list[str] = []
    for n, members in enumerate(groups, start=1):
        if isinstance(members, windows.Window):
            sources.append(windows.source(n, members))
            title = files.get(members.row["file"], {}).get("title") or members.row["node_title"]
            blocks.append(windows.block(n, members, title))
            continue
        best = max(members, key=lambda c: c.relevance)
        row = best.row
        date = next((c.row["date"] for c in members if c.row["date"]), None)
        sources.append(
            Source(
                n=n,
                node_id=row["node_id"],
                title=row["node_title"],
                heading=row["title"],
                file=row["file"],
                line=row["start_line"],
                score=round(float(best.relevance), 4),
                olp=list(row["olp"]),
                date=date,
            )
        )
        file_title = files.get(row["file"], {}).get("title") or row["node_title"]
        blocks.append(_note_block(n, row["node_title"], date, row["file"], file_title, members))
    texts = {n: g.text for n, g in enumerate(groups, start=1) if isinstance(g, windows.Window)}
    return NoteContext(
        window_texts=texts,
        sources=sources,
        notes_block="\n\n".join(blocks),
        used_notes=bool(sources),
        mode=mode,
        best_score=None if best_score is None else round(float(best_score), 4),
    )


def _note_block(n: int, title: str, date: str | None, path: str, file_title: str, members: list[_Candidate]) -> str:
    lines = [f'<note n="{n}">', f"[{n}] {org_link_label(title)}"]
    if date:
        lines.append(f"Date: {date}")
    lines.append(f"File: {path}")
    for cand in sorted(members, key=lambda c: c.row["start_line"]):
        row = cand.row
        outline = " > ".join([file_title, *row["olp"], row["title"]]) if row["level"] else file_title
        lines.append("")
        lines.append(f"## {outline}")
        if cand.excerpt:
            lines.append(escape_data(cand.excerpt))
    lines.append("</note>")
    return "\n".join(lines)


async def gather_context(
    index: NotesIndex,
    question: str,
    *,
    buffer: str | None = None,
    k: int = 8,
    exclude_nodes: Iterable[str] = (),
    date_range: DateRange | None = None,
    seen: Sequence[str] = (),
    with_answers: bool = False,
) -> NoteContext:
    """The notes to answer ``question`` with (see the module docstring), from a hybrid
    search over the question and, when given, ``buffer`` (so a buffer alone finds its
    related notes). At most ``k`` notes, within ``settings.context_chars`` characters.
    A heading whose title and text are in one of the texts ``seen`` (the turns of the
    conversation being answered, which the index holds once its file is saved) is never
    one of them. ``with_answers``: see :func:`select_context`. Raises BadRequest when both are empty.
    Works without an embedder (keyword mode): one busy or hung is waited for ``search_embed_wait`` at most,
    as ``/search`` waits (:mod:`.embed_wait`; the embedding is cached when it comes)."""
    question = (question or "").strip()
    buffer = (buffer or "").strip() or None
    if not question and not buffer:
        raise BadRequest("give a question or a buffer")
    if k < 1:
        raise BadRequest("k must be at least 1")
    vectors: list[list[float]] = []
    if await index.has_vectors():
        words = timeline.subject(question, date_range) if date_range is not None else question
        asked = [index.query_vector(words)] if words else []
        if buffer:
            asked.append(index.query_vector(buffer[:BUFFER_QUERY_CHARS], document=True))
        # Both at once (side by side across a network), each for search_embed_wait at most.
        vectors = [v for v in await asyncio.gather(*(within_wait(index, a) for a in asked)) if v is not None]
    settings = index.settings
    excluded = frozenset(exclude_nodes)
    return await index.read(
        lambda store: select_context(
            store, settings, question=question, buffer=buffer[:BUFFER_QUERY_CHARS] if buffer else None, vectors=vectors,
            k=k, exclude_nodes=excluded, date_range=date_range, seen=seen, with_answers=with_answers,
        )  # fmt: skip
    )
