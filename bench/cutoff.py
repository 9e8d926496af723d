"""The relevance cut-off (``min_score``) against held-out links, in process, over the
indexes bench/quality.py kept; and the fit of the score's calibration.

    python bench/cutoff.py RUN [CORPUS ...] [--max-queries 200] [--cutoffs 0.1,0.2,0.3]
        [--fit] [--fit-alone written|named] [--out NAME]

Runs bench/quality.py's ``note`` and ``section`` queries (same sample: pass the same
``--max-queries``) through the daemon's own code on
``bench/results/quality-work-CORPUS-RUN/index.sqlite3`` (made by ``quality.py --out RUN
--keep``: every id link removed from a copy of the notes, so the removed links are the
held-out ones): ``GET /similar?node=`` (:func:`answers.search.similar_node`), ``GET
/similar?file=&line=`` (:func:`answers.search.similar_line`) and ``GET /suggest-links?node=``
(:func:`answers.links.link_candidates`), each at k=10 with ``all=true``. For each route
it prints precision, recall and F1 of the returned list, against the notes the query
note (or section) linked to, for the fixed top 10 and for each cut-off, the mean length of
the list, the share of the top 10's unlinked results the cut-off removes, and the share
of results scoring visibly above the one before them (:func:`rises`).

``--fit`` also fits the calibration of :mod:`arcology_oracle.answers.relevance`
(logistic regression of "linked" on its features, every result of every query of
every corpus pooled) and prints the coefficients, the AUC and the calibration table
(score bins: the share of results linked in each), which is what a score means.
``--fit-alone FEATURE`` fits only the weight of the nearness in time (``written``:
``B_WRITTEN``) or of the query naming the result's note (``named``: ``B_NAMED``), the
other coefficients held at the daemon's (how those features were added: :func:`fit_alone`).
CORPUS is a directory of ../shared/corpora, ``info``, or the path of a subset
(bench/subset.py) that quality.py indexed. Writes bench/results/cutoff-NAME.json.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _common import RESULTS, save
from arcology_oracle.answers import links, relevance, search
from arcology_oracle.config import load_settings
from arcology_oracle.store import Store
from quality_lib import Corpus, dedupe
from similar_lab import queries, source

K = 10
# A rise in score down a list that a person sees (scores show with two decimals).
RISE = 0.01


class Recorder:
    """Wraps :func:`relevance.evidence` to keep each result's features (for ``--fit``)."""

    def __init__(self) -> None:
        self.last: list = []
        self.original = relevance.evidence

    def __call__(self, store, results, signals):
        found = self.original(store, results, signals)
        self.last = list(zip(results, found))
        return found


def listed(results, own: str) -> list[tuple[str, float]]:
    """``(file, score)`` of the results in order, one per file, the query's own aside."""
    seen = dedupe([r.file for r in results if r.file != own])
    best = {}
    for r in results:
        best.setdefault(r.file, r.score)
    return [(f, best[f]) for f in seen][:K]


def prf(rows: list[tuple[list[tuple[str, float]], set]], cut: float | None) -> dict:
    """Precision (of all results returned), recall (mean over queries), F1, mean list
    length, and the share of unlinked results of the top 10 that ``cut`` removes."""
    returned = hits = unlinked_top = unlinked_kept = 0
    recalls = []
    for ranked, relevant in rows:
        kept = [f for f, s in ranked if cut is None or s >= cut]
        returned += len(kept)
        hits += sum(f in relevant for f in kept)
        unlinked_top += sum(f not in relevant for f, _ in ranked)
        unlinked_kept += sum(f not in relevant for f in kept)
        recalls.append(len(set(kept) & relevant) / len(relevant))
    p = hits / returned if returned else 0.0
    r = float(np.mean(recalls)) if recalls else 0.0
    return {
        "precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
        "mean_len": round(returned / max(1, len(rows)), 2),
        "unlinked_removed": round(1 - unlinked_kept / unlinked_top, 4) if unlinked_top else 0.0,
        "rises": rises([[(f, s) for f, s in ranked if cut is None or s >= cut] for ranked, _ in rows]),
    }  # fmt: skip


def rises(lists: list[list[tuple[str, float]]], by: float = RISE) -> float:
    """The share of results scoring more than ``by`` above the one before them: where a
    person reading the list sees a score that disagrees with its order."""
    steps = [(a, b) for ranked in lists for (_, a), (_, b) in zip(ranked, ranked[1:])]
    return round(sum(b > a + by for a, b in steps) / len(steps), 4) if steps else 0.0


def corpus_dir(spec: str) -> tuple[str, Path]:
    """A corpus named as bench/similar_lab.py names them, or a directory (a subset made by
    bench/subset.py), as ``(name, directory)``: quality.py names its copy by the latter."""
    path = Path(spec)
    return (path.resolve().name, path) if path.is_dir() else (spec, source(spec))


def each_query(store: Store, settings, corpus: Corpus, notes: list, sections: list, one: Callable) -> None:
    """``one(route, answer, relevant files, own file)`` for every query of every route:
    ``answer()`` runs the daemon's own code at k=10, with ``all=true``."""
    for rel in notes:
        node = corpus.file_id[rel]
        one("similar node", lambda: search.similar_node(store, settings, node, K, keep_all=True)[1], corpus.links[rel], rel)
        one("suggest-links node", lambda: links.link_candidates(store, settings, node, K)[1], corpus.links[rel], rel)
    for rel, line, targets in sections:
        one("similar section", lambda: search.similar_line(store, settings, rel, line, K, keep_all=True)[1], targets, rel)


def run_corpus(spec: str, run: str, args, recorder: Recorder, pairs: list) -> dict:
    name, root = corpus_dir(spec)
    corpus = Corpus(root)
    notes, sections = queries(corpus, args.max_queries)
    store = Store.open(RESULTS / f"quality-work-{name}-{run}" / "index.sqlite3")
    settings = load_settings(overrides={"min_score": 0.0}, environ={})
    rows: dict[str, list] = {"similar node": [], "similar section": [], "suggest-links node": []}

    def one(route: str, fn: Callable, relevant: set, own: str) -> None:
        results = fn()
        rows[route].append((listed(results, own), relevant))
        for r, e in recorder.last if route.startswith("similar") else []:  # suggestions: the same pairs again
            if e is not None and r.file != own:
                pairs.append((e.vector, e.words, e.graph, e.duplicate, e.written, e.named, float(r.file in relevant)))

    try:
        each_query(store, settings, corpus, notes, sections, one)
    finally:
        store.close()
    out = {}
    for route, by in rows.items():
        out[route] = {"n": len(by), "top10": prf(by, None), **{f"cut {c:g}": prf(by, c) for c in args.cutoffs}}
    return out


def fit(pairs: list) -> dict:
    """Logistic regression (Newton's method, a little L2) of the label on the features."""
    a = np.asarray(pairs, dtype=np.float64)
    # The graph's coefficient is not fitted (0): in these copies every link is gone, so
    # the graph holds only tags and refs, and it did not predict the links (its fitted
    # coefficient was 1.4 on one corpus, -2.2 with the Info manuals added).
    x = np.column_stack([np.ones(len(a)), a[:, 0], a[:, 1], a[:, 3], a[:, 4], a[:, 5]])
    y = a[:, 6]
    w = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) + 1e-3 * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + 1e-3 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    fitted = 1 / (1 + np.exp(-(x @ w)))
    shipped = np.asarray([relevance.calibrated(relevance.Evidence(*row[:3], written=row[4], named=row[5])) for row in a])
    w = [w[0], w[1], w[2], 0.0, w[4], w[5], w[3]]
    return {
        "pairs": len(a), "linked": int(y.sum()),
        "B0, B_VECTOR, B_WORDS, B_GRAPH, B_WRITTEN, B_NAMED, B_DUPLICATE": [round(float(v), 3) for v in w],
        "AUC (this fit)": auc(fitted, y), "AUC (the daemon's scores)": auc(shipped, y),
        "bins (this fit)": bins(fitted, y), "bins (the daemon's scores)": bins(shipped, y),
    }  # fmt: skip


# The features --fit-alone can fit: their column in the pairs, and the Evidence field.
ALONE = {"written": 4, "named": 5}


def fit_alone(pairs: list, feature: str) -> dict:
    """The weight of one feature alone (``B_WRITTEN`` or ``B_NAMED``; Newton's method),
    the daemon's other coefficients held: what it adds to the score as it is, so that no
    pair scores lower."""
    a = np.asarray(pairs, dtype=np.float64)
    column = ALONE[feature]
    held = {name: c for name, c in ALONE.items() if name != feature}
    rest = np.asarray([relevance.calibrated(relevance.Evidence(*row[:3], **{n: row[c] for n, c in held.items()}))
                       for row in a])  # fmt: skip
    offset = np.log(rest / (1 - rest))  # each pair's log-odds without the feature
    x, y, w = a[:, column], a[:, 6], 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-(offset + w * x)))
        step = float(x @ (p - y)) / (float((x * x) @ (p * (1 - p))) + 1e-9)
        w -= step
        if abs(step) < 1e-8:
            break
    fitted = 1 / (1 + np.exp(-(offset + w * x)))
    return {f"B_{feature.upper()}": round(w, 3), "AUC (this fit)": auc(fitted, y), "AUC (without it)": auc(rest, y),
            "bins (this fit)": bins(fitted, y)}  # fmt: skip


def auc(p: np.ndarray, y: np.ndarray) -> float:
    """The chance that a linked pair scores above an unlinked one (ties count half)."""
    _, inverse, counts = np.unique(p, return_inverse=True, return_counts=True)
    ranks = (np.cumsum(counts) - (counts - 1) / 2)[inverse]  # tied scores share their mean rank
    linked = y == 1
    n1, n0 = int(linked.sum()), int((~linked).sum())
    return round(float((ranks[linked].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)), 4) if n1 and n0 else float("nan")


def bins(p: np.ndarray, y: np.ndarray) -> list[dict]:
    """What a score means: the share of pairs linked among those scoring in each tenth."""
    out = []
    for lo in np.arange(0, 1, 0.1):
        inside = (p >= lo) & (p < lo + 0.1)
        if inside.any():
            out.append({"score": f"{lo:.1f}-{lo + 0.1:.1f}", "pairs": int(inside.sum()), "linked": round(float(y[inside].mean()), 3)})
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", help="the --out name of the quality.py run whose kept indexes to read")
    p.add_argument("corpora", nargs="*", default=["kha-dinh-org-notes", "kijimaD-roam", "info"])
    p.add_argument("--max-queries", type=int, default=200)
    p.add_argument("--cutoffs", type=lambda s: [float(x) for x in s.split(",")], default=[0.1, 0.15, 0.2, 0.25, 0.3, 0.4])
    p.add_argument("--fit", action="store_true", help="fit the calibration too")
    p.add_argument("--fit-alone", choices=sorted(ALONE), help="fit this feature's weight alone, the other coefficients held")
    p.add_argument("--out", default="run")
    args = p.parse_args()
    recorder = Recorder()
    relevance.evidence = recorder
    pairs: list = []
    out: dict = {"corpora": {}}
    for spec in args.corpora:
        name = corpus_dir(spec)[0]
        out["corpora"][name] = result = run_corpus(spec, args.run, args, recorder, pairs)
        print(f"\n## {name}\n")
        print("| route (queries) | list | precision | recall | F1 | mean length | unlinked removed | rises |")
        print("|---|---|---|---|---|---|---|---|")
        for route, by in result.items():
            for label, m in ((k, v) for k, v in by.items() if k != "n"):
                print(f"| {route} ({by['n']}) | {label} | {m['precision']:.3f} | {m['recall']:.3f} | {m['f1']:.3f} "
                      f"| {m['mean_len']:.1f} | {m['unlinked_removed']:.0%} | {m['rises']:.1%} |")  # fmt: skip
    if args.fit:
        out["fit"] = fit(pairs)
        print("\n", out["fit"])
    if args.fit_alone:
        out["fit_alone"] = fit_alone(pairs, args.fit_alone)
        print("\n", out["fit_alone"])
    save(f"cutoff-{args.out}", out)


if __name__ == "__main__":
    sys.exit(main())
