"""Indexing throughput: cold index, unchanged restart, and embedding through a slow fake.

    nice python bench/bench_index.py [--headings 20000] [--latency-headings 3000]
        [--delay-per-request 0.02] [--delay-per-text 0.002] [--parallel 1]
        [--parse-workers 0,1] [--out index]

``BENCH_DAEMON_SRC=/path/to/other/daemon`` measures another copy of the package (e.g. a
``git worktree`` of an older commit) with the same harness, for before/after ratios.

1. Cold index of a synthetic corpus (bench/corpus.py) with the zero-latency in-process
   hash embedder, through the daemon's own :class:`OracleIndex` (reconcile, then embed
   everything): headings/s of each phase and overall, i.e. the daemon's own cost. The
   embedder answers from memory (a warm-up index into a scratch database taught it every
   text), so it costs a dict lookup, and that memory is frozen out of the garbage
   collector's sight (``gc.freeze``); ``--parse-workers 0,1`` compares parsing in the
   writer thread with parsing in worker processes.
2. Restart on the unchanged corpus: a new OracleIndex on the same database, reconcile
   (stat only); then the same after touching every file (mtime changed, bytes not: every
   file is read and hashed, nothing re-parsed).
3. Embedding through HTTP with realistic latency: bench/st_ollama.py sleeps
   ``delay_per_request + n * delay_per_text`` per request and serves ``parallel`` at once;
   the daemon's OllamaEmbedder embeds a fresh corpus. Reports texts/s achieved against
   the fake's ceiling at the daemon's batch size (``parallel * batch / (request + batch
   * text)``) and with unlimited batches (``parallel / text``), and the batch sizes seen.

4. First of all, restart on each corpus bench/bench_query.py built and cached (three
   times each; the first may read files the OS no longer caches), e.g. 100k headings.

Writes bench/results/index.json (or ``--out``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import sys
import time
from pathlib import Path

import aiohttp

from _common import RESULTS, HashEmbedder, embed_server, index_in_process, machine, save
from corpus import generate

WORK = RESULTS / "index-work"


async def restart_reconcile(roam: Path, db: Path, embedder) -> float:
    from arcology_oracle.config import load_settings
    from arcology_oracle.index.service import OracleIndex

    settings = load_settings(
        overrides={"roam_dir": roam, "db_path": db, "embed_model": embedder.model, "ollama_host": "http://127.0.0.1:9"},
        environ={},
    )
    index = OracleIndex(settings, embedder=embedder)
    started = time.perf_counter()
    await index.start()
    report = await index.reconcile()
    elapsed = time.perf_counter() - started
    await index.close()
    assert report.indexed == 0, report
    return elapsed


async def cold(headings: int, workers: int | None) -> dict:
    base = WORK / f"cold-{headings}"
    shutil.rmtree(base, ignore_errors=True)
    counts = generate(base / "roam", headings, seed=headings)
    embedder = HashEmbedder(768)
    # Warm-up into a scratch database: the embedder learns every text's vector (and the
    # files are in the OS cache), so the timed index below pays for nothing but the daemon.
    settings = {} if workers is None else {"parse_workers": workers}
    await index_in_process(base / "roam", base / "warmup.sqlite3", embedder, **settings)
    embedder.seconds = 0.0
    # The embedder's memory holds a list of 768 floats per text: every full collection of
    # the garbage collector walked them all (87M references at 113k headings), a cost of
    # this harness, not of the daemon. Frozen, the collector leaves them (and whatever
    # else exists now) alone; what the timed index creates is collected as usual.
    gc.collect()
    gc.freeze()
    try:
        built = await index_in_process(base / "roam", base / "index.sqlite3", embedder, **settings)
    finally:
        gc.unfreeze()
    n = built["headings"]
    out = {
        **counts, **built,
        "parse_workers": workers,
        "embedder_compute_s": round(embedder.seconds, 3),
        "reconcile_headings_per_s": round(n / built["reconcile_s"]),
        "embed_chunks_per_s": round(built["chunks"] / built["embed_s"]),
        "overall_headings_per_s": round(n / built["total_s"]),
    }  # fmt: skip
    out["restart_unchanged_s"] = round(await restart_reconcile(base / "roam", base / "index.sqlite3", embedder), 3)
    now = time.time() + 5
    for path in (base / "roam").rglob("*.org"):
        os.utime(path, (now, now))
    out["restart_touched_s"] = round(await restart_reconcile(base / "roam", base / "index.sqlite3", embedder), 3)
    shutil.rmtree(base, ignore_errors=True)
    return out


async def with_latency(headings: int, per_request: float, per_text: float, parallel: int, batch: int) -> dict:
    base = WORK / f"latency-{headings}"
    shutil.rmtree(base, ignore_errors=True)
    generate(base / "roam", headings, seed=7)
    args = ["--backend", "hash", "--dims", "768", "--delay-per-request", str(per_request),
            "--delay-per-text", str(per_text), "--parallel", str(parallel)]  # fmt: skip
    server = embed_server(RESULTS / "logs" / "embed-latency.log", *args)
    try:
        from arcology_oracle.config import load_settings
        from arcology_oracle.ollama.embed import OllamaEmbedder

        settings = load_settings(overrides={"ollama_host": server.url, "embed_model": "bench-hash", "embed_batch_size": batch}, environ={})
        built = await index_in_process(base / "roam", base / "index.sqlite3", OllamaEmbedder(settings), embed_batch_size=batch, ollama_host=server.url)
        async with aiohttp.ClientSession() as session:
            async with session.get(server.url + "/_fake/stats") as resp:
                stats = await resp.json()
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)
    achieved = built["embedded"] / built["embed_s"]
    ceiling = parallel * batch / (per_request + batch * per_text)
    unlimited = parallel / per_text
    batches = stats["embed_batches"]
    return {
        "headings": built["headings"], "chunks": built["chunks"], "embed_s": round(built["embed_s"], 2),
        "delay_per_request": per_request, "delay_per_text": per_text, "parallel": parallel, "batch_size": batch,
        "texts_per_s": round(achieved, 1), "ceiling_at_batch_size": round(ceiling, 1), "ceiling_unlimited_batch": round(unlimited, 1),
        "efficiency_vs_batch_ceiling": round(achieved / ceiling, 3), "efficiency_vs_unlimited": round(achieved / unlimited, 3),
        "requests": stats["counts"].get("/api/embed", 0), "mean_batch": round(sum(batches) / max(1, len(batches)), 1),
    }  # fmt: skip


async def restart_cached(base: Path) -> dict:
    """Restart (reconcile) on an unchanged corpus that bench_query.py built and cached."""
    info = json.loads((base / "build.json").read_text())
    seconds = [await restart_reconcile(base / "roam", base / "index.sqlite3", HashEmbedder(768)) for _ in range(3)]
    return {"corpus": base.name, "files": info["files"], "headings": info["headings"], "restart_unchanged_s": [round(x, 3) for x in seconds]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--headings", default="20000", help="comma-separated sizes for the cold index")
    p.add_argument("--latency-headings", type=int, default=3000)
    p.add_argument("--delay-per-request", type=float, default=0.02)
    p.add_argument("--delay-per-text", type=float, default=0.002)
    p.add_argument("--parallel", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=32, help="the daemon's embed_batch_size (its default is 32)")
    p.add_argument("--only-cached-restart", action="store_true", help="only the restart on bench_query's cached corpora")
    p.add_argument("--out", default="index", help="results file name under bench/results/ (default: index)")
    p.add_argument("--parse-workers", default="default", help="the daemon's parse_workers for the cold index, comma-separated to compare (default: its own default)")
    args = p.parse_args()
    previous = RESULTS / f"{args.out}.json"
    results: dict = json.loads(previous.read_text()) if args.only_cached_restart and previous.exists() else {"machine": machine(), "cold": []}
    results["restart_cached"] = []
    for base in sorted((RESULTS / "cache").glob("query-*")):
        r = asyncio.run(restart_cached(base))
        print(json.dumps(r), file=sys.stderr)
        results["restart_cached"].append(r)
    save(args.out, results)
    if args.only_cached_restart:
        return
    for n in [int(x) for x in args.headings.split(",")]:
        for workers in args.parse_workers.split(","):
            r = asyncio.run(cold(n, None if workers == "default" else int(workers)))
            print(json.dumps(r), file=sys.stderr)
            results["cold"].append(r)
            save(args.out, results)
    r = asyncio.run(with_latency(args.latency_headings, args.delay_per_request, args.delay_per_text, args.parallel, args.batch_size))
    print(json.dumps(r), file=sys.stderr)
    results["latency"] = r
    save(args.out, results)


if __name__ == "__main__":
    main()
