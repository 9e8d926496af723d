"""Note-level page vectors next to heading chunks, measured in process before any of it
is built into the daemon (issue 29).

    python bench/granularity_lab.py RUN [CORPUS ...] [--tasks node,line] [--weights 0,0.33,0.5]
        [--agg mean,max]

Runs bench/similar_lab.py's queries on the indexes ``quality.py --out RUN --keep`` kept,
with ``similarity._rescore_by_note`` wrapped: each candidate node's score becomes
``(1 - w) * its score + w * cos(query page vector, its page vector)``, where a node's
page vectors are the embeddings of windows of ``PAGE`` characters overlapping by
``OVERLAP`` of its own text (the titles and text of its headings, as the store holds
them) and its page vector their normalised mean (``--agg max``: its best page); the
query's page vector is the query node's (``?node=``) or the section's own vector
(``?file=&line=``). Windows are embedded once through
bench/st_ollama.py (its cache) and kept in ``bench/results/lab-vectors-CORPUS-pages.npz``;
prints how many texts and characters that was.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time

import numpy as np
import similar_lab as lab
from arcology_oracle.answers import similarity
from arcology_oracle.store import Store
from _common import RESULTS
from quality_lib import pages as windows  # the page baseline's own 6000/400 windows

STATE: dict = {"w": 0.0, "agg": "mean", "qpage": None}


def node_texts(store: Store) -> dict[str, str]:
    ids = [r[0] for r in store.conn.execute("SELECT DISTINCT own_id FROM headings WHERE own_id IS NOT NULL")]
    out = {}
    for node_id in ids:
        rows = store.node_headings(node_id)
        out[node_id] = "\n".join((r["title"] + "\n" + r["text"]).strip() for r in rows)
    return out


def unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n else v


_orig_rescore = similarity._rescore_by_note


def rescore(store, hits, query, *, limit, exclude_nodes, **kw):
    out = _orig_rescore(store, hits, query, limit=limit, exclude_nodes=exclude_nodes, **kw)
    w, qpage = STATE["w"], STATE["qpage"]
    qp = np.asarray(query if qpage is None else qpage)
    owners = store.heading_owners([h for h, _ in out])
    keys = [owners[h][0] if h in owners else None for h, _ in out]
    pv = STATE["pv_max"] if STATE["agg"] == "max" else STATE["pv"]
    rescored = []
    for (h, s), key in zip(out, keys):
        if key is not None and key in pv:
            page = pv[key](qp) if STATE["agg"] == "max" else float(np.dot(qp, pv[key]))
            s = (1 - w) * s + w * page
        rescored.append((h, s))
    return sorted(rescored, key=lambda item: -item[1])


similarity._rescore_by_note = rescore
_orig_node, _orig_line = lab.similar_to_node, lab.similar_to_line


def similar_to_node(store, settings, node_id, k):
    STATE["qpage"] = STATE["pv"].get(node_id)
    return _orig_node(store, settings, node_id, k)


def similar_to_line(store, settings, rel, line, k):
    STATE["qpage"] = None
    return _orig_line(store, settings, rel, line, k)


lab.similar_to_node, lab.similar_to_line = similar_to_node, similar_to_line


async def prepare(name: str, run: str, args) -> None:
    store = Store.open(RESULTS / f"quality-work-{name}-{run}" / "index.sqlite3")
    try:
        texts = node_texts(store)
    finally:
        store.close()
    owner, pages = [], []
    for node, text in texts.items():
        for p in windows(text):
            owner.append(node)
            pages.append(p)
    started = time.perf_counter()
    vecs = await lab.text_vectors(f"{name}-pages", pages, args.ollama, args.model)
    print(f"{name}: {len(texts)} nodes, {len(pages)} windows, {sum(map(len, pages))} characters, "
          f"{time.perf_counter() - started:.0f} s to embed or load", flush=True)  # fmt: skip
    pm = np.stack([vecs[p] for p in pages]).astype(np.float64)
    by: dict[str, list[int]] = {}
    for j, node in enumerate(owner):
        by.setdefault(node, []).append(j)
    STATE["pm"], STATE["owner"] = pm, owner
    STATE["pv"] = {node: unit(pm[js].mean(axis=0)) for node, js in by.items()}
    STATE["pv_max"] = {node: (lambda q, m=pm[js]: float((m @ q).max())) for node, js in by.items()}


async def main_async(args) -> None:
    for name in args.corpora:
        await prepare(name, args.run, args)
        for w, agg in itertools.product(args.weights, args.agg):
            if w == 0 and agg != "mean":
                continue
            STATE.update(w=w, agg=agg)
            out = await lab.run_corpus(name, args.run, args.tasks, args)
            cells = "  ".join(f"{t}: {v['recall@10']:.3f} {v['mrr']:.3f} ({v['p50_ms']} ms)" for t, v in out.items())
            print(f"{name:20s} w={w} agg={agg}  {cells}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run")
    p.add_argument("corpora", nargs="*", default=["kha-dinh-org-notes", "kijimaD-roam-sub", "info-sub"])
    p.add_argument("--tasks", type=lambda s: set(s.split(",")), default={"node", "line"})
    p.add_argument("--weights", type=lambda s: [float(x) for x in s.split(",")], default=[0.0, 0.33, 0.5])
    p.add_argument("--agg", type=lambda s: s.split(","), default=["mean", "max"])
    p.add_argument("--max-queries", type=int, default=400)
    p.add_argument("--ollama")
    p.add_argument("--model", default="all-minilm")
    p.set_defaults(whole_text=True, text_as_section=False, words=True, section=True, one_vector=False, node=True,
                   depths=False)
    asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    main()
