"""Finding headings: keyword (FTS5 BM25), vector (sqlite-vec KNN), similar notes, and
the pieces :mod:`.search_ranking` (``/search``) builds on.

Everything here is synchronous and reads one :class:`~arcology_oracle.store.Store`; query
vectors are computed by the caller (the embedder is async and may be down). Results are
:class:`Result` records; scores are "higher is better" within one call (cosine
similarity for vector, negated BM25 for keyword, fused z-scores shown in 0..1 for similar
whole notes) and not comparable across modes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..notes import cjk
from ..notes.conversations import is_oracle_answer
from ..store import Store
from ..store.search import bm25_scores
from . import fusion

RRF_K = 60
# How many of the best candidate notes /similar re-ranks by shared words (k*3 at k=10),
# and how many of the query note's most frequent words it looks for.
RERANK_NOTES = 30
MAX_QUERY_WORDS = 64
# How many notes the query's rarest words may add to those candidates, and how many
# headings those words may hold in all, every one of which the keyword query scores: the
# bound on its cost (see _keyword_candidates).
KEYWORD_NOTES = 5
KEYWORD_HEADINGS = 100
# The most of each candidate note's text the re-ranking reads (its first ~5,000 words): a
# year of journal in one file must not make every /similar slow.
RERANK_NOTE_CHARS = 32_000
WORD = re.compile(r"\w+", re.UNICODE)
_SPACE = re.compile(r"\s+")
STOPWORDS = frozenset(
    "a an and are as at be but by for from has have i if in into is it its me my of on or so "
    "that the their them then there these they this to was we were what when where which who "
    "why will with you your about how do does did not no can could would should".split()
)


@dataclass(frozen=True, slots=True)
class Result:
    """One heading found; see the HTTP API in README.org for each field's meaning."""

    node_id: str | None
    heading_id: str | None
    title: str
    heading: str
    olp: list[str]
    file: str
    line: int
    score: float
    snippet: str
    date: str | None = None
    # "oracle" for the oracle's own earlier answers (never evidence for /ask), else None.
    role: str | None = None

    def as_dict(self) -> dict:
        # Not dataclasses.asdict: its deep copies were most of /similar's event-loop time.
        return {name: list(self.olp) if name == "olp" else getattr(self, name) for name in self.__slots__}


def quoted(terms: Iterable[str]) -> list[str]:
    """Each term as an FTS5 string (double quotes doubled), so no word is read as syntax."""
    return ['"' + t.replace('"', '""') + '"' for t in terms]


def fts_query(text: str, *, any_term: bool = False, max_terms: int = 32) -> str | None:
    """An FTS5 MATCH expression for free text, every term quoted, or None if no terms.

    Quoting keeps words like ``NOT`` and ``org-mode`` from being read as FTS syntax.
    ``any_term`` joins terms with OR (similarity, long texts) instead of AND (search).
    The CJK runs of ``text`` become one group of their bigrams (see :mod:`cjk`) on the
    bigram columns, any of which may match (BM25 ranks the headings sharing most of
    them first): a query's bigrams include ones that span two words, which no note need
    hold, so they can never all be required.
    """
    terms: list[str] = []
    for word in WORD.findall(cjk.strip_cjk(text).lower()):
        if word in STOPWORDS or (any_term and len(word) < 3) or word in terms:
            continue
        terms.append(word)
        if len(terms) >= max_terms:
            break
    parts = quoted(terms)
    bigrams = cjk.query_bigrams(text)
    if bigrams:
        parts.append("{cjk_head cjk_text} : (" + " OR ".join(quoted(bigrams)) + ")")
    if not parts:
        return None
    return (" OR " if any_term else " AND ").join(parts)


def one_line(text: str, limit: int = 160) -> str:
    """``text`` collapsed to one line of at most ``limit`` characters."""
    line = _SPACE.sub(" ", text).strip()
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def cosine_from_l2(distance: float) -> float:
    """Cosine similarity of two unit vectors from their L2 distance."""
    return 1.0 - (distance * distance) / 2.0


def keyword_hits(store: Store, text: str, k: int, *, any_term: bool = False) -> list[tuple[int, float, str]]:
    """``(heading id, score, snippet)`` by BM25, best first. An AND query that finds
    nothing is retried as OR, so a search never comes back empty for a near miss."""
    return _keyword(store, text, k, any_term=any_term, snippets=True)[1]


def _keyword(store: Store, text: str, k: int, *, any_term: bool, snippets: bool) -> tuple[str | None, list]:
    """:func:`keyword_hits` and the FTS5 expression that found them (snippets None
    unless ``snippets``: :func:`snippets_of` reads them for the results only)."""
    match = fts_query(text, any_term=any_term)
    if match is None:
        return None, []
    hits = store.fts_search(match, k, snippets=snippets)
    if not hits and not any_term:
        match = fts_query(text, any_term=True)
        hits = store.fts_search(match, k, snippets=snippets) if match else []
    return match, [(heading_id, -rank, snippet) for heading_id, rank, snippet in hits]


def snippets_of(store: Store, match: str | None, hits: Sequence[tuple]) -> Callable[[list[int]], dict[int, str]]:
    """For :func:`to_results`: the snippets of those of ``hits`` that become results."""
    found = {h[0] for h in hits}
    return lambda ids: store.fts_snippets(match, [i for i in ids if i in found]) if match else {}


def vector_hits(store: Store, vector: Sequence[float], k: int) -> list[tuple[int, float]]:
    """``(heading id, cosine)`` of the best chunk of each heading, best first."""
    return [(heading_id, cosine_from_l2(distance)) for heading_id, distance in store.knn_headings(vector, k)]


def reciprocal_rank_fusion(*rankings: Sequence[int]) -> list[tuple[int, float]]:
    """Fuse rankings of heading ids: score = sum of 1 / (60 + rank)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, heading_id in enumerate(ranking, start=1):
            scores[heading_id] = scores.get(heading_id, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda item: item[1], reverse=True)


def to_results(
    store: Store,
    scored: Iterable[tuple[int, float]],
    k: int,
    *,
    snippets: dict[int, str] | Callable[[list[int]], dict[int, str]] | None = None,
    per_node: bool = False,
    exclude_nodes: frozenset[str] = frozenset(),
    exclude_headings: frozenset[int] = frozenset(),
) -> list[Result]:
    """Turn scored heading ids into at most ``k`` results, skipping excluded ones and,
    with ``per_node``, every heading of a node after that node's best. ``snippets`` maps
    heading ids to snippets, or is called with the results' heading ids to read them."""
    scored = list(scored)
    rows: dict[int, dict] = {}
    read = 0
    chosen: list[tuple[dict, float]] = []
    seen_nodes: set[str] = set()
    for i, (heading_id, score) in enumerate(scored):
        if i >= read:  # rows in slices: most requests need only the first few
            read = i + max(2 * k, 16)
            rows.update(store.headings([h for h, _ in scored[i:read]]))
        row = rows.get(heading_id)
        if row is None or heading_id in exclude_headings:
            continue
        node = row["node_id"]
        if node is not None and node in exclude_nodes:
            continue
        node_key = node if node is not None else f"file:{row['file']}"
        if per_node and node_key in seen_nodes:
            continue
        seen_nodes.add(node_key)
        chosen.append((row, score))
        if len(chosen) >= k:
            break
    found = snippets([row["id"] for row, _ in chosen]) if callable(snippets) else (snippets or {})
    return [
        Result(
            node_id=row["node_id"],
            heading_id=row["own_id"],
            title=row["node_title"],
            heading=row["title"],
            olp=row["olp"],
            file=row["file"],
            line=row["start_line"],
            score=round(float(score), 6),
            snippet=one_line(found.get(row["id"]) or row["text"] or row["title"]),
            date=row.get("date"),
            role="oracle" if is_oracle_answer(row["properties"]) else None,
        )
        for row, score in chosen
    ]


def mean_vector(vectors: Sequence[Sequence[float]]) -> list[float] | None:
    """The normalised mean of ``vectors``, or None when there are none."""
    if not vectors:
        return None
    # numpy, not a Python loop: /similar?node takes ~30 note means, 5 ms each in Python.
    total = np.asarray(vectors, dtype=np.float64).sum(axis=0)
    norm = float(np.sqrt(total @ total))
    return (total / norm).tolist() if norm else None


def stored_vector(store: Store, heading_ids: Sequence[int]) -> list[float] | None:
    """The mean stored vector of the chunks of ``heading_ids`` (None if none is embedded)."""
    hashes = store.chunk_hashes(heading_ids)
    return mean_vector(list(store.vectors_for_hashes(hashes).values()))


def similar(
    store: Store,
    *,
    k: int,
    vector: Sequence[float] | None,
    text: str,
    exclude_nodes: frozenset[str] = frozenset(),
    exclude_headings: frozenset[int] = frozenset(),
    whole_notes: bool = False,
) -> tuple[str, list[Result]]:
    """Headings similar to a query, one per node: by ``vector`` when given (and vectors
    exist), else by keywords of ``text``. Returns ``(mode, results)``, mode being
    ``"vector"`` or ``"keyword"``.

    With ``whole_notes`` (the query is a whole note), a candidate note's score is the mean
    of its best heading's similarity and its whole-note similarity, so a note that is
    about the same thing throughout beats one that mentions it in passing; then notes
    sharing ``text``'s words join the candidates, which are re-ranked by that score fused
    with how many of ``text``'s distinctive words each one shares (see
    :func:`_rerank_by_words`).
    """
    pool = max(k * 10, 100)
    if vector is not None and store.has_vector_table():
        hits = vector_hits(store, vector, pool)
        if hits and whole_notes:
            hits = _rescore_by_note(store, hits, vector, limit=k * 3, exclude_nodes=exclude_nodes)
            hits = _rerank_by_words(store, hits, text, vector, exclude_nodes)
        if hits:
            return "vector", to_results(
                store, hits, k, per_node=True, exclude_nodes=exclude_nodes, exclude_headings=exclude_headings
            )
    match, keyword = _keyword(store, text, pool, any_term=True, snippets=False)
    return "keyword", to_results(
        store,
        [(h, s) for h, s, _ in keyword],
        k,
        snippets=snippets_of(store, match, keyword),
        per_node=True,
        exclude_nodes=exclude_nodes,
        exclude_headings=exclude_headings,
    )


def _rescore_by_note(
    store: Store,
    hits: list[tuple[int, float]],
    query: Sequence[float],
    *,
    limit: int,
    exclude_nodes: frozenset[str],
) -> list[tuple[int, float]]:
    """Best heading per note, rescored with the note's mean vector (see :func:`similar`)."""
    owners = store.heading_owners([h for h, _ in hits])
    best: dict[str, tuple[int, float]] = {}
    for heading_id, score in hits:
        owner = owners.get(heading_id)
        if owner is None or owner[0] in exclude_nodes:
            continue
        key = owner[0] or f"file:{owner[1]}"
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
) -> list[tuple[int, float]]:
    """Note-level candidates (one heading per note, best first) with the first
    ``RERANK_NOTES``, joined by up to ``KEYWORD_NOTES`` found by the rarest words of
    ``text`` (:func:`_keyword_candidates`), re-ranked by their vector score fused with
    two lexical ones: Okapi BM25 of each candidate's whole text (every heading of the
    note) against the words of ``text``, and its best heading's BM25 in the whole index
    (0 for a note none of the rarest words finds). The fusion is
    :func:`fusion.standardised`'s, as in /search: the vector score's z-score among the
    candidates plus the mean of the two lexical z-scores (a note sharing no word scores 0
    by BM25), so a ranking whose top stands far above the rest outweighs one that barely
    separates them, and words as a whole weigh what the vectors weigh. The rest keep
    their order, below. Scores are 1.0 for the first note and fall towards 0 with the
    fused score's distance below it.

    Why words: a small embedding model sums a note up as its gist, and notes on one subject
    all look alike to it. What makes a person link two notes is often narrower: the same
    command, option, person, project or term of art appears in both. BM25 over whole notes
    catches exactly that. Word statistics (document frequency, mean length) are those of
    the candidates, not of the whole index: words every candidate shares (the subject that
    made them candidates) say nothing about which of them to prefer, and the cost stays
    bounded by ``RERANK_NOTES + KEYWORD_NOTES`` notes' text whatever the size of the index
    or ``k``. The index-wide BM25 adds what those local statistics cannot see: which of
    the shared words are rare among all the notes (see :func:`_keyword_candidates`).

    Why z-scores rather than reciprocal ranks (what this did before): ranks give the two
    rankings the same say whatever they hold, and near-ties in the vector scores of notes
    on one subject became whole ranks apart. Measured with MiniLM on three corpora, by
    node and by section (BENCHMARKS.md, Quality on real notes, second round): MRR up on
    five of the six, down 0.004 on the sixth; recall@10 up or within 0.012.

    The BM25 is SQLite's own (:func:`~arcology_oracle.store.search.bm25_scores`: FTS5,
    the index's tokenizer, so "options" meets "option", on a scratch in-memory table;
    Python's regex alone took longer to tokenize the candidates).
    """
    head = hits[:RERANK_NOTES]
    words = frequent_words(text, MAX_QUERY_WORDS)
    if len(head) < 2 or not words:
        return hits
    match = " OR ".join(quoted(words))
    index_bm25, joining = _keyword_candidates(store, words, head, vector, exclude_nodes)
    head += joining
    texts = store.note_texts([h for h, _ in head], RERANK_NOTE_CHARS)
    note_bm25 = bm25_scores([_with_bigrams(texts.get(heading_id, "")) for heading_id, _ in head], match)
    vector_z = fusion.standardised(list(enumerate(s for _, s in head)))
    note_z = fusion.standardised([(i, note_bm25.get(i, 0.0)) for i in range(len(head))])
    index_z = fusion.standardised([(i, index_bm25.get(h, 0.0)) for i, (h, _) in enumerate(head)])
    # Stable: equal sums keep the vector order.
    fused = sorted(((heading_id, vector_z[i] + (note_z[i] + index_z[i]) / 2) for i, (heading_id, _) in enumerate(head)),
                   key=lambda item: -item[1])  # fmt: skip
    # The rest below every re-ranked note, in their order. (A note the words brought in
    # may be among them by another heading: to_results keeps each note's first.)
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
) -> tuple[dict[int, float], list[tuple[int, float]]]:
    """The index-wide word evidence for :func:`_rerank_by_words`: ``({heading id: BM25
    of its note's best heading}, joining)``, by the rarest of the query's ``words`` (its
    :func:`frequent_words`), as many as together are held by at most
    ``KEYWORD_HEADINGS`` headings, all of which are scored. ``joining`` is up to
    ``KEYWORD_NOTES`` notes not among ``head`` nor ``exclude_nodes``, best by that BM25
    first, each as ``(its best heading, its whole-note vector's cosine with vector)``
    (the lowest of ``head``'s scores for a file in no node, which has no note vector).
    Nothing when even the rarest word is in more headings than that: the query has no
    word distinctive enough to find notes by.

    Why: the vectors alone chose the candidates, and an embedding model that reads the
    notes poorly (an English-only one on Japanese notes) left out exactly the notes that
    share the query's words. Measured with MiniLM (BENCHMARKS.md, Quality on real notes,
    fourth round), link prediction recall@10 / MRR by note and by section: Japanese
    notes 0.269 / 0.335 -> 0.291 / 0.385 and 0.249 / 0.201 -> 0.317 / 0.237; English
    notes and the Info manuals up or level on seven of eight (Info by note recall@10
    0.586 -> 0.583).

    Why the rarest words: they are what the re-ranking is for (the same command, person
    or term of art in two notes), BM25 weighs them most anyway, and FTS5 scores every
    heading holding any word asked for (a row-length lookup each): the 64 most frequent
    words of a note took 69 ms at 20k headings; within this bound, /similar costs ~0.3 ms
    more. Why the index-wide BM25 is half of the word evidence rather than the
    whole-note BM25 alone: among candidates that the words themselves chose, every one
    shares words, and the short queries of sections (a heading "Notes" and its note's
    title) then favoured notes sharing common words (kha-dinh sections recall@10 0.473 ->
    0.429); the index-wide BM25 knows which words are rare across all notes.
    """
    counts = store.word_counts(words)
    rare: list[str] = []
    held = 0
    for word in sorted((w for w in words if counts[w]), key=counts.__getitem__):  # stable: ties by frequency
        if held + counts[word] > KEYWORD_HEADINGS:
            break
        rare.append(word)
        held += counts[word]
    found = store.exact_word_hits(rare, KEYWORD_HEADINGS)
    if not found:
        return {}, []
    owners = store.heading_owners([h for h, _ in head])

    def note_key(node_id: str | None, path: str) -> str:
        return node_id or f"file:{path}"

    best: dict[str, tuple[int, float]] = {}  # note -> (its best heading, that heading's BM25)
    for heading_id, score, node_id, path in found:  # best first
        key = note_key(node_id, path)
        if key not in exclude_nodes and key not in best:
            best[key] = (heading_id, score)
    head_keys = [note_key(*owners[h]) if h in owners else None for h, _ in head]
    in_head = set(head_keys)
    new = [(key, heading_id) for key, (heading_id, _) in best.items() if key not in in_head][:KEYWORD_NOTES]
    note_vectors = store.node_vectors([key for key, _ in new if not key.startswith("file:")])
    lowest = min(score for _, score in head)
    joining = [
        (heading_id, float(np.dot(vector, note_vectors[key])) if key in note_vectors else lowest)
        for key, heading_id in new
    ]
    index_bm25 = {h: best[key][1] for (h, _), key in zip(head, head_keys) if key in best}
    index_bm25.update((heading_id, best[key][1]) for key, heading_id in new)
    return index_bm25, joining


def frequent_words(text: str, n: int) -> list[str]:
    """The ``n`` most frequent words of ``text``, lower-case (stopwords and words under
    three letters aside) and CJK bigrams (see :mod:`cjk`), most frequent first, ties in
    order of appearance."""
    words = Counter(w for w in WORD.findall(cjk.strip_cjk(text).lower()) if len(w) > 2 and w not in STOPWORDS)
    words.update(cjk.content_bigrams(text))
    return [w for w, _ in words.most_common(n)]


def frequent_words_query(text: str, n: int) -> str | None:
    """An FTS5 OR query of :func:`frequent_words`, or None if there are none.

    A note's most repeated words are what it is about, and the query's cost grows with
    its words: on the Info manuals the 64 most frequent ranked as well as every word
    (a note has ~100-1,000 distinct ones), the 32 most frequent or the first 32 worse.
    """
    words = frequent_words(text, n)
    return " OR ".join(quoted(words)) if words else None


def _with_bigrams(text: str) -> str:
    """``text`` followed by the bigrams of its CJK runs, so that Japanese and Chinese
    words count in the re-ranking (see :mod:`cjk`)."""
    bigrams = cjk.bigrams(text)
    return text + "\n" + bigrams if bigrams else text
