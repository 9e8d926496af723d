"""Query latency of the running daemon against the numpy brute-force floor, with recall.

    nice python bench/bench_query.py [--sizes 10000,50000,100000] [--queries 200] [--dims 768]

For each size (number of chunks), builds (once, cached in bench/results/cache/) a
synthetic corpus (bench/corpus.py) indexed through the daemon's own indexer with the
in-process hash embedder, then starts the real daemon (``arcology-oracle serve``) on it
with bench/st_ollama.py (hash backend, same vectors) as its Ollama, and measures from
this process over HTTP:

* ``GET /similar?node=ID&k=10`` and ``GET /search?q=...&k=10``: p50/p95 latency;
* the physical floor: numpy brute force (float32 matrix of the same vectors, in this
  process, same run): ``M @ q``, top 100 by argpartition, sorted, for the same queries,
  timed after each block of 20 requests (see :func:`measure`);
* recall@10 of /similar against exact search: the 10 best nodes by exact cosine over
  every chunk (one per node, the query node excluded), compared with the daemon's 10;
* the daemon's peak RSS (VmHWM) after the queries, and the time of its first query
  (which loads the in-memory vector index);
* the first query right after a restart, sent as soon as ``/health`` answers, with and
  without the vector index's snapshot beside the database.

``--compare DIR`` runs only the requests, with this package's daemon and another copy's
(e.g. main's ``daemon/``, or ``git archive <commit> daemon`` unpacked) in turn, each
on its own copy of the index (so that a migration of one does not reach the other),
``--rounds`` times each, prints how many of the JSON answers differ (ids, scores,
snippets, order; one /similar?node and one /search per query; ``--ignore F,G``: but for
the results' fields F and G, new in one of them) and fails if any does; its
medians include each run's p50 over the floor of the same run. ``--embed-delay S``: the
embedder answers each request S seconds late, as one across a network does (the query
embeddings of /search). ``--long-share F``: the corpus with a share F of long sections
(bench/corpus.py; its own cached index), as people's notes have. Writes
bench/results/query.json (query-compare.json with ``--compare``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path

from _common import (
    DAEMON_SRC,
    HASH_MODEL,
    RESULTS,
    HashEmbedder,
    daemon,
    embed_server,
    index_in_process,
    machine,
    percentile,
    rss_mb,
    save,
    wait_ready,
)

import aiohttp
import numpy as np

from corpus import generate

CACHE = RESULTS / "cache"
# /similar requests between two timings of the numpy floor (see measure()).
FLOOR_BLOCK = 20
# The share of long sections in the corpus (--long-share; bench/corpus.py).
LONG_SHARE = 0.0


async def build(size: int, dims: int) -> tuple[Path, Path, dict]:
    """The corpus and database of about ``size`` chunks (built once)."""
    base = CACHE / (f"query-{size}-{dims}" + (f"-long{LONG_SHARE:g}" if LONG_SHARE else ""))
    roam, db, info = base / "roam", base / "index.sqlite3", base / "build.json"
    if info.exists():
        return roam, db, json.loads(info.read_text())
    base.mkdir(parents=True, exist_ok=True)
    counts = generate(roam, int(size * 0.885), seed=size, long_share=LONG_SHARE)
    print(f"indexing {counts} ...", file=sys.stderr)
    built = await index_in_process(roam, db, HashEmbedder(dims, remember=False))
    info.write_text(json.dumps({**counts, **built}))
    return roam, db, json.loads(info.read_text())


class Exact:
    """Brute force over the database's vectors, with the maps to apply /similar's rules."""

    def __init__(self, db: Path):
        conn = sqlite3.connect(db)
        rows = conn.execute(
            "SELECT c.id, c.hash, h.node_id, v.embedding FROM chunks c JOIN headings h ON h.id = c.heading"
            " JOIN embeddings e ON e.hash = c.hash JOIN vec_embeddings v ON v.rowid = e.id"
        ).fetchall()
        self.matrix = np.stack([np.frombuffer(r[3], "<f4") for r in rows])
        self.nodes = [r[2] for r in rows]
        self.by_node: dict[str, list[int]] = {}
        for i, r in enumerate(rows):
            self.by_node.setdefault(r[2], []).append(i)
        conn.close()

    def node_vector(self, node: str) -> np.ndarray:
        v = self.matrix[self.by_node[node]].mean(axis=0)
        return v / np.linalg.norm(v)

    def floor(self, q: np.ndarray, k: int = 100) -> float:
        """Seconds for the brute-force top-k (the physical floor of a KNN query): the
        faster of BLAS (``M @ q``, threaded) and single-threaded einsum, since on two
        busy cores BLAS threads can lose to one thread."""
        best = float("inf")
        for product in (lambda: self.matrix @ q, lambda: np.einsum("ij,j->i", self.matrix, q)):
            started = time.perf_counter()
            sims = product()
            top = np.argpartition(-sims, k)[:k]
            top[np.argsort(-sims[top])]
            best = min(best, time.perf_counter() - started)
        return best

    def floor_cpu(self, q: np.ndarray, k: int = 100) -> float:
        """CPU seconds of the single-threaded brute-force top-k (BLAS threads would add
        their spinning to the process's CPU time)."""
        started = time.thread_time()
        sims = np.einsum("ij,j->i", self.matrix, q)
        top = np.argpartition(-sims, k)[:k]
        top[np.argsort(-sims[top])]
        return time.thread_time() - started

    def knn_recall(self, queries: list[np.ndarray], k: int = 10, pool: int = 100) -> float:
        """Recall@k of the daemon's KNN (VectorIndex prefilter, then float32 re-rank of
        the best pool + margin, as Store.knn does) against exact top-k."""
        from arcology_oracle.store.vectors import VectorIndex

        index = VectorIndex()
        ids = np.arange(len(self.matrix), dtype=np.int64)
        index.load("bench", self.matrix.shape[1], len(ids), [(ids, self.matrix)])
        hits = 0
        for q in queries:
            cand = np.array([i for i, _ in index.search(q, pool + max(10, pool // 4))])
            exact_d = np.linalg.norm(self.matrix[cand] - q, axis=1)
            got = cand[np.argsort(exact_d, kind="stable")[:k]]
            want = np.argsort(-(self.matrix @ q), kind="stable")[:k]
            hits += len(set(got.tolist()) & set(want.tolist()))
        return hits / (k * len(queries))



async def timed_get(session: aiohttp.ClientSession, url: str, **params) -> tuple[float, dict]:
    started = time.perf_counter()
    async with session.get(url, params=params) as resp:
        body = await resp.json()
        if resp.status != 200:
            raise RuntimeError(f"{url} {params}: {resp.status} {body}")
    return time.perf_counter() - started, body


async def exact_similar(db: Path, dims: int, nodes: list[str]) -> dict[str, list[str]]:
    """What /similar answers with exact vector search: the daemon's own retrieval code,
    in this process, with the prefilter switched off."""
    from arcology_oracle.answers.search import similar_to_node
    from arcology_oracle.config import load_settings
    from arcology_oracle.index.service import OracleIndex
    from arcology_oracle.store.vectors import VectorIndex

    VectorIndex.exact_below = 1 << 62
    settings = load_settings(
        overrides={"roam_dir": db.parent / "roam", "db_path": db, "embed_model": HASH_MODEL, "ollama_host": "http://127.0.0.1:9"},
        environ={},
    )
    index = OracleIndex(settings, embedder=HashEmbedder(dims))
    await index.start()
    try:
        out = {}
        for n in nodes:
            _, results = await similar_to_node(index, n, 10)
            out[n] = [r.node_id for r in results]
        return out
    finally:
        await index.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(
    url: str, exact: Exact, vocabulary: list[str], queries: int, seed: int, pid: int, floor_block: int = FLOOR_BLOCK
) -> dict:
    """Sequential requests (one client, like one Emacs): /similar for random nodes,
    /search for one to three random title words. Besides wall-clock latencies, the
    daemon's CPU time per request (from /proc, all threads) and the floor's CPU time:
    their ratio hardly moves with the machine's load, the latencies do.

    The floor is timed for each ``floor_block`` /similar requests right after them, so
    both see about the same machine load. Not after every request: the floor streams the
    whole float32 matrix (61 MB at 20k) three times through the caches and wakes BLAS
    threads that spin on after they finish, so the request after it ran on cold caches
    with a core taken (at 20k on this machine, ~1 ms more daemon CPU per request).
    ``floor_block=1`` measures that way (as before)."""
    rng = random.Random(seed)
    nodes = rng.sample(sorted(exact.by_node), queries)
    texts = [" ".join(rng.sample(vocabulary, rng.randint(1, 3))) for _ in range(queries)]
    out: dict = {}
    async with aiohttp.ClientSession() as session:
        first, _ = await timed_get(session, url + "/similar", node=nodes[0], k=10)
        out["first_similar_ms"] = first * 1000
        for n in nodes[:10]:  # warm-up
            await timed_get(session, url + "/similar", node=n, k=10)
        # The floor is timed right after each block of requests (see the docstring).
        sim_times, answers, floors, full = [], {}, [], {}
        daemon_cpu, floor_cpu = cpu_seconds(pid), 0.0
        daemon_cpu_used = 0.0
        for start in range(0, len(nodes), floor_block):
            block = nodes[start : start + floor_block]
            for n in block:
                t, body = await timed_get(session, url + "/similar", node=n, k=10)
                sim_times.append(t)
                answers[n] = [r["node_id"] for r in body["results"]]
                full["similar " + n] = body
            daemon_cpu_used += cpu_seconds(pid) - daemon_cpu
            for n in block:
                q = exact.node_vector(n)
                floors.append(exact.floor(q))
                floor_cpu += exact.floor_cpu(q)
            daemon_cpu = cpu_seconds(pid)
        out["similar_cpu_ms"] = round(daemon_cpu_used / len(nodes) * 1000, 2)
        out["floor_cpu_ms"] = round(floor_cpu / len(nodes) * 1000, 2)
        search_times = []
        daemon_cpu = cpu_seconds(pid)
        for text in texts:
            t, body = await timed_get(session, url + "/search", q=text, k=10)
            search_times.append(t)
            full["search " + text] = body
        # Includes the embedder's client side (each text is a new query embedding).
        out["search_cpu_ms"] = round((cpu_seconds(pid) - daemon_cpu) / len(texts) * 1000, 2)
    out["knn_recall_at_10"] = round(exact.knn_recall([exact.node_vector(n) for n in nodes]), 4)
    out["answers"] = answers
    out["bodies"] = full  # every answer, whole: compared between two versions (--compare)
    ms = lambda xs, p: round(percentile(xs, p) * 1000, 2)  # noqa: E731
    out.update(
        similar_p50_ms=ms(sim_times, 50), similar_p95_ms=ms(sim_times, 95),
        search_p50_ms=ms(search_times, 50), search_p95_ms=ms(search_times, 95),
        numpy_floor_p50_ms=ms(floors, 50), numpy_floor_p95_ms=ms(floors, 95),
    )  # fmt: skip
    out["similar_p50_over_floor"] = round(out["similar_p50_ms"] / out["numpy_floor_p50_ms"], 2)
    return out


async def wait_health(session: aiohttp.ClientSession, url: str, timeout: float = 120) -> None:
    """Wait until the daemon at ``url`` answers ``/health`` (only that: not until it has
    indexed), polling every 20 ms."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            async with session.get(url + "/health") as resp:
                if resp.status == 200:
                    return
        except aiohttp.ClientConnectionError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError("daemon did not start")
        await asyncio.sleep(0.02)


async def first_after_start(
    roam: Path, db: Path, server_url: str, node: str, log: Path, *, snapshot: bool, src: Path | None = None
) -> dict:
    """Start the daemon, wait only until it answers ``/health``, then time one /similar
    at once: the first query after a start, as Emacs sends it when it starts with the
    daemon. ``snapshot`` False deletes the vector index's snapshot first (the state after
    an upgrade, or a crash that left it stale). ``src``: another copy of the package."""
    if not snapshot:
        Path(f"{db}-vectors").unlink(missing_ok=True)
    proc = daemon(roam, db, server_url, HASH_MODEL, log, src=src)
    try:
        async with aiohttp.ClientSession() as session:
            await wait_health(session, proc.url)
            first, body = await timed_get(session, proc.url + "/similar", node=node, k=10)
            second, _ = await timed_get(session, proc.url + "/similar", node=node, k=10)
        return {"snapshot": snapshot, "first_similar_ms": round(first * 1000, 1), "second_similar_ms": round(second * 1000, 1),
                "mode": body.get("mode"), **rss_mb(proc.pid)}  # fmt: skip
    finally:
        proc.stop()


def title_words(db: Path) -> list[str]:
    """The words of the headings' titles that /search is asked for."""
    conn = sqlite3.connect(db)
    titles = [r[0] for r in conn.execute("SELECT title FROM headings WHERE level > 0 ORDER BY id LIMIT 5000")]
    conn.close()
    return sorted({w.lower() for t in titles for w in t.split() if len(w) > 3})


def hash_embedder(size: int, dims: int, delay: float = 0.0):
    """bench/st_ollama.py's hash backend, answering each request ``delay`` seconds late."""
    return embed_server(RESULTS / "logs" / f"embed-{size}.log", "--backend", "hash", "--dims", str(dims),
                        "--delay-per-request", str(delay))  # fmt: skip


async def run_size(size: int, dims: int, queries: int, floor_block: int = FLOOR_BLOCK, embed_delay: float = 0.0) -> dict:
    roam, db, built = await build(size, dims)
    exact, vocabulary = Exact(db), title_words(db)
    logs = RESULTS / "logs"
    server = hash_embedder(size, dims, embed_delay)
    proc = daemon(roam, db, server.url, HASH_MODEL, logs / f"daemon-{size}.log")
    try:
        async with aiohttp.ClientSession() as session:
            started = time.perf_counter()
            status = await wait_ready(session, proc.url)
            ready_s = time.perf_counter() - started
        result = await measure(proc.url, exact, vocabulary, queries, seed=size, pid=proc.pid, floor_block=floor_block)
        result.update(rss_mb(proc.pid))
        proc.stop()
        # The first query right after a start: with the snapshot the stop just wrote, then
        # without one, then with it again (so both see about the same machine load).
        node = next(iter(result["answers"]))
        result["first_after_start"] = [
            await first_after_start(roam, db, server.url, node, logs / f"daemon-{size}-restart.log", snapshot=snap)
            for snap in (True, False, True)
        ]
    finally:
        proc.stop()
        server.stop()
    answers = result.pop("answers")
    result.pop("bodies")
    del exact
    want = await exact_similar(db, dims, list(answers))
    recalls = [len(set(answers[n]) & set(want[n])) / max(1, len(want[n])) for n in answers]
    result["similar_recall_at_10"] = round(float(np.mean(recalls)), 4)
    return {
        "chunks": status["chunks"], "headings": status["headings"], "files": status["files"],
        "daemon_ready_s": round(ready_s, 2), **result, "build": built,
    }  # fmt: skip


def copy_index(db: Path, to: Path) -> Path:
    """A fresh copy of the index ``db`` (its vector snapshot too) in the directory ``to``."""
    shutil.rmtree(to, ignore_errors=True)
    to.mkdir(parents=True)
    for path in db.parent.glob(db.name + "*"):
        if not path.name.endswith(".lock"):
            shutil.copy2(path, to / path.name)
    return to / db.name


async def compare(
    size: int, dims: int, queries: int, srcs: dict[str, Path], rounds: int, floor_block: int = FLOOR_BLOCK,
    embed_delay: float = 0.0, ignore: frozenset[str] = frozenset(),
) -> dict:
    """This package against another copy (``srcs``), ``rounds`` times each, interleaved
    (this, other, other, this, ...): the same queries to the real daemon of each, their
    CPU time per request and latencies; raises if any answer differs in anything (ids,
    scores, snippets, order), so a speed-up never passes for a change of results."""
    roam, db, _ = await build(size, dims)
    exact, vocabulary = Exact(db), title_words(db)
    logs = RESULTS / "logs"
    # Each copy on its own copy of the index: a migration one of them applies (a new
    # index, say) must not reach the other's runs.
    dbs = {name: copy_index(db, CACHE / f"compare-{db.parent.name}-{name}") for name in srcs}
    server = hash_embedder(size, dims, embed_delay)
    runs: dict[str, list] = {name: [] for name in srcs}
    bodies: dict[str, dict] = {}
    try:
        for i in range(rounds):
            for name in list(srcs) if i % 2 == 0 else list(srcs)[::-1]:
                proc = daemon(roam, dbs[name], server.url, HASH_MODEL, logs / f"daemon-{size}-{name}.log", src=srcs[name])
                try:
                    async with aiohttp.ClientSession() as session:
                        await wait_ready(session, proc.url)
                    r = await measure(proc.url, exact, vocabulary, queries, seed=size, pid=proc.pid, floor_block=floor_block)
                    r.update(rss_mb(proc.pid))
                finally:
                    proc.stop()
                r.pop("answers")
                got = {q: {**b, "results": [{f: v for f, v in x.items() if f not in ignore} for x in b["results"]]}
                       for q, b in r.pop("bodies").items()}  # fmt: skip
                if name in bodies and bodies[name] != got:
                    raise AssertionError(f"{name}: answers differ between two runs of the same code")
                bodies[name] = got
                r["loadavg"] = os.getloadavg()
                runs[name].append(r)
                print(f"{size} {name} round {i}: {json.dumps(r)}", file=sys.stderr)
    finally:
        server.stop()
    names = list(srcs)
    differ = [key for key in bodies[names[0]] if bodies[names[0]][key] != bodies[names[-1]].get(key)]
    print(f"{size}: {len(differ)} of {len(bodies[names[0]])} answers differ between {names}", file=sys.stderr)
    if differ:
        raise AssertionError(f"{len(differ)} answers differ between {names}, e.g. {differ[0]!r}")
    med = lambda name, key: round(statistics.median(r[key] for r in runs[name]), 2)  # noqa: E731
    keys = ("similar_cpu_ms", "search_cpu_ms", "similar_p50_ms", "similar_p95_ms", "search_p50_ms", "search_p95_ms",
            "numpy_floor_p50_ms", "floor_cpu_ms", "VmHWM")  # fmt: skip
    summary = {name: {key: med(name, key) for key in keys} for name in names}
    # Each run's p50 over the floor timed in that same run, then the median of those.
    for name in names:
        for route in ("similar", "search"):
            summary[name][f"{route}_p50_over_floor"] = round(
                statistics.median(r[f"{route}_p50_ms"] / r["numpy_floor_p50_ms"] for r in runs[name]), 2
            )
    return {"chunks": size, "identical_answers": len(bodies[names[0]]), "differing_answers": len(differ),
            "median": summary, "runs": runs}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="10000,50000,100000")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--dims", type=int, default=768)
    p.add_argument("--compare", type=Path, help="another copy of the package's daemon/ directory: only the"
                   " requests, interleaved with this one's, answers checked identical")
    p.add_argument("--rounds", type=int, default=4, help="with --compare: runs of each")
    p.add_argument("--ignore", default="", help="with --compare: the results' fields not compared (new ones)")
    p.add_argument("--floor-block", type=int, default=FLOOR_BLOCK, help="/similar requests per timing of the floor")
    p.add_argument("--embed-delay", type=float, default=0.0, help="seconds the embedder takes per request (a GPU"
                   " box across a network: a few milliseconds); 0, the default, is an embedder on this machine")
    p.add_argument("--long-share", type=float, default=0.0, help="the share of long sections (bench/corpus.py)")
    args = p.parse_args()
    global LONG_SHARE
    LONG_SHARE = args.long_share
    results = {"machine": machine(), "dims": args.dims, "queries": args.queries, "sizes": []}
    if args.compare:
        srcs = {"this": DAEMON_SRC, "compare": args.compare.resolve()}
        results["srcs"] = {k: str(v) for k, v in srcs.items()}
        for size in [int(s) for s in args.sizes.split(",")]:
            r = asyncio.run(compare(size, args.dims, args.queries, srcs, args.rounds, args.floor_block, args.embed_delay,
                                      frozenset(filter(None, args.ignore.split(",")))))
            print(json.dumps({"chunks": size, "median": r["median"]}, indent=1), file=sys.stderr)
            results["sizes"].append(r)
            save("query-compare", results)
        return
    for size in [int(s) for s in args.sizes.split(",")]:
        r = asyncio.run(run_size(size, args.dims, args.queries, args.floor_block, args.embed_delay))
        print(json.dumps({k: v for k, v in r.items() if k != "build"}), file=sys.stderr)
        results["sizes"].append(r)
        save("query", results)


if __name__ == "__main__":
    main()
