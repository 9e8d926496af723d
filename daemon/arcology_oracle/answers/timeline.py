"""Retrieval within a date range: the same hybrid ranking as :mod:`retrieval`, but only
among headings dated in the range (so a year of journal does not drown "last week"), and,
for a question that is nothing but its time ("what did I do last week"), the range's
headings spread over its days (each day's first, then each day's second...), shown in
date order.

Synchronous, on one store, like :mod:`retrieval`; query vectors come from the caller.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..store import Store, dated
from . import retrieval
from .when import DateRange, without_expression

# Words of questions that name no subject: "what happened last week" is a question about
# everything of last week; "what do I know about sourdough", "when did I first write about
# sourdough" are about sourdough.
_FILLER = frozenset(
    "happen happened happening change changed tell remind anything something everything done doing write "
    "wrote written writing note notes journal day days week month year up know knew remember recall first ever".split()
)
# The same in Japanese and Chinese, where a question's words are one run ("先週は何をした？"
# leaves は何をした): a run made of nothing but these, particles and endings included, names no
# subject; any other run is kept whole (おやつ, 焼いた). Else 先週 was a search for は何 and
# 何を, and a day's headings came in the order they scored, not in file order.
_CJK_FILLER = frozenset(
    "私 僕 俺 わたし 自分 何 なに なん どんな こと 事 日記 メモ ノート 記録 は が を に で の か も よ ね って "
    "した しました して してた していた していました しています やった やりました あった ありました 起きた 起きました "
    "起こった 書いた 書きました 変わった 変わりました でした だった ですか "
    "我 我们 做 干 了 什么 啥 发生 有 吗 呢 的 事情 哪些 些 都 过 在 写 笔记 日记 记录 变化".split()
)
_CJK_LONGEST = max(map(len, _CJK_FILLER))


def _only_cjk_filler(run: str) -> bool:
    """Whether ``run`` is made of :data:`_CJK_FILLER` words alone. Each place a word can end
    is reached once (a run is cut many ways: でした is で + した too; a regular expression
    tried every way, 2^n for n of them, on the event loop)."""
    ends = {0}
    for i in range(len(run)):
        if i in ends:
            ends.update(i + n for n in range(1, min(_CJK_LONGEST, len(run) - i) + 1) if run[i : i + n] in _CJK_FILLER)
    return len(run) in ends


def subject(text: str, rng: DateRange | None = None) -> str:
    """The words of a question that say what it is about: without ``rng``'s expression
    ("last week") and without filler."""
    text = without_expression(text, rng)
    return " ".join(w for w in retrieval.WORD.findall(text) if w.lower() not in _FILLER and not _only_cjk_filler(w))


def ranked_in_range(
    store: Store, text: str, vectors: Sequence[Sequence[float]], rng: DateRange, pool: int, *, min_similarity: float = 0.0
) -> tuple[list[list[int]], dict[int, str]]:
    """Rankings of heading ids dated in ``rng`` (one per query vector, one by keywords),
    and keyword snippets. With no words to search for, one ranking: the range's headings
    spread over its days (:func:`range_headings`)."""
    since, until = rng.bounds()
    rankings: list[list[int]] = []
    snippets: dict[int, str] = {}
    text = subject(text, rng)
    match = retrieval.fts_query(text)
    if match is None:
        return [range_headings(store, rng, pool)], snippets
    keyword = dated.fts_in_range(store, match, pool, since, until)
    if not keyword:
        any_match = retrieval.fts_query(text, any_term=True)
        keyword = dated.fts_in_range(store, any_match, pool, since, until) if any_match else []
    snippets = {h: s for h, _, s in keyword}
    vectors = [v for v in vectors if v is not None]
    if vectors:
        exact = dated.vectors_in_range(store, since, until)
        for vector in vectors:
            if exact is None:  # too wide to score exactly: nearest neighbours, then filter
                hits = retrieval.vector_hits(store, vector, pool * 20)
                dates = dated.heading_dates(store, [h for h, _ in hits])
                ranked = [(h, s) for h, s in hits if rng.contains(dates.get(h))]
            else:
                ranked = _score_exactly(exact, vector)
            rankings.append([h for h, s in ranked[:pool] if s >= min_similarity])
    rankings.append([h for h, _, _ in keyword])
    return [r for r in rankings if r], snippets


def _score_exactly(exact: tuple[list[int], np.ndarray], vector: Sequence[float]) -> list[tuple[int, float]]:
    """Best cosine per heading among the range's chunk vectors (unit vectors: dot)."""
    ids, matrix = exact
    if not ids:
        return []
    scores = matrix @ np.asarray(vector, np.float32)
    best: dict[int, float] = {}
    for heading_id, score in zip(ids, scores.tolist()):
        if score > best.get(heading_id, -2.0):
            best[heading_id] = score
    return sorted(best.items(), key=lambda item: item[1], reverse=True)


def search_in_range(
    store: Store, query: str, k: int, vector: Sequence[float] | None, rng: DateRange, *, min_similarity: float = 0.0
) -> tuple[str, list[retrieval.Result]]:
    """:func:`.search_ranking.search` among headings dated in ``rng``; mode ``dated``
    when the query held no words besides its time (results then spread over the range's
    days, :func:`range_headings`, and in date order)."""
    pool = max(k * 5, 50)
    rankings, snippets = ranked_in_range(
        store, query, [vector] if vector is not None else [], rng, pool, min_similarity=min_similarity
    )
    if retrieval.fts_query(subject(query, rng)) is None:
        ids = rankings[0] if rankings else []
        results = retrieval.to_results(store, [(h, 0.0) for h in ids], k)
        return "dated", sorted(results, key=lambda r: r.date or "")
    mode = "hybrid" if len(rankings) > 1 else "keyword"
    fused = retrieval.reciprocal_rank_fusion(*rankings)
    return mode, retrieval.to_results(store, fused, k, snippets=snippets)


def range_headings(store: Store, rng: DateRange, limit: int) -> list[int]:
    """Up to ``limit`` headings dated in ``rng``, spread over its days (each day's first,
    then each day's second...: :func:`.dated.headings_across_days`), so that a week cut
    to k notes is not its busiest first day; shown in date order by the callers."""
    since, until = rng.bounds()
    return dated.headings_across_days(store, since, until, limit)


def journal(store: Store, rng: DateRange, limit: int) -> tuple[list[retrieval.Result], bool, bool]:
    """The headings of daily notes dated in ``rng``, oldest first (file order within a
    day), at most ``limit``; whether more were left out; and whether the index has any
    daily-note heading at all (to tell "none in this range" from "no journal")."""
    since, until = rng.bounds()
    ids = dated.headings_in_range(store, since, until, limit + 1, daily=True)
    results = retrieval.to_results(store, [(h, 0.0) for h in ids[:limit]], limit)
    return results, len(ids) > limit, bool(results) or dated.has_daily_headings(store)


def event_date(store: Store, words: str) -> dt.date | None:
    """The date of the heading that best matches ``words`` ("the move") among those
    whose notes state a date (a file's modification time says nothing of the event), the
    oracle's words left out (an answer about the move is dated when it was written)."""
    hits = retrieval.keyword_hits(store, words, 20)
    oracle = store.oracle_words(h for h, _, _ in hits)
    dates = dated.heading_dates(store, [h for h, _, _ in hits if h not in oracle], stated=True)
    for heading_id, _, _ in hits:
        day = dates.get(heading_id)
        if day:
            return dt.date.fromisoformat(day[:10])
    return None


@dataclass(frozen=True)
class RangeGate:
    """How a date range changes ``/ask``'s relevance gate: only headings dated in the
    range are kept; a question that is only its time ("what did I do last week") takes
    the range as it is; headings holding the question's words pass whatever their
    vectors say; and the range's headings, spread over its days, fill the context while
    fewer than k passed."""

    rng: DateRange
    only_time: bool
    dated_words: frozenset[int]
    filler: frozenset[int]

    def admits(self, row: dict) -> bool:
        return self.rng.contains(row["date"])

    def passes(self, heading_id: int, passed: int, k: int) -> bool:
        return self.only_time or heading_id in self.dated_words or (heading_id in self.filler and passed < k)


def dated_candidates(
    store: Store, question: str, buffer: str | None, vectors: Sequence[Sequence[float]], size: int, rng: DateRange
) -> tuple[list[tuple[int, float]], RangeGate]:
    """The candidates of ``/ask`` within ``rng``: the fused rankings of
    :func:`ranked_in_range` (and of the buffer's words), then the range's other
    headings spread over its days (:func:`range_headings`, score 0); and the gate they
    go through."""
    rankings, snippets = ranked_in_range(store, question, vectors, rng, size)
    if buffer:
        rankings.append([h for h, _, _ in retrieval.keyword_hits(store, buffer, size, any_term=True)])
    fused = retrieval.reciprocal_rank_fusion(*rankings)[:size]
    in_range = range_headings(store, rng, size)
    seen = {h for h, _ in fused}
    fused += [(h, 0.0) for h in in_range if h not in seen]
    only_time = retrieval.fts_query(subject(question, rng)) is None
    return fused, RangeGate(rng, only_time, frozenset(snippets), frozenset(in_range))


def journal_order(groups: list[list], *, by_date: bool) -> list[list]:
    """Notes (lists of candidates with a ``row``) in the order the model reads them:
    relevance first, but journal entries (headings of daily notes) in date order among
    themselves, so that "what changed between January and March" reads as a timeline;
    with ``by_date`` (the question named a time) every note in date order."""

    def day(members: list) -> str:
        return min((c.row["date"] or "9999") for c in members)

    def is_journal(members: list) -> bool:
        return by_date or any(c.row.get("date_source") == "daily" for c in members)

    slots = [i for i, members in enumerate(groups) if is_journal(members)]
    ordered = list(groups)
    for slot, members in zip(slots, sorted((groups[i] for i in slots), key=day)):
        ordered[slot] = members
    return ordered


def recency_weight(date: str | None, mtime_ns: int | None, half_life: float, now: dt.date) -> float:
    """0.5 .. 1.0: halves the distance to 0.5 every ``half_life`` days of age."""
    day = None
    if date:
        try:
            day = dt.date.fromisoformat(date[:10])
        except ValueError:
            day = None
    if day is None and mtime_ns:
        day = dt.datetime.fromtimestamp(mtime_ns / 1e9).date()
    if day is None:
        return 0.75
    age = max(0, (now - day).days)
    return 0.5 + 0.5 * 0.5 ** (age / half_life)
