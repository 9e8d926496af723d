"""The graph signal of similarity, and the one place it is fused with the text score.

Two notes are related by the graph when they share *features*, each weighted by how rare
it is: a neighbour in the link graph (a note both link to, both are linked from, or one
links to and the other from: co-citation, shared out-links and the paths between them),
a ``ROAM_REFS`` entry, or a tag (those two only when held by at most √N of the
index's N nodes: :func:`specific_labels`). A feature held by ``n`` nodes weighs
``1 / log(1 + n)`` (Adamic-Adar's rarity weight), so a shared rare tag or a note cited
by two notes only counts much more than a hub everything links to. The query note's
direct neighbours are scored like any other node; leaving them out (``exclude_linked``,
/suggest-links) is the caller's choice.

:func:`similar_with_graph` is where text and graph meet, for /similar and
/suggest-links alike, and :func:`fuse` how:
reciprocal rank fusion (the same k=60 as /search) of the text ranking and the graph
ranking, the graph's term weighted by ``Settings.graph_weight``. It is used only when
``Settings.graph_similarity`` is on: the default, because with 20% of real notes' links
hidden it found more of them than the text alone on every corpus measured
(bench/links_graph.py; BENCHMARKS.md, "Link suggestions and the graph signal").
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from ..config import Settings
from ..store import Store
from . import mentions, moves, relevance, retrieval, similarity, written

# Rarest features first, at most this many of each kind: a node with thousands of
# neighbours must not make one /similar read the whole link table.
MAX_FEATURES = 200


def graph_scores(store: Store, node_id: str) -> dict[str, float]:
    """Indexed nodes sharing a feature with ``node_id`` -> their summed rarity weight
    (see the module docstring). ``node_id`` itself is never in it."""
    links = store.neighbours([node_id])[node_id]
    nodes_linked = sorted(store.indexed_nodes(links))
    # (name, holders): the feature "linked with z" is held by z's own neighbours (node_id
    # among them); a label by the nodes carrying it.
    features = list(store.neighbours(nodes_linked[: MAX_FEATURES * 4]).items())
    features.extend(specific_labels(store, store.label_holders(node_id)).items())
    scores: dict[str, float] = {}
    candidates: set[str] = set()
    for _, holders in features:
        candidates |= holders
    indexed = store.indexed_nodes(candidates)
    # Equally rare features by name: which of them the cut keeps must not depend on the
    # order of a set (string hashes differ from one process to the next).
    ranked = sorted(features, key=lambda feature: (len(feature[1]), feature[0]))[: MAX_FEATURES * 3]
    for _, holders in ranked:
        holders = holders & indexed
        if len(holders) < 2:
            continue
        weight = 1.0 / math.log(1.0 + len(holders))
        for other in holders:
            if other != node_id:
                scores[other] = scores.get(other, 0.0) + weight
    return scores


def specific_labels(store: Store, labels: dict[str, set[str]]) -> dict[str, set[str]]:
    """Those of ``labels`` (tag or ref -> the nodes carrying it) held by at most √N of
    the index's N nodes: the others are no feature of the graph signal.

    Why: the fusion (:func:`fuse`) reads the graph by rank, so every note sharing the
    query's only label ties at the top of the graph's ranking whatever the label's
    rarity weight, and a tie group of a third of the collection then outranked the
    text's best notes (a note 30th by text with the tag above the text's first without
    it). A label that many notes carry names a kind of note (``essay``, ``book``,
    ``wiki``) rather than a subject: held by more than √N of N notes, sharing it says
    less than half of what sharing a label with one other note says (log(N/n) below
    half of log N), i.e. less than the text's ranking does about its first notes.
    Links are not filtered: a link is written for a subject, and Adamic-Adar's weight
    already discounts notes linked from everywhere.

    Measured with MiniLM (BENCHMARKS.md, "Retrieval across granularities", second
    round), link prediction with the links stripped: Japanese notes whose tags are
    kinds of note (essay 104 of 300, wiki 54, book 34, permanent 26) by node recall@10
    / MRR 0.400 / 0.435 -> 0.509 / 0.500, by section 0.344 / 0.236 -> 0.426 / 0.293;
    English notes (tags of 2-7 notes) and the Info manuals unchanged.
    """
    if max((len(holders) for holders in labels.values()), default=0) < 2:
        return labels  # nothing shared: no count needed
    total = store.node_count()
    return {name: holders for name, holders in labels.items() if len(holders) * len(holders) <= total}


def fuse(
    store: Store,
    node_id: str | None,
    results: Sequence[retrieval.Result],
    k: int,
    *,
    weight: float,
    exclude_nodes: frozenset[str],
    scores: dict[str, float] | None = None,
    later: bool = False,
    scored: bool = True,
) -> list[retrieval.Result]:
    """The text ``results`` (best first) re-ranked with the graph signal of ``node_id``
    (``scores``: its :func:`graph_scores`, read here when not given):
    score = ``1/(60 + text rank) + weight/(60 + graph rank)``, scaled so 1.0 is first in
    both. Nodes only the graph finds join, shown by their own heading; nodes in
    ``exclude_nodes`` never do. At most ``k`` results. With no ``node_id`` (a heading in
    no node), or a zero ``weight``, the text ranking alone. The scores are the fusion's,
    for the order: :func:`similar_with_graph` shows calibrated ones (:mod:`.relevance`).
    ``later``: the nodes only the graph found are :class:`~.retrieval.Pending` results.
    Without ``scored``, the results keep the scores they came with (the caller scores
    them again and only needs the order): copying each result for a score thrown away
    was ~2% of a ``/similar?node=`` at 20k headings (BENCHMARKS.md, issue 30)."""
    if node_id is None or weight <= 0:
        return list(results[:k])
    if scores is None:
        scores = graph_scores(store, node_id)
    graph = {n: s for n, s in scores.items() if n not in exclude_nodes}
    if not graph:
        return list(results[:k])
    by_node: dict[str, retrieval.Result] = {}
    fused: dict[str, float] = {}
    for rank, result in enumerate(results, start=1):
        key = result.node_id or f"file:{result.file}"
        if key in by_node:
            continue
        by_node[key] = result
        fused[key] = 1.0 / (retrieval.RRF_K + rank)
    for node, share in tied_reciprocal_ranks(graph).items():
        fused[node] = fused.get(node, 0.0) + weight * share
    best = (1.0 + weight) / (retrieval.RRF_K + 1)
    order = sorted(fused.items(), key=lambda item: -item[1])[:k]
    # Nodes only the graph found, shown by their own heading: read in one go.
    heading_of = store.node_heading_ids([node for node, _ in order if node not in by_node])
    own = [(heading_of[node], 0.0) for node, _ in order if node in heading_of]
    for result in retrieval.to_results(store, own, len(own), exclude_oracle=True, later=later):
        by_node.setdefault(result.node_id, result)
    out = []
    for node, score in order:
        if node in by_node:
            out.append(_with_score(by_node[node], score / best) if scored else by_node[node])
    return out


def tied_reciprocal_ranks(scores: dict[str, float]) -> dict[str, float]:
    """Each key's ``1 / (60 + rank)`` by descending score, where keys with equal scores
    share the mean of their ranks' terms: what they would get on average if the tie were
    broken at random, with none of the noise. Ties are the rule in the graph signal (every
    note sharing one tag and nothing else scores the same), and breaking them by node id
    handed an arbitrary order of them as much weight as the text's ranking.

    Keys come out by descending score, equal scores in key order: :func:`fuse` keeps that
    order among equal fused scores, so which tied nodes make its first ``k`` is the same in
    every process (the order of ``scores`` follows sets of strings, whose hashes are not).
    """
    groups: dict[float, list[str]] = {}
    for key, score in scores.items():
        groups.setdefault(score, []).append(key)
    out: dict[str, float] = {}
    rank = 1
    for score in sorted(groups, reverse=True):
        keys = sorted(groups[score])
        share = sum(1.0 / (retrieval.RRF_K + r) for r in range(rank, rank + len(keys))) / len(keys)
        out.update(dict.fromkeys(keys, share))
        rank += len(keys)
    return out


def _with_score(result: retrieval.Result, score: float) -> retrieval.Result:
    return dataclasses.replace(result, score=round(float(score), 6))


def similar_with_graph(
    store: Store, settings: Settings, node_id: str | None, *, k: int, graph_on: bool | None = None,
    naming: mentions.Naming = mentions.Naming(), **similar,
) -> tuple[str, list[retrieval.Result]]:
    """Similar notes by text (:func:`similarity.similar` with ``similar``'s arguments),
    fused with the graph signal of ``node_id`` (:func:`fuse`) when
    ``settings.graph_similarity`` is on, or ``graph_on`` says so, then those written
    about the same time as ``node_id`` and those the query names (``naming``) moved up
    (:mod:`.moves`). The text ranking is made for ``k`` either way (reading it twice as
    deep for the fusion found the same held-out links: bench/links_graph.py, hash
    embedder: recall@10 0.4207 and 0.4076 at depth 2k, 0.4207 and 0.4008 at k, for twice
    the text work), and read :func:`.moves.depth` deep, so that a result that moves up
    may come from below the first ``k``. Returns ``(mode, results)`` as
    :func:`similarity.similar` does, with the scores of :func:`.relevance.rescore`
    (scores that mean the same whatever ``k`` and route), in that order but where a
    result's odds of a link are over four times those of one above it
    (:func:`.relevance.in_evidence_order`). The ranking is made for at least
    :func:`.moves.ranked_for` results, so the first ones do not depend on ``k``."""
    use_graph = (settings.graph_similarity if graph_on is None else graph_on) and node_id is not None
    day = written.day_of(store, node_id)
    wanted, k = k, moves.ranked_for(k)
    depth = moves.depth(k)
    words: dict[str, float] = {}
    # Snippets and roles are made for the results kept only (retrieval.finished).
    mode, results = similarity.similar(store, k=k, depth=depth, words=words, later=True, **similar)
    scores = graph_scores(store, node_id) if use_graph else {}
    if use_graph:  # with a vector, relevance.rescore scores every result again: the fusion gives the order only
        results = fuse(
            store, node_id, results, depth, scores=scores, weight=settings.graph_weight,
            exclude_nodes=similar.get("exclude_nodes", frozenset()), later=True, scored=similar.get("vector") is None,
        )  # fmt: skip
    near = written.supported(store, similar.get("vector"), words, written.nearness(store, day, results), results)
    named = naming.named(store, results)
    places = moves.summed(written.places(near), mentions.places(named, similar.get("note_query", False)))
    results = moves.moved_up(results, places, k)
    evidence = relevance.Signals(vector=similar.get("vector"), words=words, graph=scores, written=near, named=named)
    ranked = relevance.in_evidence_order(relevance.rescore(store, results, evidence))[:wanted]
    return mode, retrieval.finished(store, ranked)
