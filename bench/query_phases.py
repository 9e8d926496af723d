"""Where ``/similar?node=``'s CPU goes, step by step, in process: no HTTP, no sampling.

    python bench/query_phases.py [--size 20000] [--queries 300] [--long-share 0.06]

Opens the index bench_query.py built for ``--size`` chunks (built the first time; only
read here), warms it up with 20 queries, then runs ``answers.search.similar_node`` for
``--queries`` random nodes on one store and reads the thread's CPU time around each step
of the answer (the functions in ``STEPS``, found by module attribute; one an older copy
of the package lacks is left out). A step's time is
its own: a step called inside another (``note_texts`` inside the word re-ranking, say) is
taken out of the outer one, so the steps and "the rest" add up to the whole. Steadier
than py-spy's samples (``profile_query.py``) for comparing two versions of one step;
blind to HTTP, JSON and the event loop, which ``profile_query.py`` measures.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections import Counter

import bench_query
from _common import HASH_MODEL

from arcology_oracle.answers import graph, mentions, relevance, retrieval, search, similarity, written
from arcology_oracle.config import load_settings
from arcology_oracle.store import Store
from arcology_oracle.store.links import LinkGraph
from arcology_oracle.store.search import Search

# (label, owner, attribute): the steps of similar_node, timed where they are looked up.
STEPS = [
    ("the query note's vector and words", search, "node_query"),
    ("nearest vectors (in-memory index, exact re-scoring)", similarity, "vector_hits"),
    ("notes' mean vectors", similarity, "_rescore_by_note"),
    ("keyword candidates", similarity, "_keyword_candidates"),
    ("candidates' texts", Search, "note_texts"),
    ("scratch BM25 of the candidates", similarity, "bm25_scores"),
    ("result rows and snippets", similarity, "to_results"),
    ("result rows and snippets", retrieval, "finished"),  # the snippets of the results kept
    ("graph scores", graph, "graph_scores"),
    ("graph fusion", graph, "fuse"),
    ("heading owners and answers", LinkGraph, "owners_and_answers"),
    ("notes written nearby", written, "nearness"),
    ("notes the query names", mentions, "named"),
    ("calibrated scores", relevance, "rescore"),
]


class StepClock:
    """Wraps each step so that its own CPU time (minus the wrapped steps inside it) adds
    up under its label."""

    def __init__(self) -> None:
        self.own: Counter[str] = Counter()
        self._stack: list[list[float]] = []  # [started, time of the steps inside]

    def wrap(self, label: str, owner, name: str) -> None:
        inner = getattr(owner, name, None)
        if inner is None:  # an older copy of the package (BENCH_DAEMON_SRC) without this step
            return

        def timed(*args, **kwargs):
            self._stack.append([time.thread_time(), 0.0])
            try:
                return inner(*args, **kwargs)
            finally:
                started, nested = self._stack.pop()
                spent = time.thread_time() - started
                self.own[label] += spent - nested
                if self._stack:
                    self._stack[-1][1] += spent

        setattr(owner, name, timed)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", type=int, default=20000)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--dims", type=int, default=768)
    p.add_argument("--long-share", type=float, default=0.0, help="the corpus with long sections (bench_query.py)")
    args = p.parse_args()
    bench_query.LONG_SHARE = args.long_share
    roam, db, _ = asyncio.run(bench_query.build(args.size, args.dims))
    settings = load_settings(overrides={"roam_dir": roam, "db_path": db, "embed_model": HASH_MODEL}, environ={})
    store = Store.open(db)  # a plain store: reads only (the model's vectors stay, whatever the settings)
    clock = StepClock()
    for label, owner, name in STEPS:
        clock.wrap(label, owner, name)
    try:
        nodes = [r[0] for r in store.conn.execute("SELECT DISTINCT node_id FROM headings WHERE node_id IS NOT NULL ORDER BY 1")]
        sample = random.Random(1).sample(nodes, args.queries + 20)
        for node in sample[:20]:
            search.similar_node(store, settings, node, 10)
        clock.own.clear()
        started = time.thread_time()
        for node in sample[20:]:
            search.similar_node(store, settings, node, 10)
        whole = (time.thread_time() - started) / args.queries * 1000
    finally:
        store.close()
    print(f"similar_node at {args.size} chunks: {whole:.2f} ms of CPU a query ({args.queries} random nodes)")
    rest = whole - sum(clock.own.values()) / args.queries * 1000
    for label, seconds in [*clock.own.most_common(), ("the rest", rest / 1000 * args.queries)]:
        ms = seconds / args.queries * 1000
        print(f"  {label:55s} {ms:6.3f} ms  {ms / whole:6.1%}")


if __name__ == "__main__":
    main()
