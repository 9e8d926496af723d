"""The daemon's own embedding overhead: cold ``index`` against the plain-client ceiling.

    nice python bench/bench_overhead.py [--headings 20000,100000] [--compare OLD_DAEMON_SRC]
        [--embedder precomputed|hash] [--chat-mb 10]

For each size, on a synthetic corpus (bench/corpus.py) and with bench/st_ollama.py as the
embedder (768-d vectors as JSON over loopback, as Ollama sends them; by default its
``precomputed`` backend, which costs next to nothing, as a GPU box with a small model
would: issue 30; ``hash`` was the embedder of issue 20, itself the bottleneck), in one run:

1. ``reconcile``: ``arcology-oracle index --no-embed`` on a fresh database (process start,
   reading, storing; what the daemon does before it embeds);
2. ``cold``: ``arcology-oracle index`` on a fresh database, reconcile and embed;
3. ``plain client``: the official ``ollama.AsyncClient`` embedding every distinct chunk
   text, batches of 32, two requests in flight: the embedder's ceiling as any client sees
   it. It runs before and after each cold index; their mean is that index's ceiling.

``efficiency = (reconcile_s + texts / plain_rate) / cold_s``; issue 20's goal is >= 0.85.
``daemon_texts_per_s`` (texts over the cold index's time beyond its reconcile) is printed
beside the embedder's ``plain_texts_per_s``.
``cpu_efficiency`` is the same in CPU seconds (the daemon process's, the plain client's):
on a busy machine wall-clock ratios swing with everyone else's work, CPU time much less.
``--chat-mb N`` measures the same on the org files that ``arcology-oracle import`` writes
from a generated ChatGPT export of N MB (bench/bench_import.py), issue 30's chat-log
import. ``--compare DIR`` runs the same steps with another copy of the package (e.g. a
``git worktree`` of main's ``daemon/``) interleaved with this one, so both see the same
machine load. Writes bench/results/overhead.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

import bench_import
from _common import DAEMON_SRC, HASH_MODEL, RESULTS, daemon, embed_server, machine, save, wait_ready
from corpus import generate

WORK = RESULTS / "overhead-work"
BATCH = 32
IN_FLIGHT = 2
EMBEDDERS = {
    "precomputed": ("--backend", "precomputed", "--dims", "768"),
    "hash": ("--backend", "hash", "--dims", "768"),
}


def start_embedder(name: str, log_name: str):
    """bench/st_ollama.py serving ``name`` (a key of EMBEDDERS) as HASH_MODEL."""
    return embed_server(RESULTS / "logs" / f"{log_name}.log", *EMBEDDERS[name])


def run_cli(src: Path, url: str, roam: Path, db: Path, *extra: str) -> tuple[float, float]:
    """Seconds for ``arcology-oracle index`` from ``src`` (a new process, as a user runs
    it): wall clock, and the CPU time (user + system) the process used."""
    env = {**os.environ, "PYTHONPATH": str(src), "XDG_CONFIG_HOME": str(RESULTS / "xdg-config")}
    cmd = [sys.executable, "-m", "arcology_oracle", "index", str(roam), "--db", str(db),
           "--ollama-host", url, "--embed-model", HASH_MODEL, *extra]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def chunk_texts(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return [r[0] for r in conn.execute("SELECT text FROM chunks GROUP BY hash ORDER BY min(id)")]
    finally:
        conn.close()


async def plain_client(url: str, texts: list[str]) -> tuple[float, float]:
    """Texts/s of the official client alone (batches of 32, two in flight), and the CPU
    seconds this process spent on them."""
    import httpx
    import ollama

    client = ollama.AsyncClient(host=url, timeout=httpx.Timeout(60, connect=5))
    batches = [texts[i : i + BATCH] for i in range(0, len(texts), BATCH)]
    queue = iter(batches)
    got = 0

    async def worker() -> None:
        nonlocal got
        for batch in queue:
            response = await client.embed(model=HASH_MODEL, input=batch)
            got += len(response["embeddings"])

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    await client.close()
    assert got == len(texts)
    return len(texts) / elapsed, cpu


def run_daemon(src: Path, url: str, roam: Path, db: Path) -> float:
    """Seconds from starting ``arcology-oracle serve`` on a fresh database until its
    /status shows every file read and every chunk embedded (the daemon's own cold start,
    as a user's first ``serve`` sees it)."""
    import aiohttp

    async def ready() -> None:
        async with aiohttp.ClientSession() as session:
            await wait_ready(session, proc.url)

    started = time.perf_counter()
    proc = daemon(roam, db, url, HASH_MODEL, RESULTS / "logs" / "daemon-overhead.log", src=src)
    try:
        asyncio.run(ready())
        return time.perf_counter() - started
    finally:
        proc.stop()


def fresh(db: Path) -> Path:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return db


def run_size(headings: int, srcs: dict[str, Path], url: str, rounds: int, with_daemon: bool = False) -> dict:
    """:func:`measure` on bench/corpus.py's notes of ``headings`` headings."""
    base = WORK / f"h{headings}"
    shutil.rmtree(base, ignore_errors=True)
    return measure(base, generate(base / "roam", headings, seed=headings), srcs, url, rounds, with_daemon)


def run_chat_import(megabytes: float, srcs: dict[str, Path], url: str, rounds: int, with_daemon: bool = False) -> dict:
    """:func:`measure` on the org files ``arcology-oracle import chatgpt`` writes from
    bench/bench_import.py's generated export of ``megabytes`` MB (dialogue: scenes and
    turns to embed)."""
    base = WORK / f"chat{megabytes:g}"
    shutil.rmtree(base, ignore_errors=True)
    roam, export = base / "roam", base / "conversations.json"
    roam.mkdir(parents=True)
    conversations = bench_import.generate(export, megabytes, seed=28)
    cli, env = bench_import.command(base, next(iter(srcs.values())))
    subprocess.run([*cli, "import", "chatgpt", str(export), "--roam-dir", str(roam), "--db", str(base / "import.sqlite3")],
                   env=env, check=True, capture_output=True)  # fmt: skip
    corpus = {"export_mb": megabytes, "conversations": conversations, "files": len(list(roam.rglob("*.org")))}
    return measure(base, corpus, srcs, url, rounds, with_daemon)


def measure(base: Path, corpus: dict, srcs: dict[str, Path], url: str, rounds: int, with_daemon: bool = False) -> dict:
    """Each round, for each variant, on the notes in ``base/roam``: reconcile only, then
    plain client, cold index, plain client; the cold index is compared with the mean of
    the two plain runs around it. ``with_daemon``: then the daemon's cold start too
    (``daemon_s``, ``daemon_efficiency``, against the same ceiling). ``base`` is removed
    at the end."""
    roam = base / "roam"
    out: dict = {"corpus": corpus, "variants": {}}
    # Warm the OS cache and learn the texts.
    run_cli(next(iter(srcs.values())), url, roam, fresh(base / "warm.sqlite3"), "--no-embed")
    texts = chunk_texts(base / "warm.sqlite3")
    out["texts"] = len(texts)
    rate, plain_cpu = asyncio.run(plain_client(url, texts))
    keys = ("reconcile_s", "cold_s", "plain_texts_per_s", "daemon_texts_per_s", "efficiency", "cpu_reconcile_s", "cpu_cold_s", "cpu_plain_s", "cpu_efficiency")
    for _ in range(rounds):
        for name, src in srcs.items():
            v = out["variants"].setdefault(name, {k: [] for k in keys})
            db = base / f"{name}.sqlite3"
            reconcile, cpu_reconcile = run_cli(src, url, roam, fresh(db), "--no-embed")
            cold, cpu_cold = run_cli(src, url, roam, fresh(db))
            after, after_cpu = asyncio.run(plain_client(url, texts))
            plain, cpu_plain = (rate + after) / 2, (plain_cpu + after_cpu) / 2
            rate, plain_cpu = after, after_cpu
            v["reconcile_s"].append(round(reconcile, 3))
            v["cold_s"].append(round(cold, 3))
            v["plain_texts_per_s"].append(round(plain))
            v["daemon_texts_per_s"].append(round(len(texts) / max(cold - reconcile, 1e-3)))
            v["efficiency"].append(round((reconcile + len(texts) / plain) / cold, 3))
            # The same in CPU seconds of the daemon's process and of the plain client's:
            # what each spends itself, whatever else the machine runs.
            v["cpu_reconcile_s"].append(round(cpu_reconcile, 3))
            v["cpu_cold_s"].append(round(cpu_cold, 3))
            v["cpu_plain_s"].append(round(cpu_plain, 3))
            v["cpu_efficiency"].append(round((cpu_reconcile + cpu_plain) / cpu_cold, 3))
            if with_daemon:
                served = run_daemon(src, url, roam, fresh(db))
                v.setdefault("daemon_s", []).append(round(served, 3))
                v.setdefault("daemon_efficiency", []).append(round((reconcile + len(texts) / plain) / served, 3))
            print(name, json.dumps({k: x[-1] for k, x in v.items()}), file=sys.stderr)
    for v in out["variants"].values():
        v["efficiency_median"] = statistics.median(v["efficiency"])
        v["cpu_efficiency_median"] = statistics.median(v["cpu_efficiency"])
        if "daemon_efficiency" in v:
            v["daemon_efficiency_median"] = statistics.median(v["daemon_efficiency"])
    shutil.rmtree(base, ignore_errors=True)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--headings", default="20000,100000")
    p.add_argument("--compare", type=Path, help="another copy of the package's daemon/ directory, run interleaved")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", default="overhead")
    p.add_argument("--embedder", choices=sorted(EMBEDDERS), default="precomputed")
    p.add_argument("--daemon", action="store_true", help="also the daemon's cold start (serve on a fresh database)")
    p.add_argument("--chat-mb", type=float, help="also the org files imported from a generated ChatGPT export of this size")
    args = p.parse_args()
    srcs = {"this": DAEMON_SRC}
    if args.compare:
        srcs["compare"] = args.compare.resolve()
    results: dict = {"machine": machine(), "srcs": {k: str(v) for k, v in srcs.items()}, "embedder": args.embedder, "sizes": []}
    server = start_embedder(args.embedder, "embed-overhead")
    try:
        for n in [int(x) for x in args.headings.split(",") if x]:
            r = run_size(n, srcs, server.url, args.rounds, args.daemon)
            print(json.dumps(r), file=sys.stderr)
            results["sizes"].append(r)
            save(args.out, results)
        if args.chat_mb:
            r = run_chat_import(args.chat_mb, srcs, server.url, args.rounds, args.daemon)
            print(json.dumps(r), file=sys.stderr)
            results["chat_import"] = r
            save(args.out, results)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
