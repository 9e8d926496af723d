"""Scores a person can read: one calibrated number per result, and the cut-off below it.

A result's ``score`` (``/similar``, ``/suggest-links``, ``/search``) is an estimate of the
chance that the user links the query's note and the result's: the share of pairs scoring
about that much that were linked, measured on real notes with their links taken out
(BENCHMARKS.md, "Relevance a person can read"). It is a fixed logistic transform of
features that depend on the query and the result alone, never on the other results, on
``k`` or on the route:

* ``vector``: the mean of the cosine similarity of the query's vector with the result's
  heading (its best chunk) and with the result's whole note (the mean of its vectors);
* ``words``: ``log(1 + BM25)`` of the result note's best heading for the query's rarest
  words in the whole index (/similar and /suggest-links by node or heading; 0 elsewhere);
* ``graph``: ``log(1 + the graph signal)`` (:func:`.graph.graph_scores`: shared links,
  refs and tags weighted by rarity; 0 when it is off or the query is no node). Its weight
  is 0 for now: the copies the fit ran on have no links left (only tags and refs), where
  it predicted nothing; the graph still orders the results (:mod:`.graph`);
* ``written``: how near in time the two notes were written, as they state it
  (:func:`.written.nearness`: 1 the same day, falling by ``e`` every three days, less on a
  day when many notes were made; 0 when either note states no day). The order moves
  such results up (:mod:`.written`); without this feature a result that moved up for its
  day scored below the ones it passed, and the cut-off removed linked notes written the
  same day as the query's;
* ``named``: 1 when the query's text names the result's note by its title or an alias
  (:func:`.mentions.named`), else 0. The order moves such results up (:mod:`.mentions`);
* ``duplicate``: how far ``vector`` is above ``DUPLICATE_FROM``. Near-copies (notes made
  from one template, a text pasted twice) are seldom linked: on the notes measured, no
  pair above 0.9 was, so the chance falls again at the top.

``score = 1 / (1 + exp(-(B0 + B_VECTOR * vector + B_WORDS * words + B_GRAPH * graph
+ B_WRITTEN * written + B_NAMED * named + B_DUPLICATE * duplicate)))``.

So the same pair of headings scores the same at ``k=5`` and ``k=10``, from ``/similar``
and from ``/suggest-links``. The results of /similar and /suggest-links are in the order
their ranking gave them (it weighs each candidate against the others: the words they
share with the query, the graph; :mod:`.similarity`, :mod:`.graph`), which found more of
the links than the pair's evidence alone, except where the two disagree by more than a
factor ``ORDER_ODDS`` in odds (:func:`in_evidence_order`): a result may score above the
one before it, never with more than four times its odds of a link. /search keeps its
search's order. So scores may rise down a list, and a list showing them reads as broken:
each result also carries its ``relevance`` (:func:`ordered`), the scores made to agree
with the order, which is what clients show. ``Settings.min_score`` is the
cut-off of /similar and /suggest-links (:func:`cut`); /search shows the same kind of
score and cuts nothing. Its default removes only the clearly unrelated, and no cut could
do much more at the same cost: keeping 95% of the linked results of a top 10 leaves most
unlinked ones whatever the score (a person leaves many related notes unlinked). Neither
query-relative features over the whole index (z-score, gap to the query's best, rank),
nor a fit on the notes' own links, nor the graph of held-out links raised that on every
corpus (BENCHMARKS.md, "What any cut-off can do"). In keyword mode (no vectors yet, or the embedder is down) there is
no vector part: the score is then ``BM25 / (BM25 + 10)`` of the keyword match, not
calibrated, capped at the score of the result before it (:func:`rescore`), and nothing
is cut.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..store import Store
from . import retrieval

# Fitted by bench/cutoff.py --fit (logistic regression of "linked" on the features, the
# top 10 of every query pooled; real notes with their links taken out, all-MiniLM-L6-v2);
# see BENCHMARKS.md, "Relevance a person can read". B_WRITTEN and B_NAMED each by
# --fit-alone, the others held, so that no pair scores lower than before it
# (BENCHMARKS.md, "Retrieval across granularities", sixth and seventh rounds).
B0 = -4.73
B_VECTOR = 3.356
B_WORDS = 0.541
B_GRAPH = 0.0
B_WRITTEN = 2.24
B_NAMED = 1.18
B_DUPLICATE = -16.201
DUPLICATE_FROM = 0.8
KEYWORD_HALF = 10.0
# How many times the odds of a link of a result above it a result's may be before it goes
# above that one (:func:`in_evidence_order`).
ORDER_ODDS = 4.0


@dataclass(slots=True)
class Signals:
    """What a query scores its results by: its vector (None in keyword mode), the word
    evidence by note key (:func:`.similarity.similar`'s ``words``), the graph signal by
    node (:func:`.graph.graph_scores`), the nearness in time by node
    (:func:`.written.nearness`) and the nodes the query names (:func:`.mentions.named`)."""

    vector: Sequence[float] | None
    words: dict[str, float] = field(default_factory=dict)
    graph: dict[str, float] = field(default_factory=dict)
    written: dict[str, float] = field(default_factory=dict)
    named: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class Evidence:
    """The features of one (query, result) pair (see the module docstring)."""

    vector: float
    words: float
    graph: float
    written: float = 0.0
    named: float = 0.0

    @property
    def duplicate(self) -> float:
        return max(0.0, self.vector - DUPLICATE_FROM)


def calibrated(e: Evidence) -> float:
    """The score of a pair with evidence ``e``, in (0, 1)."""
    x = B0 + B_VECTOR * e.vector + B_WORDS * e.words + B_GRAPH * e.graph + B_WRITTEN * e.written + B_NAMED * e.named
    x += B_DUPLICATE * e.duplicate
    return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0


def evidence(store: Store, results: Sequence[retrieval.Result], signals: Signals) -> list[Evidence | None]:
    """Each result's :class:`Evidence`, None for all in keyword mode (no query vector)."""
    if signals.vector is None or not results:
        return [None] * len(results)
    query = np.asarray(signals.vector, dtype=np.float64)
    heads = _heading_cosines(store, query, results)
    nodes = store.node_vectors([r.node_id for r in results if r.node_id])
    out: list[Evidence | None] = []
    for r, head in zip(results, heads):
        note = nodes.get(r.node_id) if r.node_id else None
        whole = head if note is None else float(np.dot(query, note))
        key = r.node_id or f"file:{r.file}"
        out.append(
            Evidence(
                vector=(head + whole) / 2,
                words=math.log1p(max(0.0, signals.words.get(key, 0.0))),
                graph=math.log1p(signals.graph.get(r.node_id, 0.0)) if r.node_id else 0.0,
                written=signals.written.get(r.node_id, 0.0) if r.node_id else 0.0,
                named=float(r.node_id in signals.named) if r.node_id else 0.0,
            )
        )
    return out


def rescore(store: Store, results: Sequence[retrieval.Result], signals: Signals) -> list[retrieval.Result]:
    """``results``, in their order, with calibrated scores (see the module docstring).

    In keyword mode a score is the keyword match's, never above the score of the result
    before it: the keyword ranking puts headings holding every word of the query before
    those holding some, so a heading of the second kind may match its words harder than
    one above it, and an uncalibrated score that rises down the list only misleads."""
    found = evidence(store, results, signals)
    out = []
    ceiling = 1.0
    for r, e in zip(results, found):
        if e is None:
            ceiling = min(ceiling, _keyword_score(r.score))
            score = ceiling
        else:
            score = calibrated(e)
        out.append(dataclasses.replace(r, score=round(score, 6)))
    return out


def in_evidence_order(results: Sequence[retrieval.Result], ratio: float = ORDER_ODDS) -> list[retrieval.Result]:
    """``results`` (best first, calibrated scores) in the ranking's order, but for the
    results whose odds of a link (``score / (1 - score)``) are more than ``ratio`` times
    those of a result before them: each such result goes just above the first of those.
    Afterwards no result's odds exceed ``ratio`` times those of any result above it, and
    results the rule leaves alone keep their order.

    Why: the ranking orders by what the score cannot see (the words the candidates share
    among themselves, the graph), and a list showing 0.10 above 0.32 reads as a mistake;
    often it is one. Measured on the kept link-free indexes of bench/similar_lab.py
    (``after6``: English notes, the Info manuals, Japanese notes; all-MiniLM-L6-v2),
    ``?node=`` and ``?file=&line=`` at k=10: of the pairs of a list where the lower
    result's odds were over four times the upper's, the lower was the link as often or
    more on five of the six corpus and route pairs (English by node 38% against 12%, by
    section 8% against 3%), the Japanese sections aside (8% against 10%, 39 pairs).
    Sorting by the score outright lost links (recall@10 at k=50: Japanese sections 0.543
    -> 0.468, the manuals by node 0.645 -> 0.606). With the bound of four, recall@10 at
    k=10 cannot change (the same ten) and MRR moved by -0.002 to +0.004; at k=50
    recall@10 / MRR rose on English notes (by node 0.560 / 0.583 -> 0.564 / 0.586), held
    on the manuals and fell on Japanese sections (0.543 / 0.374 -> 0.536 / 0.372); with
    20% of real links held out (bench/links_graph.py, MiniLM, /suggest-links), MRR moved
    by -0.002 to +0.0002."""
    out: list[retrieval.Result] = []
    bound: list[float] = []  # ratio times the odds of each result placed so far
    for r in results:
        odds = _odds(r.score)
        at = next((i for i, b in enumerate(bound) if odds > b), len(out))
        out.insert(at, r)
        bound.insert(at, ratio * odds)
    return out


def _odds(score: float) -> float:
    return math.inf if score >= 1.0 else max(0.0, score) / (1.0 - score)


def cut(results: Sequence[retrieval.Result], min_score: float | None, *, keep_all: bool = False) -> list[retrieval.Result]:
    """``results`` at or above ``min_score`` (None: no cut-off); with ``keep_all`` the
    others too, marked ``below_cutoff``; each with its :func:`ordered` relevance."""
    if min_score is None:
        return ordered(results)
    out = []
    for r in results:
        if r.score >= min_score:
            out.append(r)
        elif keep_all:
            out.append(dataclasses.replace(r, below_cutoff=True))
    return ordered(out)


def ordered(results: Sequence[retrieval.Result]) -> list[retrieval.Result]:
    """``results``, in their order, each with its ``relevance``: the scores made to agree
    with the order, apart for the results above the cut-off and those ``below_cutoff``.

    Each run of results whose scores rise down the list gets their mean score, run merged
    with run until no relevance is above the one before it (the pool-adjacent-violators
    fit: the closest non-increasing sequence to the scores, and, taking the order as
    right, the likeliest chances of a link). So the mean relevance of a list is its mean
    score (as many links expected), a list already in score order (keyword mode, most
    lists) keeps its scores, and, being means of scores above ``min_score``, every
    relevance above the cut is at or above it and every one below it is below."""
    out = list(results)
    for group in ([i for i, r in enumerate(out) if not r.below_cutoff], [i for i, r in enumerate(out) if r.below_cutoff]):
        runs: list[list[float]] = []  # [mean, count] of each run so far
        for i in group:
            runs.append([out[i].score, 1])
            while len(runs) > 1 and runs[-1][0] > runs[-2][0]:
                mean, n = runs.pop()
                runs[-1] = [(runs[-1][0] * runs[-1][1] + mean * n) / (runs[-1][1] + n), runs[-1][1] + n]
        fitted = [round(mean, 6) for mean, n in runs for _ in range(n)]
        for i, value in zip(group, fitted):
            out[i] = dataclasses.replace(out[i], relevance=value)
    return out


def min_score_for(mode: str, min_score: float) -> float | None:
    """The cut-off a ``mode`` answer uses: none in keyword mode (its scores are not
    calibrated)."""
    return None if mode == "keyword" else min_score


def _keyword_score(raw: float) -> float:
    raw = max(0.0, float(raw))
    return raw / (raw + KEYWORD_HALF)


def _heading_cosines(store: Store, query: np.ndarray, results: Sequence[retrieval.Result]) -> list[float]:
    """The cosine of ``query`` with each result's heading (its best chunk; 0 when none
    of its chunks is embedded)."""
    out = []
    for vectors in store.heading_vectors_at([(r.file, r.line) for r in results]):
        best = None
        for v in vectors:
            cos = float(np.dot(query, v))
            best = cos if best is None else max(best, cos)
        out.append(0.0 if best is None else best)
    return out
