"""A hubness correction of /similar's vector score, measured in process (issue 29).

    python bench/hubness_lab.py RUN [CORPUS ...] [--weight 0.5] [--k 10] [--tasks node,line]
        [--ollama URL] [--model all-MiniLM-L6-v2] [--explain]

In high-dimensional embeddings some points are near almost everything (hubs): a note
that sums up a subject, a chapter holding its sections' text. Their cosine with a query
says less than another note's. CSLS (Conneau et al., 2018, "Word translation without
parallel data") scores ``2 cos(q, c) - r_q - r_c``, ``r_c`` the mean cosine of ``c``
with its ``k`` nearest neighbours; for one query that is ``cos(q, c) - r_c / 2``. Here
``r_c`` is over the index's whole-note vectors (``Store.node_vectors`` of every node),
and each candidate note's vector score in ``answers.similarity`` (after
``_rescore_by_note``, and the keyword candidates' whole-note cosines) loses
``weight * r_c`` before the word re-ranking's z-scores; ``--weight 0.5`` is CSLS itself.
A throwaway wrapper of the daemon's functions (nothing of the daemon changes), over the
indexes bench/quality.py kept (``--keep``), with bench/similar_lab.py's queries, sample
and metrics. ``--explain``: for the ``line`` task, the linked notes that enter and
leave the first ten with the correction, with their hubness percentile among the
index's notes and their text's length (aggregates only).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import similar_lab as lab
from _common import RESULTS
from arcology_oracle.answers import similarity
from arcology_oracle.answers.retrieval import note_key
from arcology_oracle.config import load_settings
from arcology_oracle.store import Store
from quality_lib import Corpus, dedupe

SETTINGS = {"weight": 0.5, "k": 10}
_hubness: dict[int, tuple[dict[str, float], float]] = {}


def hubness(store: Store) -> tuple[dict[str, float], float]:
    """``({node: r}, mean r)``: each node's mean cosine with its k nearest other nodes."""
    key = id(store.conn)
    if key not in _hubness:
        ids = [r[0] for r in store.conn.execute("SELECT DISTINCT own_id FROM headings WHERE own_id IS NOT NULL")]
        vecs = store.node_vectors(ids)
        names = list(vecs)
        m = np.array([vecs[n] for n in names])
        sims = m @ m.T
        np.fill_diagonal(sims, -np.inf)
        r = (-np.sort(-sims, axis=1)[:, : min(SETTINGS["k"], len(names) - 1)]).mean(axis=1)
        _hubness[key] = (dict(zip(names, r.tolist())), float(r.mean()))
    return _hubness[key]


def _discounted(store: Store, hits: list[tuple[int, float]]) -> list[tuple[int, float]]:
    if not SETTINGS["weight"] or not hits:
        return hits
    r, mean_r = hubness(store)
    owners = store.heading_owners([h for h, _ in hits])
    return [(h, s - SETTINGS["weight"] * (r.get(note_key(*owners[h]), mean_r) if h in owners else mean_r))
            for h, s in hits]  # fmt: skip


_rescore, _keyword = similarity._rescore_by_note, similarity._keyword_candidates


def rescore(store, hits, query, **kw):
    return sorted(_discounted(store, _rescore(store, hits, query, **kw)), key=lambda item: -item[1])


def keyword_candidates(store, words, head, vector, exclude_nodes, evidence, **kw):
    index_bm25, joining = _keyword(store, words, head, vector, exclude_nodes, evidence, **kw)
    return index_bm25, _discounted(store, joining)


def explain(name: str, run: str) -> None:
    """The line task's linked notes entering / leaving the first ten with the correction."""
    corpus = Corpus(lab.source(name))
    _, sections = lab.queries(corpus, 400)
    store = Store.open(RESULTS / f"quality-work-{name}-{run}" / "index.sqlite3")
    settings = load_settings(overrides={}, environ={})
    r, _ = hubness(store)
    order = sorted(r.values())
    file_node = {rel: corpus.file_id.get(rel) for rel in corpus.clean}
    moved: dict[str, list[tuple[float, int]]] = {"entered": [], "left": []}
    weight = SETTINGS["weight"]
    try:
        for rel, line, targets in sections:
            tops = []
            for w in (0.0, weight):
                SETTINGS["weight"] = w
                files = [f for f in dedupe([x.file for x in lab.similar_to_line(store, settings, rel, line, 50)]) if f != rel]
                tops.append(set(files[:10]))
            for f in targets:
                node = file_node.get(f)
                pct = float(np.searchsorted(order, r[node]) / len(order)) if node in r else float("nan")
                if f in tops[1] - tops[0]:
                    moved["entered"].append((pct, len(corpus.clean.get(f, ""))))
                elif f in tops[0] - tops[1]:
                    moved["left"].append((pct, len(corpus.clean.get(f, ""))))
    finally:
        SETTINGS["weight"] = weight
        store.close()
    for what, rows in moved.items():
        if rows:
            pct, size = np.nanmedian([p for p, _ in rows]), np.median([s for _, s in rows])
            print(f"{name:20s} {what}: {len(rows)} linked notes, hubness percentile median {pct:.2f}, text median {size:.0f} chars")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run")
    p.add_argument("corpora", nargs="*", default=["kha-dinh-org-notes", "kijimaD-roam-sub", "info-sub"])
    p.add_argument("--weight", type=float, default=0.5)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--tasks", default="node,line")
    p.add_argument("--ollama")
    p.add_argument("--model", default="all-minilm")
    p.add_argument("--explain", action="store_true")
    args = p.parse_args()
    SETTINGS.update(weight=args.weight, k=args.k)
    similarity._rescore_by_note, similarity._keyword_candidates = rescore, keyword_candidates
    if args.explain:
        for name in args.corpora:
            explain(name, args.run)
        return
    sys.argv = [sys.argv[0], args.run, *args.corpora, "--tasks", args.tasks, "--model", args.model,
                *(["--ollama", args.ollama] if args.ollama else [])]  # fmt: skip
    lab.main()


if __name__ == "__main__":
    main()
