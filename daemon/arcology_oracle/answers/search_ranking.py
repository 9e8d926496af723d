"""How ``/search`` ranks headings: its keyword half (:func:`keyword_ranking`) and the
fusion with the vector half (:mod:`.fusion`).

Synchronous over one :class:`~arcology_oracle.store.Store`, as :mod:`.retrieval` (whose
keyword pieces, vector hits and result rows it uses); the query vector is computed by the
caller. Measured on known-item questions over real notes in English and Japanese and the
GNU Info manuals (BENCHMARKS.md, Quality on real notes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..notes import cjk
from ..store import Store
from ..store.search import bm25_scores
from . import fusion, retrieval

# How many of the keyword hits a note's whole text may move, and how far (see
# :func:`by_whole_notes`); the most of a note's text read (as /similar's re-ranking).
NOTE_HITS = 10
NOTE_WEIGHT = 0.25
NOTE_CHARS = 32_000


def search_terms(text: str, max_words: int = 32) -> tuple[list[str], list[str], list[str]]:
    """What ``/search`` looks for in ``text``: ``(words, bigrams, little)``, each distinct
    and in order. ``words``: the words (lower-cased, at most ``max_words``) but stop
    words; ``bigrams``: those of its CJK runs but hiragana-only ones; ``little``: the stop
    words and hiragana-only bigrams (particles, verb endings). A query made of nothing
    but little words has them as its ``words`` and ``bigrams``.

    Unlike :func:`.retrieval.fts_query`, ``/search`` scores the little words too: BM25 weighs a word
    by how rare it is, so "how" or "の" costs little where every note has it and decides
    where few do (headings titled "How" or "What"; a phrase the user remembers). Measured
    on known-item questions (BENCHMARKS.md, Quality on real notes).
    """
    found: dict[str, None] = {}
    for word in retrieval.WORD.findall(cjk.strip_cjk(text).lower()):
        found.setdefault(word, None)
    every = list(found)[:max_words]
    grams = cjk.query_bigrams(text, content_only=False)
    words = [w for w in every if w not in retrieval.STOPWORDS]
    bigrams = cjk.query_bigrams(text) if any(not cjk.only_hiragana(g) for g in grams) else []
    if not words and not bigrams:
        return every, grams, []
    return words, bigrams, [w for w in every if w in retrieval.STOPWORDS] + [g for g in grams if cjk.only_hiragana(g)]


def any_of(words: Sequence[str], bigrams: Sequence[str]) -> str:
    """An FTS5 expression matching any of ``words`` or, in the bigram columns, of
    ``bigrams`` (at least one of the two non-empty)."""
    parts = retrieval.quoted(words) + (["{cjk_head cjk_text} : (" + " OR ".join(retrieval.quoted_bigrams(bigrams)) + ")"] if bigrams else [])
    return "(" + " OR ".join(parts) + ")"


def keyword_ranking(store: Store, text: str, k: int) -> tuple[list[tuple[int, float]], str | None]:
    """``/search``'s keyword half: ``([(heading id, score)], expression)``, best first,
    at most ``k``, and an FTS5 expression every hit matches (for snippets).

    Headings holding every word of the query come first (the AND query), then those
    holding some, each by :meth:`~arcology_oracle.store.Store.fts_scores` (stemmed plus
    exact-form BM25) over all of :func:`search_terms`, little words included. "Every
    word" needs words: a query with CJK text has none (its bigrams include ones spanning
    two words, which no note need hold), so it is ranked by the second query alone;
    otherwise a Japanese query with one English word put every heading holding that
    word and any one bigram above the heading holding all the Japanese but that word.

    The second query is run as two, ``key AND little`` and ``key NOT little``: the
    same headings as ``key`` (those holding at least one word that is not little) with
    the very scores of one OR over every term, but BM25 is computed only for them, not
    for every heading holding "the" (4-8x less work on a question at 20k headings).

    Then each note's best hit among the first is moved by its whole note's words
    (:func:`by_whole_notes`); every hit keeps its BM25 score.
    """
    words, bigrams, little = search_terms(text)
    if not words and not bigrams:
        return [], None
    depth = 4 * k  # each index's best; their sum is then cut to k
    hits: list[tuple[int, float]] = []
    if words and not bigrams:
        hits = store.fts_scores([" AND ".join(retrieval.quoted([*words, *little]))], depth)[:k]  # little: stop words here
    every = len(hits)
    key = any_of(words, bigrams)
    if len(hits) < k:
        others = any_of([w for w in little if not cjk.has_cjk(w)], [g for g in little if cjk.has_cjk(g)]) if little else None
        matches = [f"{key} AND {others}", f"{key} NOT {others}"] if others else [key]
        seen = {h for h, _ in hits}
        hits += [hit for hit in store.fts_scores(matches, depth) if hit[0] not in seen][: k - len(hits)]
    return by_whole_notes(store, [*words, *bigrams], hits, every), key


def by_whole_notes(store: Store, terms: Sequence[str], hits: list[tuple[int, float]], every: int) -> list[tuple[int, float]]:
    """``hits`` (``(heading id, BM25)``, best first, the first ``every`` of them holding
    every word of the query) with the first :data:`NOTE_HITS` re-ordered: each by the
    z-score of its BM25 among them plus :data:`NOTE_WEIGHT` times the z-score of its
    note's (its node's, or its file's outside any node) whole text by Okapi BM25 over
    ``terms`` among those notes (the first :data:`NOTE_CHARS` characters of each, as
    /similar's re-ranking reads them). Hits holding every word stay above the others;
    equal keys keep their order; scores are not changed.

    Why: a heading is looked up by words the person remembers, and they remember the
    note as much as the heading: its title, the words spread over its sections. Where
    one note's heading matches a little better and another note holds the question's
    words throughout, the second is more often the one meant (BM25 over whole files beat
    the headings on Japanese notes' known files: 0.971 against 0.912). The note's words
    weigh a quarter of the heading's own, so they decide between near ties of the
    heading's BM25, not against a clear match. Every heading of a note moves by the same
    amount, so a note's headings keep their keyword order among themselves and the files
    come in the order of their best headings' keys. (Moving only each note's best
    heading, as before, put a note whose text scored below the others' under its own
    weaker heading in 9 of 49 English and 4 of 17 Japanese known-item questions, and
    left a note's other headings without the evidence its best had.)

    Measured on known items of three corpora with all-MiniLM-L6-v2 (BENCHMARKS.md, issue
    29: the note's text, fourteenth round of "The daemon's own overhead"; every heading
    of a note, fourteenth round of "Retrieval across granularities"): heading / file MRR
    English notes 0.896 / 0.943 -> 0.906 / 0.953 -> 0.909 / 0.953, Japanese 0.806 /
    0.912 -> 0.837 / 0.971 -> 0.837 / 0.971, the Info manuals 0.941 / 0.963 -> 0.941 /
    0.985 -> 0.944 / 0.985. Ten hits cost about half a millisecond a query at 20k headings in
    process (the notes' text read and tokenized), about 1 ms of the daemon's CPU per
    /search.
    """
    head = hits[:NOTE_HITS]
    if len(head) < 2 or not terms:
        return hits
    owners = store.heading_owners([h for h, _ in head])
    note_of = {h: retrieval.note_key(*owners[h]) for h, _ in head if h in owners}
    best: dict[str, int] = {}
    for h, _ in head:
        if h in note_of:
            best.setdefault(note_of[h], h)
    if len(best) < 2:
        return hits
    texts = store.note_texts(list(best.values()), NOTE_CHARS, cjk_bigrams=True)
    notes = list(best)
    note_bm25 = bm25_scores([texts.get(best[n], "") for n in notes], " OR ".join(retrieval.quoted(terms)))
    note_z = fusion.standardised([(i, note_bm25.get(i, 0.0)) for i in range(len(notes))])
    by_note = {n: NOTE_WEIGHT * note_z[i] for i, n in enumerate(notes)}
    own_z = fusion.standardised(head)
    keys = [(i < every, own_z[h] + by_note.get(note_of.get(h), 0.0)) for i, (h, _) in enumerate(head)]
    order = sorted(range(len(head)), key=lambda i: keys[i], reverse=True)  # stable
    return [head[i] for i in order] + hits[NOTE_HITS:]


def pool_size(k: int) -> int:
    """How many hits each half of ``/search`` finds for ``k`` results."""
    return max(k * 5, 50)


@dataclass(frozen=True, slots=True)
class KeywordHalf:
    """What :func:`keyword_half` found: the hits (``(heading id, score)``, best first),
    an FTS5 expression every hit matches (for snippets) and the index's write generation
    (:meth:`~arcology_oracle.store.Store.write_generation`) they were found in."""

    hits: list[tuple[int, float]]
    match: str | None
    generation: str | None


def keyword_half(store: Store, query: str, k: int) -> KeywordHalf:
    """:func:`keyword_ranking` of ``query`` for :func:`pool_size` of ``k``, with the
    write generation it was found in (read first: the hits are never newer)."""
    generation = store.write_generation()
    hits, match = keyword_ranking(store, query, pool_size(k))
    return KeywordHalf(hits, match, generation)


def search(
    store: Store,
    query: str,
    k: int,
    query_vector: Sequence[float] | None,
    *,
    min_similarity: float = 0.0,
) -> tuple[str, list[retrieval.Result]]:
    """Hybrid search (vector KNN and BM25 fused by :func:`fusion.fuse`), or keyword-only
    when no vector is available. Returns ``(mode, results)`` with at most one result per
    heading: :func:`fused` of :func:`keyword_half`, on one store."""
    return fused(store, keyword_half(store, query, k), query, k, query_vector, min_similarity=min_similarity)


def fused(
    store: Store,
    half: KeywordHalf,
    query: str,
    k: int,
    query_vector: Sequence[float] | None,
    *,
    min_similarity: float = 0.0,
) -> tuple[str, list[retrieval.Result]]:
    """:func:`search`'s second half: the keyword ``half`` of ``query`` (found on this
    store or another reader's) fused with the vector hits of ``query_vector``, as
    ``(mode, results)``. When the index was written since ``half`` was found, the
    keyword half is found again here: a file indexed again gets its headings' ids anew
    (never ids given before: store/writes.py), so an old hit of it names no heading by
    then and would be left out.

    Vector neighbours below ``min_similarity`` (cosine) are dropped before fusion, so a
    query about something the notes do not hold finds nothing rather than the nearest
    unrelated headings.
    """
    if store.write_generation() != half.generation:
        half = keyword_half(store, query, k)
    snippets = retrieval.snippets_of(store, half.match, half.hits)
    if query_vector is not None and store.has_vector_table():
        vector = [(h, s) for h, s in retrieval.vector_hits(store, query_vector, pool_size(k)) if s >= min_similarity]
        if vector or not half.hits:
            return "hybrid", retrieval.to_results(store, fusion.fuse(half.hits, vector), k, snippets=snippets)
    return "keyword", retrieval.to_results(store, half.hits, k, snippets=snippets)
