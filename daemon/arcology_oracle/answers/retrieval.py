"""Finding headings: keyword (FTS5 BM25) and vector (sqlite-vec KNN), and the pieces
:mod:`.search_ranking` (``/search``) and :mod:`.similarity` (``/similar``) build on.

Everything here is synchronous and reads one :class:`~arcology_oracle.store.Store`; query
vectors are computed by the caller (the embedder is async and may be down). Results are
:class:`Result` records; scores are "higher is better" within one call (cosine
similarity for vector, negated BM25 for keyword, fused z-scores shown in 0..1 for similar
whole notes) and not comparable across modes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields

import numpy as np

from ..notes import cjk
from ..store import Store
from .roles import roles_of
from .snippets import collapsed, one_line, snippet_of  # noqa: F401 (collapsed, one_line: this module's once)

RRF_K = 60
WORD = re.compile(r"\w+", re.UNICODE)
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
    # "oracle" for the oracle's own answers, "conversation" for the other turns of a
    # conversation, None for a note (see .roles).
    role: str | None = None
    # /similar and /suggest-links: the query's node links to this one; this one links to
    # the query's node; it is in the query's file; its score is below the min_score
    # cut-off (returned with all=true).
    linked: bool = False
    links_here: bool = False
    same_file: bool = False
    below_cutoff: bool = False
    # The list's relevance, which never rises down a ranked list (/search, /similar,
    # /suggest-links; :func:`.relevance.ordered`); None outside them (journal, sources).
    relevance: float | None = None

    def as_dict(self) -> dict:
        """Every field, in declaration order (the JSON's key order), ``olp`` as a new list.

        Spelled out, not ``dataclasses.asdict`` (its deep copies were most of /similar's
        event-loop time) nor a loop over the slots (three times slower than this literal:
        it builds every result of every answer). A field added above must be added here:
        ``tests/answers/test_result_dict.py`` compares the keys with the fields."""
        return {
            "node_id": self.node_id, "heading_id": self.heading_id, "title": self.title, "heading": self.heading,
            "olp": list(self.olp), "file": self.file, "line": self.line, "score": self.score, "snippet": self.snippet,
            "date": self.date, "role": self.role, "linked": self.linked, "links_here": self.links_here,
            "same_file": self.same_file, "below_cutoff": self.below_cutoff, "relevance": self.relevance,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class Pending(Result):
    """A :class:`Result` whose ``snippet`` and ``role`` are not made yet (:func:`to_results`
    with ``later``; "" and None until then): ``row``, its heading's row, is what they are
    made of, by :func:`finished`. Ranked, moved and rescored as any result, it must be
    finished before it leaves the answer: :meth:`as_dict` refuses."""

    row: dict | None = None

    def as_dict(self) -> dict:
        raise TypeError("a pending result: retrieval.finished() makes its snippet and role")


def note_key(node_id: str | None, path: str) -> str:
    """What a note is known by when hits are grouped by note: its node ID, or ``file:``
    and the path of a file that is no node."""
    return node_id or f"file:{path}"


def quoted(terms: Iterable[str]) -> list[str]:
    """Each term as an FTS5 string (double quotes doubled), so no word is read as syntax."""
    return ['"' + t.replace('"', '""') + '"' for t in terms]


def quoted_bigrams(terms: Iterable[str]) -> list[str]:
    """:func:`quoted`, but a term of one kanji or katakana is a prefix (``"本" *``): the
    index keeps a run's bigrams, so a word of one character ("猫", "本") is stored alone
    only where nothing is written against it, and a search for it found nothing. As a
    prefix it finds the bigrams it begins ("猫が", "本を": a noun before its particle).
    One that only ends a run ("絵本" at a line's end) is still missed: FTS5 has no suffix
    query. Hiragana stays exact: one kana begins half of a Japanese text's bigrams."""
    terms = list(terms)
    return [q + " *" if len(t) == 1 and cjk.has_cjk(t) and not cjk.only_hiragana(t) else q for t, q in zip(terms, quoted(terms))]


def fts_query(
    text: str, *, any_term: bool = False, max_terms: int = 32, bigram_columns: str = "{cjk_head cjk_text}"
) -> str | None:
    """An FTS5 MATCH expression for free text, every term quoted, or None if no terms.

    Quoting keeps words like ``NOT`` and ``org-mode`` from being read as FTS syntax.
    ``any_term`` joins terms with OR (similarity, long texts) instead of AND (search).
    The CJK runs of ``text`` become one group of their bigrams (see :mod:`cjk`) on the
    bigram columns (``bigram_columns``, an FTS5 column filter: the headings' by default,
    ``cjk_text`` for ``turns_fts``), any of which may match (BM25 ranks the rows sharing
    most of them first): a query's bigrams include ones that span two words, which no
    note need hold, so they can never all be required.
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
        parts.append(bigram_columns + " : (" + " OR ".join((quoted if any_term else quoted_bigrams)(bigrams)) + ")")
    if not parts:
        return None
    return (" OR " if any_term else " AND ").join(parts)


# Chinese function characters that alone are no search: every Chinese note holds them.
_ZH_PARTICLES = frozenset("的了吗呢吧")
NOTHING_TO_SEARCH = "nothing to search for: the query is only stop words or particles"


def only_particles(text: str) -> bool:
    """Whether ``text`` is nothing but Japanese or Chinese particles standing alone
    ("の", "は が", "的"): no word, and each run of CJK text one hiragana or one
    :data:`_ZH_PARTICLES` character. Such a query matches nearly every note in those
    languages, so it finds none. An English stop word alone ("what") is still a search:
    a heading may be titled by it (:func:`.search_ranking.search_terms`)."""
    if WORD.search(cjk.strip_cjk(text)):
        return False
    grams = cjk.query_bigrams(text, content_only=False)
    return bool(grams) and all(len(g) == 1 and (cjk.only_hiragana(g) or g in _ZH_PARTICLES) for g in grams)


def nothing_to_search(text: str) -> bool:
    """Whether ``text`` holds no word to look for: only stop words or particles."""
    return fts_query(text) is None or only_particles(text)


def cosine_from_l2(distance: float) -> float:
    """Cosine similarity of two unit vectors from their L2 distance."""
    return 1.0 - (distance * distance) / 2.0


def keyword_hits(store: Store, text: str, k: int, *, any_term: bool = False) -> list[tuple[int, float, str]]:
    """``(heading id, score, snippet)`` by BM25, best first. An AND query that finds
    nothing is retried as OR, so a search never comes back empty for a near miss."""
    return keyword_match(store, text, k, any_term=any_term, snippets=True)[1]


def keyword_match(store: Store, text: str, k: int, *, any_term: bool, snippets: bool) -> tuple[str | None, list]:
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


def vector_hits(store: Store, vector: Sequence[float], k: int, skip=None) -> list[tuple[int, float]]:
    """``(heading id, cosine)`` of the best chunk of each heading, best first (``skip``:
    vector rows not searched, :meth:`~arcology_oracle.store.Store.knn_headings`)."""
    return [(h, cosine_from_l2(distance)) for h, distance in store.knn_headings(vector, k, skip)]


def reciprocal_rank_fusion(*rankings: Sequence[int]) -> list[tuple[int, float]]:
    """Fuse rankings of heading ids: score = sum of 1 / (60 + rank)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, heading_id in enumerate(ranking, start=1):
            scores[heading_id] = scores.get(heading_id, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda item: item[1], reverse=True)


def is_empty_heading(row: dict) -> bool:
    """A heading of nothing: neither a title nor text of its own (gptel's ``*** ``, the
    prompt prefix it ends a saved chat with, waiting for the next prompt). It is nothing
    to show: never a result (:func:`to_results`, the one door of every list: /search,
    /similar, /suggest-links, the web page's and MCP's, which ask those) nor a note for a
    question (:func:`.context._gate`). Its children are headings of their own, as before.
    Decided when the list is made, not when the file is read: the index keeps the heading
    (its place in the outline, its children's), and no index need be read again."""
    return not row["title"].strip() and not (row["text"] or "").strip()


def to_results(
    store: Store,
    scored: Iterable[tuple[int, float]],
    k: int,
    *,
    snippets: dict[int, str] | Callable[[list[int]], dict[int, str]] | None = None,
    per_node: bool = False,
    exclude_nodes: frozenset[str] = frozenset(),
    exclude_headings: frozenset[int] = frozenset(),
    exclude_oracle: bool = False,
    later: bool = False,
) -> list[Result]:
    """Turn scored heading ids into at most ``k`` results, skipping excluded ones (the
    oracle's own answers too, with ``exclude_oracle``), empty ones (:func:`is_empty_heading`)
    and, with ``per_node``, every
    heading of a node after that node's best. ``snippets`` maps heading ids to snippets
    (FTS5's windows, see :mod:`.snippets`), or is called with the results' heading ids to
    read them. With ``later`` (and no ``snippets``), :class:`Pending` results, whose
    snippets and roles :func:`finished` makes: for a ranking read deeper than it answers
    (/similar reads 30 results for 10), making them for every result read was 7% of it."""
    if later and snippets is not None:
        raise ValueError("snippets are made now or later, not both")
    scored = list(scored)
    if exclude_oracle:
        exclude_headings = exclude_headings | store.oracle_headings(h for h, _ in scored)
    rows: dict[int, dict] = {}
    read = 0
    chosen: list[tuple[dict, float]] = []
    seen_nodes: set[str] = set()
    for i, (heading_id, score) in enumerate(scored):
        if i >= read:  # rows in slices: most requests need only the first few
            read = i + max(2 * k, 16)
            rows.update(store.result_rows([h for h, _ in scored[i:read]]))
        row = rows.get(heading_id)
        if row is None or heading_id in exclude_headings or is_empty_heading(row):
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
    if later:
        return [Pending(**_row_fields(row, score), snippet="", row=row) for row, score in chosen]
    found = snippets([row["id"] for row, _ in chosen]) if callable(snippets) else (snippets or {})
    roles = roles_of(store, [row for row, _ in chosen])
    return [
        Result(
            **_row_fields(row, score),
            snippet=snippet_of(row["text"], found.get(row["id"])) or one_line(row["title"]),
            role=roles[row["id"]],
        )
        for row, score in chosen
    ]


def _row_fields(row: dict, score: float) -> dict:
    """A result's fields that its heading's row and score give (all but snippet and role)."""
    return {
        "node_id": row["node_id"], "heading_id": row["own_id"], "title": row["node_title"], "heading": row["title"],
        "olp": row["olp"], "file": row["file"], "line": row["start_line"], "score": round(float(score), 6),
        "date": row.get("date"),
    }  # fmt: skip


_RESULT_FIELDS = tuple(f.name for f in fields(Result))


def finished(store: Store, results: Sequence[Result]) -> list[Result]:
    """``results`` with each :class:`Pending` one made a plain :class:`Result`, its
    snippet and role made as :func:`to_results` makes them (one read of roles for all)."""
    rows = [r.row for r in results if isinstance(r, Pending)]
    if not rows:
        return list(results)
    roles = roles_of(store, rows)
    out: list[Result] = []
    for r in results:
        if isinstance(r, Pending):
            row = r.row
            r = Result(**{name: getattr(r, name) for name in _RESULT_FIELDS} | {
                "snippet": snippet_of(row["text"]) or one_line(row["title"]), "role": roles[row["id"]],
            })  # fmt: skip
        out.append(r)
    return out


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
