"""How much a relevance cut-off can remove at a small recall cost, on link ground truth:
bounds for any cut, and the features that might have raised them.

    python bench/cutoff_bound.py RUN [CORPUS ...] [--max-queries 200] [--budget 0.05]
        [--keep-links 0.5] [--out NAME]

The same queries, routes and top-10 lists as bench/cutoff.py (``quality.py --out RUN
--keep`` indexes, every id link taken out; ``all=true``, one result per file). For each
corpus and route it prints the share of the top 10's unlinked results that a cut removes
while losing at most ``--budget`` of recall@10 (relative), for:

* ``oracle``: the best cut that keeps each query's order (a prefix of its list, chosen per
  query knowing the links: after its last linked result for free, then the cheapest
  further cuts). No score that keeps the ranking's order can remove more: the ceiling of
  *any* per-query monotone score. ``free`` is the part that costs no recall at all.
* ``rank``: one cut on the rank itself (the top r of every list).
* ``score``: the daemon's score (:mod:`arcology_oracle.answers.relevance`), its best
  threshold for that corpus and route (``one cut`` below: one threshold for all).
* ``refit`` and ``+z``, ``+gap``, ``+pool rank``: the same logistic refitted on the
  other corpora only (leave one corpus out), alone and with one query-relative feature
  over a pool that depends on neither ``k`` nor the route: every note of another file,
  by the cosine of the query's vector with its note vector: the candidate's z-score
  against the query's whole distribution, its cosine minus the query's best, and log(1 +
  its rank in the pool).

Each with the threshold best for that corpus and route (chosen knowing the links: an
upper bound for that score); AUC in brackets. Then the graph with held-out links: a
share ``--keep-links`` of the link pairs kept (the user's links), the rest the ground
truth; the logistic with and without the Adamic-Adar score of the kept links (what
:func:`arcology_oracle.answers.graph.graph_scores` computes from links), fitted leave one
corpus out. Writes bench/results/cutoff-bound-NAME.json.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import zlib
from collections import defaultdict

import numpy as np
from _common import RESULTS, save
from arcology_oracle.answers import relevance
from arcology_oracle.config import load_settings
from arcology_oracle.store import Store
from cutoff import K, corpus_dir, each_query, listed
from quality_lib import Corpus
from similar_lab import queries

BASE = ["vector", "words", "duplicate"]
EXTRA = {"+z": "z", "+gap": "gap", "+pool rank": "pool_rank"}


class Recorder:
    """Wraps :func:`relevance.evidence`: each result's features and the query's vector."""

    def __init__(self) -> None:
        self.original = relevance.evidence
        self.last: dict = {}
        self.vector = None

    def __call__(self, store, results, signals):
        found = self.original(store, results, signals)
        self.last = {}
        for r, e in zip(results, found):
            if e is not None:
                self.last.setdefault(r.file, e)
        self.vector = signals.vector
        return found


def file_pool(store: Store) -> tuple[list[str], np.ndarray]:
    """Each indexed note's file and vector (one row per node with a vector)."""
    rows = store.conn.execute(
        "SELECT DISTINCT h.node_id, f.path FROM headings h JOIN files f ON f.id = h.file WHERE h.node_id IS NOT NULL"
    ).fetchall()
    vectors = store.node_vectors([n for n, _ in rows])
    kept = [(n, p) for n, p in rows if n in vectors]
    return [p for _, p in kept], np.stack([vectors[n] for n, _ in kept])


def collect(spec: str, run: str, max_queries: int, recorder: Recorder) -> tuple[list[dict], Corpus]:
    """One dict per (route, query): its top-10 items with label and features."""
    name, root = corpus_dir(spec)
    corpus = Corpus(root)
    notes, sections = queries(corpus, max_queries)
    store = Store.open(RESULTS / f"quality-work-{name}-{run}" / "index.sqlite3")
    settings = load_settings(overrides={"min_score": 0.0}, environ={})
    files, matrix = file_pool(store)
    file_index = np.asarray(files)
    out: list[dict] = []

    def one(route: str, fn, relevant: set, own: str) -> None:
        ranked = listed(fn(), own)
        found = dict(recorder.last)
        cos = matrix @ np.asarray(recorder.vector, dtype=np.float64)
        pool = cos[file_index != own]
        best_of = defaultdict(lambda: -1.0)
        for f, c in zip(files, cos):
            best_of[f] = max(best_of[f], float(c))
        mean, sd, top = float(pool.mean()), float(pool.std()) or 1.0, float(pool.max())
        items = []
        for f, score in ranked:
            e = found.get(f)
            if e is None:
                continue
            c = best_of[f]
            items.append({
                "file": f, "label": f in relevant, "score": score, "vector": e.vector, "words": e.words,
                "duplicate": e.duplicate, "z": (c - mean) / sd, "gap": c - top,
                "pool_rank": math.log1p(int((pool > c).sum())),
            })  # fmt: skip
        for it in items:
            it["closeness"] = best_of[it["file"]]
        out.append({"corpus": name, "route": route, "own": own, "relevant": set(relevant), "items": items,
                    "closeness": dict(best_of)})

    try:
        each_query(store, settings, corpus, notes, sections, one)
    finally:
        store.close()
    return out, corpus


def logistic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Weights (intercept first) of a logistic regression, Newton's method, a little L2."""
    x = np.column_stack([np.ones(len(x)), x])
    w = np.zeros(x.shape[1])
    for _ in range(60):
        p = 1 / (1 + np.exp(-(x @ w)))
        step = np.linalg.solve((x * (p * (1 - p))[:, None]).T @ x + 1e-3 * np.eye(len(w)), x.T @ (p - y) + 1e-3 * w)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def predict(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-(w[0] + x @ w[1:])))


def flat(qs: list[dict], feats: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels and recall weights (1 / the query's links) of every item."""
    rows = [(it, 1 / len(q["relevant"])) for q in qs for it in q["items"]]
    x = np.asarray([[it[f] for f in feats] for it, _ in rows], dtype=np.float64).reshape(len(rows), len(feats))
    return x, np.asarray([float(it["label"]) for it, _ in rows]), np.asarray([w for _, w in rows])


def removable(score: np.ndarray, y: np.ndarray, w: np.ndarray, budget: float) -> float:
    """The share of unlinked items below the best threshold that loses <= budget of recall."""
    order = np.argsort(score, kind="stable")
    lost, removed = np.cumsum((y * w)[order]), np.cumsum((1 - y)[order])
    ok = lost <= budget * (y * w).sum()
    return float(removed[ok].max() / (1 - y).sum()) if ok.any() and (1 - y).sum() else 0.0


def auc(score: np.ndarray, y: np.ndarray) -> float:
    """Area under the ROC curve (ties count half)."""
    pos, neg = score[y == 1], score[y == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    return float(((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (len(pos) * len(neg)))


def oracle(qs: list[dict], budget: float) -> tuple[float, float]:
    """(free, at budget): the best per-query prefix cuts, knowing the links (see above)."""
    total_recall = sum(sum(i["label"] for i in q["items"]) / len(q["relevant"]) for q in qs)
    unlinked = sum(not i["label"] for q in qs for i in q["items"])
    free, steps = 0, []
    for q in qs:
        labels = [i["label"] for i in q["items"]]
        points = [((sum(labels) - sum(labels[:n])) / len(q["relevant"]), sum(not x for x in labels[n:])) for n in range(len(labels) + 1)]
        here = (0.0, max(b for c, b in points if c == 0))
        free += here[1]
        while True:  # the upper convex hull of (recall lost, unlinked removed)
            better = [((b - here[1]) / (c - here[0]), c, b) for c, b in points if c > here[0] and b > here[1]]
            if not better:
                break
            rate, c, b = max(better)
            steps.append((rate, c - here[0], b - here[1]))
            here = (c, b)
    left, removed = budget * total_recall, free
    for _, cost, gain in sorted(steps, reverse=True):
        take = min(1.0, left / cost)
        removed, left = removed + take * gain, left - take * cost
        if take < 1:
            break
    return free / unlinked, removed / unlinked


def own_notes(qs_all: list[dict], qs: list[dict]) -> np.ndarray:
    """The logistic fitted on the same notes' links: each half of the query notes scored
    by the fit on the other half (the calibration on the user's own link graph)."""
    half = {q["own"]: zlib.crc32(q["own"].encode()) % 2 for q in qs_all}
    fitted = {h: logistic(*flat([q for q in qs_all if half[q["own"]] != h and q["route"] != "suggest-links node"], BASE)[:2]) for h in (0, 1)}
    return np.concatenate([predict(fitted[half[q["own"]]], flat([q], BASE)[0]) for q in qs])


def rank_cut(qs: list[dict], budget: float) -> tuple[float, int]:
    """(removed, r): keep the top r of every list, the smallest r within the budget."""
    x, y, w = flat(qs, [])
    ranks = np.asarray([float(n) for q in qs for n in range(len(q["items"]))])
    removed = removable(-ranks, y, w, budget)
    kept = K - round(removed * (1 - y).sum() / max(1, len(qs)))
    return removed, kept


def held_out_graph(qs_by: dict, corpora: dict, keep: float, budget: float) -> dict:
    """The logistic with and without the kept links' Adamic-Adar score, labels the held-out
    links only (pairs already linked by a kept link left out, as /suggest-links does)."""
    samples: dict = {}
    for name, corpus in corpora.items():
        pairs = sorted({tuple(sorted((a, b))) for a, ts in corpus.links.items() for b in ts if a != b})
        rng = random.Random(3)
        kept = {p for p in pairs if rng.random() < keep}
        near = defaultdict(set)
        for a, b in kept:
            near[a].add(b)
            near[b].add(a)
        out = []
        for q in qs_by[name]:
            held = {t for t in q["relevant"] if tuple(sorted((q["own"], t))) not in kept}
            if not held:
                continue
            # how close the query's kept links are: a note whose links are close ones should cut more
            linked = [q["closeness"][n] for n in near[q["own"]] if n in q["closeness"]]
            items = [
                {**it, "label": it["file"] in held,
                 "graph": math.log1p(sum(1 / math.log(1 + len(near[z])) for z in near[q["own"]] & near[it["file"]])),
                 "near": it["closeness"] - float(np.mean(linked)) if linked else 0.0, "has_near": float(bool(linked))}
                for it in q["items"] if it["file"] not in q["relevant"] - held
            ]  # fmt: skip
            out.append({**q, "relevant": held, "items": items})
        samples[name] = out
    result: dict = {}
    for feats, label in ((BASE, "refit"), (BASE + ["graph"], "+graph"), (BASE + ["near", "has_near"], "+near links")):
        for name in corpora:
            train = [q for other, qs in samples.items() if other != name for q in qs if q["route"] != "suggest-links node"]
            w = logistic(*flat(train, feats)[:2])
            for route in ("similar node", "similar section"):
                x, y, wt = flat([q for q in samples[name] if q["route"] == route], feats)
                s = predict(w, x)
                result.setdefault(f"{name} | {route}", {})[label] = (removable(s, y, wt, budget), auc(s, y), [round(float(v), 2) for v in w])
    return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run")
    p.add_argument("corpora", nargs="*", default=["kha-dinh-org-notes", "kijimaD-roam", "info"])
    p.add_argument("--max-queries", type=int, default=200)
    p.add_argument("--budget", type=float, default=0.05)
    p.add_argument("--keep-links", type=float, default=0.5)
    p.add_argument("--out", default="run")
    args = p.parse_args()
    recorder = Recorder()
    relevance.evidence = recorder
    qs_by, corpora = {}, {}
    for spec in args.corpora:
        name = corpus_dir(spec)[0]
        qs_by[name], corpora[name] = collect(spec, args.run, args.max_queries, recorder)
    fits = {}
    for name in qs_by:
        train = [q for other, qs in qs_by.items() if other != name for q in qs if q["route"] != "suggest-links node"]
        fits[name] = {label: logistic(*flat(train, BASE + ([f] if f else []))[:2]) for label, f in [("refit", None), *EXTRA.items()]}
    b = args.budget
    print(f"\nunlinked results of the top 10 removed at <= {b:.0%} recall cost (AUC)\n")
    print("| corpus | route | linked | oracle free | oracle | rank | score | refit | " + " | ".join(EXTRA) + " | own notes |")
    print("|---" * (9 + len(EXTRA)) + "|")
    table = {}
    for name, qs_all in qs_by.items():
        for route in ("similar node", "similar section", "suggest-links node"):
            qs = [q for q in qs_all if q["route"] == route]
            _, y, w = flat(qs, [])
            free, best = oracle(qs, b)
            by_rank, r = rank_cut(qs, b)
            cells = {"score": flat(qs, ["score"])[0][:, 0]}
            for label, f in [("refit", None), *EXTRA.items()]:
                cells[label] = predict(fits[name][label], flat(qs, BASE + ([f] if f else []))[0])
            cells["own notes"] = own_notes(qs_all, qs)
            row = {k: (removable(s, y, w, b), auc(s, y)) for k, s in cells.items()}
            table[f"{name} | {route}"] = {"linked": float(y.mean()), "oracle free": free, "oracle": best, "rank": (by_rank, r), **row}
            print(f"| {name} | {route} | {y.mean():.3f} | {free:.0%} | {best:.0%} | {by_rank:.0%} (top {r}) | "
                  + " | ".join(f"{v:.0%} ({a:.2f})" for v, a in row.values()) + " |")  # fmt: skip
    every = [(flat([q for q in qs if q["route"] == route], ["score"]), route) for qs in qs_by.values() for route in ("similar node", "similar section", "suggest-links node")]
    best_one = None
    for t in np.linspace(0.0, 0.2, 201):
        cost = [((x[:, 0] < t) * y * w).sum() / (y * w).sum() for (x, y, w), _ in every]
        if max(cost) <= b:
            best_one = (float(t), [float(((x[:, 0] < t) * (1 - y)).sum() / (1 - y).sum()) for (x, y, w), _ in every])
    if best_one:
        print(f"\none cut for all (the daemon's score): {best_one[0]:.3f} removes " + ", ".join(f"{v:.0%}" for v in best_one[1]))
    graph = held_out_graph(qs_by, corpora, args.keep_links, b)
    print(f"\nheld-out links ({args.keep_links:.0%} of link pairs kept): removed at <= {b:.0%} recall cost (AUC), weights\n")
    print("| corpus | route | refit | +graph | +near links | +graph weights (B0, vector, words, duplicate, graph) |\n|---|---|---|---|---|---|")
    for key, row in graph.items():
        cells = " | ".join(f"{row[k][0]:.0%} ({row[k][1]:.2f})" for k in ("refit", "+graph", "+near links"))
        print(f"| {key} | {cells} | {row['+graph'][2]} |")
    save(f"cutoff-bound-{args.out}", {"budget": b, "table": table, "one cut": best_one, "held-out graph": graph})


if __name__ == "__main__":
    sys.exit(main())
