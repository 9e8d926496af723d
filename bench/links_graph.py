"""Held-out links: does the graph signal help predict the links a note is missing?

    python bench/links_graph.py ROAM_DIR [ROAM_DIR ...] [--ollama URL --model NAME]
        [--seeds 1,2,3] [--weights 0.5,1,2] [--out NAME]

For each org-roam directory: every node's id links are shuffled and 20% of them hidden
(stochastic rounding, so a node with n links hides floor(0.2 n + u) of them, u uniform in
[0, 1): 20% in expectation whatever n). A copy of the directory is written with the
hidden links removed, target *and* description (the description would name the answer);
the other 80% stay in the notes as links. The copy is indexed in process with the
daemon's own indexer and embedder (the fake hashed bag-of-words embedder by default, or
any Ollama-compatible ``--ollama`` URL such as bench/st_ollama.py's MiniLM).

Queries: every node that lost a link. Relevant: the hidden targets that /suggest-links
may suggest at all, i.e. indexed, not the node itself nor nested in it, and not still
linked in either direction by the kept 80% (a hidden A->B with B->A kept is "already
linked"). Each query is ranked three ways by the daemon's own code
(``answers.links.link_candidates``, the ranking behind /suggest-links):

* ``text``: the text score alone (``graph_on=False``);
* ``graph``: the graph signal alone (``answers.graph.graph_scores``), same exclusions;
* ``fused``: both (``graph_on=True``), for each ``--weights`` value of ``graph_weight``.

``--cost DIR`` instead times ``/similar?node`` (``answers.search.similar_to_node``, in
process, hash embedder) on DIR with the graph off and on, alternating per query, and the
graph signal alone: its p50/p95 and the on/off ratio within the one run.

Metrics: recall@10 (averaged over queries) and MRR (first relevant, 0 beyond the top 10),
over the queries of every seed (each seed hides a different 20%).
Writes bench/results/links-graph-NAME.json and prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from _common import HashEmbedder, machine, save

from arcology_oracle.answers import graph
from arcology_oracle.answers.links import link_candidates
from arcology_oracle.answers.search import nested_nodes, similar_to_node
from arcology_oracle.config import load_settings
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.notes.files import iter_org_files
from arcology_oracle.notes.org_syntax import decode_org_bytes, split_lines
from arcology_oracle.notes.reader import read_org_bytes

ID_LINK = re.compile(r"\[\[id:([^\[\]]+?)(?:::[^\[\]]*)?\](?:\[([^\[\]]*)\])?\]")
K = 10
HIDE = 0.2


def hide_links(src: Path, dst: Path, rng: random.Random) -> dict[str, set[str]]:
    """Copy ``src`` to ``dst`` without a random 20% of each node's links; returns the
    hidden targets of each source node."""
    files: dict[str, tuple[list[str], list]] = {}
    known: set[str] = set()
    for rel, path in iter_org_files(src):
        data = path.read_bytes()
        parsed = read_org_bytes(data, rel, log_problems=False)
        files[rel] = (split_lines(decode_org_bytes(data)), parsed.headings)
        known |= {h.own_id for h in parsed.headings if h.own_id}
    owner: dict[tuple[str, int], str] = {}  # (file, line) -> node the line belongs to
    targets: dict[str, set[str]] = {}
    for rel, (lines, headings) in files.items():
        for h in headings:
            if h.node_id is None:
                continue
            for n in range(h.start_line, h.end_line + 1):
                owner[(rel, n)] = h.node_id
                for m in ID_LINK.finditer(lines[n - 1] if n <= len(lines) else ""):
                    if m.group(1) in known and m.group(1) != h.node_id:
                        targets.setdefault(h.node_id, set()).add(m.group(1))
    hidden: dict[str, set[str]] = {}
    for node in sorted(targets):
        linked = sorted(targets[node])
        rng.shuffle(linked)
        count = math.floor(HIDE * len(linked) + rng.random())
        if count:
            hidden[node] = set(linked[:count])
    if dst.exists():
        shutil.rmtree(dst)
    for rel, (lines, _) in files.items():
        out = []
        for n, line in enumerate(lines, start=1):
            drop = hidden.get(owner.get((rel, n), ""), set())
            out.append(ID_LINK.sub(lambda m: "" if m.group(1) in drop else m.group(0), line) if drop else line)
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(out) + "\n", encoding="utf-8")
    return hidden


def evaluate(store, settings, hidden: dict[str, set[str]], weights: list[float]) -> dict:
    """Rank every query three ways (see the module docstring); recall@10 and MRR."""
    runs: dict[str, list[tuple[float, float]]] = {"text": [], "graph": [], **{f"fused w={w:g}": [] for w in weights}}
    queries = 0
    for node, answers in sorted(hidden.items()):
        own = store.node(node)
        if own is None:
            continue
        linked = set()
        nested = nested_nodes(store, own)
        for n in {node} | nested:
            linked |= store.linked_nodes(n)
        relevant = (store.indexed_nodes(answers) - linked - nested) - {node}
        if not relevant:
            continue
        queries += 1
        rankings = {"text": [r.node_id for r in link_candidates(store, settings, node, K, graph_on=False)[1]]}
        excluded = {node} | nested | linked
        scores = graph.graph_scores(store, node)
        rankings["graph"] = [n for n, _ in sorted(scores.items(), key=lambda i: (-i[1], i[0])) if n not in excluded][:K]
        for w in weights:
            weighted = settings.model_copy(update={"graph_weight": w})
            rankings[f"fused w={w:g}"] = [r.node_id for r in link_candidates(store, weighted, node, K, graph_on=True)[1]]
        for name, ranking in rankings.items():
            top = ranking[:K]
            recall = len(relevant & set(top)) / len(relevant)
            rr = next((1.0 / i for i, n in enumerate(top, start=1) if n in relevant), 0.0)
            runs[name].append((recall, rr))
    return {"queries": queries, "hidden_links": sum(len(v) for v in hidden.values()), "runs": runs}


def summary(results: list[dict]) -> dict:
    """Seeds' per-query results pooled: recall@10 and MRR of each ranking."""
    runs: dict[str, list[tuple[float, float]]] = {}
    for result in results:
        for name, vals in result["runs"].items():
            runs.setdefault(name, []).extend(vals)
    return {
        "queries": sum(r["queries"] for r in results),
        "hidden_links": sum(r["hidden_links"] for r in results),
        "index_seconds": [r["index_seconds"] for r in results],
        **{
            name: {
                "recall@10": round(sum(r for r, _ in vals) / max(1, len(vals)), 4),
                "mrr": round(sum(m for _, m in vals) / max(1, len(vals)), 4),
            }
            for name, vals in runs.items()
        },
    }


async def run_corpus(roam: Path, args, seed: int, weights: list[float]) -> dict:
    rng = random.Random(f"{seed}:{roam.name}")
    work = Path(tempfile.mkdtemp(prefix="links-graph-"))
    try:
        copy = work / "roam"
        hidden = hide_links(roam, copy, rng)
        overrides = {"roam_dir": copy, "db_path": work / "index.sqlite3", "graph_similarity": False}
        embedder = None
        if args.ollama:
            overrides.update(ollama_host=args.ollama, embed_model=args.model, embed_timeout=600)
        else:
            embedder = HashEmbedder(dims=256)
        settings = load_settings(overrides=overrides, environ={})
        index = OracleIndex(settings, embedder)
        await index.start()
        try:
            started = time.perf_counter()
            await index.reconcile()
            await index.embed_pending()
            indexed = time.perf_counter() - started
            result = await index.read(lambda store: evaluate(store, settings, hidden, weights))
        finally:
            await index.close()
        result["index_seconds"] = round(indexed, 1)
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


async def measure_cost(roam: Path, samples: int, db: Path) -> dict:
    """Time /similar?node with the graph off and on (see the module docstring)."""
    settings = load_settings(overrides={"roam_dir": roam, "db_path": db}, environ={})
    index = OracleIndex(settings, HashEmbedder(dims=256))
    await index.start()
    try:
        await index.reconcile()
        await index.embed_pending()
        nodes = await index.read(_all_nodes)
        times: dict[str, list[float]] = {"off": [], "on": [], "graph_scores": []}
        variants = {"off": settings, "on": settings.model_copy(update={"graph_similarity": True})}
        for i, node in enumerate(random.Random(1).sample(nodes, min(samples, len(nodes)))):
            for name in ("off", "on") if i % 2 else ("on", "off"):
                index.settings = variants[name]
                started = time.perf_counter()
                await similar_to_node(index, node, K)
                times[name].append(time.perf_counter() - started)
            started = time.perf_counter()
            await index.read(lambda store: graph.graph_scores(store, node))
            times["graph_scores"].append(time.perf_counter() - started)
    finally:
        await index.close()
    out = {
        name: {"p50_ms": round(statistics.median(v) * 1000, 2), "p95_ms": round(sorted(v)[int(len(v) * 0.95)] * 1000, 2)}
        for name, v in times.items()
    }
    out["on_off_p50_ratio"] = round(out["on"]["p50_ms"] / out["off"]["p50_ms"], 3)
    out["nodes"], out["samples"] = len(nodes), len(times["on"])
    return out


def _all_nodes(store) -> list[str]:
    return [r[0] for r in store.conn.execute("SELECT DISTINCT own_id FROM headings WHERE own_id IS NOT NULL")]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("roam_dirs", nargs="+", type=Path)
    p.add_argument("--ollama", help="an Ollama-compatible embedding server (default: the in-process hash embedder)")
    p.add_argument("--model", default="all-minilm")
    p.add_argument("--seeds", default="1,2,3", help="one run per seed, pooled")
    p.add_argument("--weights", default="1", help="graph_weight values of the fused ranking, comma separated")
    p.add_argument("--out", default="hash")
    p.add_argument("--cost", action="store_true", help="time /similar?node with the graph off and on instead")
    p.add_argument("--samples", type=int, default=200, help="--cost: nodes to query")
    args = p.parse_args()
    if args.cost:
        work = Path(tempfile.mkdtemp(prefix="links-cost-"))
        try:
            result = asyncio.run(measure_cost(args.roam_dirs[0].resolve(), args.samples, work / "index.sqlite3"))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(result)
        save(f"links-graph-cost-{args.out}", {"machine": machine(), "roam": str(args.roam_dirs[0]), **result})
        return
    weights = [float(w) for w in args.weights.split(",")]
    results = {}
    for roam in args.roam_dirs:
        seeds = [int(s) for s in args.seeds.split(",")]
        results[roam.name] = r = summary([asyncio.run(run_corpus(roam.resolve(), args, seed, weights)) for seed in seeds])
        print(f"{roam.name}: {r['queries']} queries, {r['hidden_links']} hidden links ({len(seeds)} seeds), indexed in {r['index_seconds']} s")
        base = r["text"]["recall@10"]
        for name, m in r.items():
            if isinstance(m, dict):
                gain = f"{(m['recall@10'] / base - 1) * 100:+.1f}%" if base else "n/a"
                print(f"  {name:14} recall@10 {m['recall@10']:.4f} ({gain} vs text)  MRR {m['mrr']:.4f}")
    save(f"links-graph-{args.out}", {"machine": machine(), "embedder": args.ollama and args.model or "hash-256", "seeds": args.seeds, "corpora": results})


if __name__ == "__main__":
    main()
