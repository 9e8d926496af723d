"""Similar notes (``/similar``, ``/suggest-links``): the vector neighbours of a query,
one heading per note, and for a whole note or a section the re-ranking of the candidate
notes by the words they share with it.

Synchronous over one :class:`~arcology_oracle.store.Store`, like :mod:`.retrieval`, whose
pieces (vector and keyword hits, results) it builds on.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..notes import cjk
from ..store import Store
from ..store.search import bm25_scores
from . import fusion, holders
from .held_words import held_shares, note_words, words_of
from .nearest import exhausted, rows_of_nodes, widened
from .retrieval import (
    Result,
    fts_query,
    keyword_match,
    note_key,
    quoted,
    snippets_of,
    to_results,
    vector_hits,
)

# How many of the best candidate notes /similar re-ranks by shared words (k*3 at k=10),
# and how many of the query note's most frequent words it looks for.
RERANK_NOTES = 30
MAX_QUERY_WORDS = 64
# How many notes the query's rarest words may add to those candidates (more for a whole
# note and for CJK text, see keyword_notes), and how many headings those words may hold
# in all, every one of which the keyword query scores: the bound on its cost (see
# _keyword_candidates).
KEYWORD_NOTES = 5
KEYWORD_HEADINGS = 100
# The most of each candidate note's text the re-ranking reads (its first ~5,000 words): a
# year of journal in one file must not make every /similar slow.
RERANK_NOTE_CHARS = 32_000


def similar(
    store: Store,
    *,
    k: int,
    vector: Sequence[float] | None,
    text: str,
    exclude_nodes: frozenset[str] = frozenset(),
    exclude_headings: frozenset[int] = frozenset(),
    whole_notes: bool = False,
    words: dict[str, float] | None = None,
    section: int | None = None,
    note_query: bool = False,
    depth: int | None = None,
    later: bool = False,
) -> tuple[str, list[Result]]:
    """Headings similar to a query, one per node: by ``vector`` when given (and vectors
    exist), else by keywords of ``text``, from a pool of headings widened past the ones
    left out (:mod:`.nearest`). Returns ``(mode, results)``: the first ``depth or k`` of
    the ranking made for ``k``, and ``"keyword"`` only when there is no ``vector`` or no
    other note has vectors yet and words find some, else ``"vector"`` (empty or not).

    With ``whole_notes`` (the query is a whole note), a candidate note's score is the mean
    of its best heading's similarity and its whole-note similarity, so a note that is
    about the same thing throughout beats one that mentions it in passing; then notes
    sharing ``text``'s words join the candidates, which are re-ranked by that score fused
    with how many of ``text``'s distinctive words each one shares (see
    :func:`_rerank_by_words`). ``words``, when given, gets that word evidence: each
    candidate note's (:func:`~.retrieval.note_key`) best heading's index-wide BM25.

    ``section``: the heading the query is, when it is one (``?file=&line=``, then also
    in ``exclude_headings``). Its copies among the vector hits (:meth:`~arcology_oracle.store.Store.copies_of`:
    the same title and text in another note) are left out as it is, from the vector
    hits, the word evidence and the results; their notes still count by their other
    headings. Why: a section kept twice (an editor's temporary copy, a backup, a sync
    conflict, a manual's chapter) matched itself, by vector and by every word, so the
    copy's note came first whatever else it held; on the Info manuals it was the first
    result of all 84 section queries and a link target in 8 (BENCHMARKS.md, Retrieval
    across granularities, third round). A copy embeds almost as the section itself, so
    it is among its nearest headings: they are all that is compared.

    ``note_query``: the query is a whole note (``?node=``, ``/suggest-links`` for a node):
    its words may bring more candidate notes than a section's (:func:`keyword_notes`), its
    vector keeps its full weight on CJK text (:func:`vector_weight`), and notes holding
    other notes are not discounted as hubs (:mod:`.holders`: whole notes link to them).

    The oracle's own answers (:mod:`.roles`) are never among the results. ``later``:
    results found by vector are :class:`~.retrieval.Pending` (the caller makes the
    snippets and roles of those it keeps: :func:`~.retrieval.finished`).
    """
    pool, depth = max(k * 10, 100), depth or k
    excluded = lambda h, o: o is None or h in exclude_headings or o[0] in exclude_nodes  # noqa: E731
    if vector is not None and store.has_vector_table():
        left_out = lambda: rows_of_nodes(store, exclude_nodes)  # noqa: E731 (not the headings: see .nearest)
        found = widened(store, lambda size, skip: vector_hits(store, vector, size, skip), pool, excluded, k, left_out)
        owners = found.owners
        hits = [(h, score) for h, score in found.hits if h not in found.oracle]
        if section is not None:
            copies = store.copies_of(section, [h for h, _ in hits])
            if copies:
                hits = [(h, score) for h, score in hits if h not in copies]
                exclude_headings = exclude_headings | copies
        if hits and whole_notes:
            hits = _rescore_by_note(store, hits, vector, limit=k * 3, exclude_nodes=exclude_nodes, owners=owners)
            if not note_query:  # a section: notes holding other notes are hubs (.holders)
                hits = holders.discounted(store, hits, owners)
            evidence = {} if words is None else words
            hits = _rerank_by_words(
                store, hits, text, vector, exclude_nodes, evidence, owners=owners, exclude_headings=exclude_headings,
                note_query=note_query,
            )
        results = to_results(
            store, hits, depth, per_node=True, exclude_nodes=exclude_nodes, exclude_headings=exclude_headings,
            later=later,
        )
        # Nothing of another note near it: with every vector read, the other notes have none
        # yet (their words may find them); else they are further than MAX_POOL chunks.
        if results or found.eligible or not exhausted(store, vector, found.size, found.skip):
            return "vector", results
    match = fts_query(text, any_term=True)  # what keyword_match asks (for the snippets)
    by_words = lambda size, _: keyword_match(store, text, size, any_term=True, snippets=False)[1]  # noqa: E731
    keyword = widened(store, by_words, pool, excluded, k).hits
    results = to_results(
        store, [(h, s) for h, s, _ in keyword], depth, snippets=snippets_of(store, match, keyword), per_node=True,
        exclude_nodes=exclude_nodes, exclude_headings=exclude_headings, exclude_oracle=True,
    )  # fmt: skip
    # A query with vectors is answered by them unless words found what they could not.
    return ("vector", []) if not results and vector is not None and store.has_vector_table() else ("keyword", results)


def _rescore_by_note(
    store: Store,
    hits: list[tuple[int, float]],
    query: Sequence[float],
    *,
    limit: int,
    exclude_nodes: frozenset[str],
    owners: dict[int, tuple[str | None, str]] | None = None,
) -> list[tuple[int, float]]:
    """Best heading per note, rescored with the note's mean vector (see :func:`similar`).
    ``owners``: :meth:`~arcology_oracle.store.Store.heading_owners` of (at least) ``hits``
    when the caller has them, else read here."""
    if owners is None:
        owners = store.heading_owners([h for h, _ in hits])
    best: dict[str, tuple[int, float]] = {}
    for heading_id, score in hits:
        owner = owners.get(heading_id)
        if owner is None or owner[0] in exclude_nodes:
            continue
        key = note_key(*owner)
        if key not in best:
            best[key] = (heading_id, score)
    rescored = []
    candidates = list(best.items())[:limit]
    # One query for every candidate note's vector: per-note lookups were most of /similar.
    note_vectors = store.node_vectors([key for key, _ in candidates if not key.startswith("file:")])
    for key, (heading_id, score) in candidates:
        note_vector = note_vectors.get(key)
        note_score = score if note_vector is None else float(np.dot(query, note_vector))
        rescored.append((heading_id, (score + note_score) / 2))
    return sorted(rescored, key=lambda item: item[1], reverse=True)


def _rerank_by_words(
    store: Store,
    hits: list[tuple[int, float]],
    text: str,
    vector: Sequence[float],
    exclude_nodes: frozenset[str],
    evidence: dict[str, float] | None = None,
    *,
    owners: dict[int, tuple[str | None, str]] | None = None,
    exclude_headings: frozenset[int] = frozenset(),
    note_query: bool = False,
) -> list[tuple[int, float]]:
    """Note-level candidates (one heading per note, best first) with the first
    ``RERANK_NOTES``, joined by up to :func:`keyword_notes` found by the rarest words of
    ``text`` (:func:`_keyword_candidates`), re-ranked by their vector score fused with
    two lexical ones: Okapi BM25 of each candidate's whole text (every heading of the
    note) against the words of ``text``, and its best heading's BM25 in the whole index
    (0 for a note none of the rarest words finds). The fusion is
    :func:`fusion.standardised`'s, as in /search: the vector score's z-score among the
    candidates (weighed by :func:`vector_weight`: less for a section or a text in CJK)
    plus the mean of the lexical z-scores (the two BM25s, a note sharing no word scoring 0;
    for a section, also :mod:`.held_words`), so a ranking whose top stands far above the
    rest outweighs one that barely separates them, and words weigh what the vectors weigh. The rest keep
    their order, below. Scores are 1.0 for the first note and fall towards 0 with the
    fused score's distance below it.

    Why words: a small embedding model sums a note up as its gist, and notes on one subject
    all look alike to it. What makes a person link two notes is often narrower: the same
    command, option, person, project or term of art appears in both. BM25 over whole notes
    catches exactly that. Word statistics (document frequency, mean length) are those of
    the candidates, not of the whole index: words every candidate shares (the subject that
    made them candidates) say nothing about which of them to prefer, and the cost stays
    bounded by ``2 * RERANK_NOTES`` notes' text (for text without CJK, ``RERANK_NOTES +
    KEYWORD_NOTES``, or 1.5 × ``RERANK_NOTES`` for a whole note) whatever the size of
    the index or ``k``. The index-wide BM25 adds what those local statistics cannot see: which of
    the shared words are rare among all the notes (see :func:`_keyword_candidates`).

    Why z-scores rather than reciprocal ranks (what this did before): ranks give the two
    rankings the same say whatever they hold, and near-ties in the vector scores of notes
    on one subject became whole ranks apart. Measured with MiniLM on three corpora, by
    node and by section (BENCHMARKS.md, Quality on real notes, second round): MRR up on
    five of the six, down 0.004 on the sixth; recall@10 up or within 0.012.

    The BM25 is SQLite's own (:func:`~arcology_oracle.store.search.bm25_scores`: FTS5,
    the index's tokenizer, so "options" meets "option", on a scratch in-memory table;
    Python's regex alone took longer to tokenize the candidates). ``owners``: as for
    :func:`_rescore_by_note` (passed on to :func:`_keyword_candidates`, with
    ``exclude_headings`` and ``note_query``).
    """
    head = hits[:RERANK_NOTES]
    words = frequent_words(text, MAX_QUERY_WORDS)
    if len(head) < 2 or not words:
        return hits
    match = " OR ".join(quoted(words))
    index_bm25, joining = _keyword_candidates(
        store, words, head, vector, exclude_nodes, {} if evidence is None else evidence, owners=owners,
        exclude_headings=exclude_headings, note_query=note_query,
    )
    head += joining
    # Each note's text followed by its CJK bigrams, so that Japanese and Chinese words count.
    notes = {h: note_key(*owners[h]) for h, _ in head if owners and h in owners}
    token = store.nodes_generation() if store.shares_reads else None  # before the texts
    texts = store.note_texts([h for h, _ in head], RERANK_NOTE_CHARS, cjk_bigrams=True, notes=notes)
    bodies = [texts.get(heading_id, "") for heading_id, _ in head]
    note_bm25 = bm25_scores(bodies, match)
    vector_z = fusion.standardised(list(enumerate(s for _, s in head)))
    note_z = fusion.standardised([(i, note_bm25.get(i, 0.0)) for i in range(len(head))])
    index_z = fusion.standardised([(i, index_bm25.get(h, 0.0)) for i, (h, _) in enumerate(head)])
    lexical = [(note_z[i] + index_z[i]) / 2 for i in range(len(head))]
    if not note_query:  # a section: also how much of each candidate's own words it holds (.held_words)
        bags = note_words(bodies, [notes.get(h) for h, _ in head], token, store.notes_changed_since)
        held_z = fusion.standardised(list(enumerate(held_shares(text, bags))))
        lexical = [(2 * lexical[i] + held_z[i]) / 3 for i in range(len(head))]
    weight = vector_weight(words, note_query)
    fused = sorted(((h, weight * vector_z[i] + lexical[i]) for i, (h, _) in enumerate(head)),
                   key=lambda item: -item[1])  # stable: equal sums keep the vector order
    # The rest below every re-ranked note, in their order (to_results keeps a note's first).
    floor = fused[-1][1]
    fused += [(heading_id, floor - r) for r, (heading_id, _) in enumerate(hits[RERANK_NOTES:], start=1)]
    # Shown as 1 / (1 + distance below the first): 1.0 for the first, then down towards 0.
    top = fused[0][1]
    return [(heading_id, 1.0 / (1.0 + (top - score))) for heading_id, score in fused]


def _keyword_candidates(
    store: Store,
    words: list[str],
    head: list[tuple[int, float]],
    vector: Sequence[float],
    exclude_nodes: frozenset[str],
    evidence: dict[str, float],
    *,
    owners: dict[int, tuple[str | None, str]] | None = None,
    exclude_headings: frozenset[int] = frozenset(),
    note_query: bool = False,
) -> tuple[dict[int, float], list[tuple[int, float]]]:
    """The index-wide word evidence for :func:`_rerank_by_words`: ``({heading id: BM25
    of its note's best heading}, joining)``, by the rarest of the query's ``words`` (its
    :func:`frequent_words`), as many as together are held by at most
    ``KEYWORD_HEADINGS`` headings, all of which are scored. ``joining`` is up to
    :func:`keyword_notes` (of ``words`` and ``note_query``) notes not among ``head`` nor
    ``exclude_nodes``, best by that BM25 first, each as ``(its best heading, its
    whole-note vector's cosine with vector)`` (the lowest of ``head``'s scores for a file
    in no node, which has no note vector). Nothing when even the rarest word is in more
    headings than that: the query has no word distinctive enough to find notes by.
    ``evidence`` gets every note found and that BM25 (what :mod:`.relevance` scores by:
    it depends on the query and the note only, not on the other candidates). ``owners``:
    :meth:`~arcology_oracle.store.Store.heading_owners` of (at least) ``head``, read here
    when not given. A heading of ``exclude_headings`` is no evidence for its note (see
    ``section`` in :func:`similar`).

    Why: the vectors alone chose the candidates, and an embedding model that reads the
    notes poorly (an English-only one on Japanese notes) left out exactly the notes that
    share the query's words. Measured with MiniLM (BENCHMARKS.md, Quality on real notes,
    fourth round), link prediction recall@10 / MRR by note and by section: Japanese
    notes 0.269 / 0.335 -> 0.291 / 0.385 and 0.249 / 0.201 -> 0.317 / 0.237; English
    notes and the Info manuals up or level on seven of eight (Info by note recall@10
    0.586 -> 0.583).

    Why the rarest words: they are what the re-ranking is for (the same command, person
    or term of art in two notes), BM25 weighs them most anyway, and FTS5 scores every
    heading holding any word asked for: a note's 64 most frequent took 69 ms at 20k
    headings, these ~0.3 ms. Why the index-wide BM25 is half of the word evidence rather than the
    whole-note BM25 alone: among candidates that the words themselves chose, every one
    shares words, and the short queries of sections (a heading "Notes" and its note's
    title) then favoured notes sharing common words (kha-dinh sections recall@10 0.473 ->
    0.429); the index-wide BM25 knows which words are rare across all notes.
    """
    counts = store.word_counts(words, at_most=KEYWORD_HEADINGS + 1)  # more: never chosen
    rare: list[str] = []
    held = 0
    for word in sorted((w for w in words if counts[w]), key=counts.__getitem__):  # stable: ties by frequency
        if held + counts[word] > KEYWORD_HEADINGS:
            break
        rare.append(word)
        held += counts[word]
    found = store.exact_word_hits(" OR ".join(quoted(rare)), KEYWORD_HEADINGS) if rare else []  # no answers
    if not found:
        return {}, []
    if owners is None:
        owners = store.heading_owners([h for h, _ in head])
    best: dict[str, tuple[int, float]] = {}  # note -> (its best heading, that heading's BM25)
    for heading_id, score, node_id, path in found:  # best first
        if heading_id in exclude_headings:
            continue
        key = note_key(node_id, path)
        if key not in exclude_nodes and key not in best:
            best[key] = (heading_id, score)
    evidence.update((key, score) for key, (_, score) in best.items())
    head_keys = [note_key(*owners[h]) if h in owners else None for h, _ in head]
    in_head = set(head_keys)
    new = [(key, h) for key, (h, _) in best.items() if key not in in_head][: keyword_notes(words, note_query)]
    note_vectors = store.node_vectors([key for key, _ in new if not key.startswith("file:")])
    lowest = min(score for _, score in head)
    joining = [
        (heading_id, float(np.dot(vector, note_vectors[key])) if key in note_vectors else lowest)
        for key, heading_id in new
    ]
    index_bm25 = {h: best[key][1] for (h, _), key in zip(head, head_keys) if key in best}
    index_bm25.update((heading_id, best[key][1]) for key, heading_id in new)
    return index_bm25, joining


def keyword_notes(words: Sequence[str], note_query: bool = False) -> int:
    """How many notes the rarest of ``words`` may add to the vectors' candidates: a base of
    ``KEYWORD_NOTES``, or half of ``RERANK_NOTES`` for a whole note (``note_query``),
    rising with the share of ``words`` that are CJK bigrams to ``RERANK_NOTES`` (as many
    as the vectors propose) when all of them are.

    Why more for a whole note: a note asks for every note it should link (several), in
    the words of all its sections, a section for the one or two its few lines link. With
    the words of a whole note behind it, the fused re-ranking tells the notes those words
    bring in apart from noise; with a section's, the extra ones crowded out the right
    note. Measured with MiniLM (BENCHMARKS.md, Retrieval across granularities, third
    round), ``?node=`` recall@10 / MRR with 15 rather than 5: English notes 0.496 / 0.490
    -> 0.499 / 0.490, the Info manuals 0.630 / 0.583 -> 0.643 / 0.587, Japanese notes
    0.539 / 0.523 -> 0.543 / 0.524 (10 and 20 gave about the same; for sections, 10
    cost English notes 0.015 of recall@10).

    Why more for CJK: the bigrams find the notes sharing a Japanese or Chinese text's words whatever
    the embedding model, while the vectors of a model trained on English text (the
    default ones) read it poorly: heading vectors found 0.288 of a Japanese collection's
    links against BM25's 0.465 (BENCHMARKS.md, "Retrieval across granularities"), and
    of the relevant notes BM25 put in its first ten, 87 of 312 were not among the 35
    candidates. The more of the query is CJK, the more of the candidates should come
    from its words; the fused re-ranking still decides their order. Text without CJK
    (no bigrams) keeps ``KEYWORD_NOTES``: with English short sections, more keyword
    candidates cost recall (kha-dinh sections 0.477 -> 0.462 with 10).
    """
    base = max(KEYWORD_NOTES, RERANK_NOTES // 2) if note_query else KEYWORD_NOTES
    return base + round(cjk_share(words) * max(0, RERANK_NOTES - base))


def vector_weight(words: Sequence[str], note_query: bool = False) -> float:
    """What the vector z-score weighs in :func:`_rerank_by_words` (the words weigh 1):
    1 for a whole note (``note_query``) and for text without CJK, falling with the share
    of ``words`` that are CJK bigrams to ½ for a section or a text all in CJK.

    Why: the default embedding models are trained on English and read Japanese or
    Chinese poorly, and a section's or a text's vector is one embedding of its first few
    hundred word pieces, a whole note's the mean of its headings' (their noise partly
    cancels). Measured with MiniLM on Japanese notes (BENCHMARKS.md, Retrieval across
    granularities, third round), recall@10 / MRR: by section 0.484 / 0.322 -> 0.527 /
    0.338, by note text 0.372 / 0.354 -> 0.433 / 0.410; for whole notes too it cost 0.543 /
    0.524 -> 0.532 / 0.510 by node. Half rather than none: a model that does read CJK
    keeps a say in the order.
    """
    return 1.0 if note_query else 1.0 - cjk_share(words) / 2


def cjk_share(words: Sequence[str]) -> float:
    """The share of ``words`` (:func:`frequent_words`) that are CJK bigrams, 0 for none."""
    return sum(1 for w in words if cjk.has_cjk(w)) / len(words) if words else 0.0


def frequent_words(text: str, n: int) -> list[str]:
    """The ``n`` most frequent words of ``text``, lower-case (stopwords and words under
    three letters aside) and CJK bigrams (see :mod:`cjk`), most frequent first, ties in
    order of appearance (:func:`.held_words.words_of`)."""
    return [w for w, _ in words_of(text).most_common(n)]


def frequent_words_query(text: str, n: int) -> str | None:
    """An FTS5 OR query of :func:`frequent_words`, or None if there are none.

    A note's most repeated words are what it is about, and the query's cost grows with
    its words: on the Info manuals the 64 most frequent ranked as well as every word
    (a note has ~100-1,000 distinct ones), the 32 most frequent or the first 32 worse.
    """
    words = frequent_words(text, n)
    return " OR ".join(quoted(words)) if words else None
