"""Where a request's CPU time goes in the running daemon: py-spy on /similar and /search.

    nice python bench/profile_query.py [--size 20000] [--queries 300] [--rate 250]

Starts the real daemon on bench_query.py's cached corpus of ``--size`` chunks (built the
first time), warms it up, then for each route attaches ``py-spy record --pid --threads``
(the ``bench`` extra) while ``--queries`` sequential requests run (/similar?node for random
nodes, /search for one to three title words, as bench_query.py sends them). Each CPU
sample is put in one part by the innermost frame that names one (see ``PARTS``): HTTP
(aiohttp and the routes), JSON, SQL reads (the store), the in-memory vector index, keyword
candidates, graph, re-ranking, embedding the query; the rest is "other" (the event loop,
threads, the answers' own glue). Samples whose innermost frame waits (``WAITING``: a pool thread waiting for work, a
condition, the event loop in epoll, its wake-up, the watcher's inotify thread) are left out. The
milliseconds include py-spy's own slowing of the daemon; read the shares. A second table gives, for the answer-level steps, the
share of samples with that step anywhere in the stack (its SQL included). Raw stacks go to
bench/results/profile-query-<route>.raw.

Before py-spy attaches, the same requests run once more unsampled, and each thread's CPU
time is read from /proc (:func:`thread_cpu`): the event loop's thread (where aiohttp, the
middlewares, the handlers and the JSON encoding run; for /search also the query
embedding's HTTP client) against the reader threads and the rest. Read the HTTP share
from that line, not from the samples: py-spy's samples gave the event loop's thread about
three times its share of CPU time at 20k (BENCHMARKS.md, issue 30, fourth round).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

import bench_query
from _common import HASH_MODEL, RESULTS, daemon, embed_server, wait_ready

# Innermost frames of a thread that waits (for work, a lock, the GIL) rather than runs:
# py-spy's idle detection misses these, so they are counted apart, not as CPU.
WAITING = r"^(EpollSelector\.select|_worker \(concurrent/futures/thread|Condition\.wait|.*_write_to_self|InotifyFD\.)"
# (part, pattern on a frame "function (file:line)"), tried from the innermost frame out.
PARTS = [
    ("JSON", r"\((?:json/|.*orjson)"),
    ("vector index", r"arcology_oracle/store/vector(s|_codes)\.py"),
    ("SQL reads", r"arcology_oracle/store/"),
    ("keyword candidates", r"^(_keyword_candidates|frequent_words\w*) "),
    ("graph", r"arcology_oracle/answers/graph\.py"),
    ("re-ranking", r"^(_rerank_by_words|_rescore_by_note) |answers/(relevance|search_ranking|fusion)\.py"),
    ("query embedding", r"arcology_oracle/ollama/|ollama/_client|httpx/"),
    ("HTTP", r"aiohttp/|arcology_oracle/http/"),
]
STEPS = [
    ("keyword candidates", r"^_keyword_candidates "),
    ("word re-ranking", r"^_rerank_by_words "),
    ("note re-scoring", r"^_rescore_by_note "),
    ("graph", r"arcology_oracle/answers/graph\.py"),
    ("vector search (knn)", r"\bknn\w* \(|store/vectors\.py"),
    ("whole answer (answers/)", r"arcology_oracle/answers/"),
    ("HTTP handler (http/)", r"arcology_oracle/http/"),
]


def summarise(raw: Path, requests: int, rate: int) -> str:
    parts: collections.Counter = collections.Counter()
    steps: collections.Counter = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        frames = [f for f in stack.split(";") if not f.startswith(("process ", "thread "))]
        if frames and re.search(WAITING, frames[-1]):
            parts["(waiting, not counted)"] += n
            continue
        total += n
        part = next((name for f in reversed(frames) for name, pat in PARTS if re.search(pat, f)), "other")
        parts[part] += n
        for name, pat in STEPS:
            if any(re.search(pat, f) for f in frames):
                steps[name] += n
    ms = lambda n: n / rate / requests * 1000  # noqa: E731
    lines = [f"{total} samples at {rate} Hz over {requests} requests: {ms(total):.2f} ms of CPU per request"]
    lines += [f"  {name:<20} {100 * n / total:5.1f}%  {ms(n):6.2f} ms" for name, n in parts.most_common()
              if not name.startswith("(")]  # fmt: skip
    lines.append(f"  (samples of waiting threads left out: {parts['(waiting, not counted)']})")
    lines.append("  with this step in the stack (inclusive):")
    lines += [f"  {name:<26} {100 * steps[name] / total:5.1f}%  {ms(steps[name]):6.2f} ms" for name, _ in STEPS]
    return "\n".join(lines)


def thread_cpu(pid: int) -> tuple[float, float]:
    """CPU seconds (user + system) so far of process ``pid``'s main thread (the event
    loop's) and of all its other threads together (Linux /proc)."""
    main = other = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
        seconds = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        if task.name == str(pid):
            main += seconds
        else:
            other += seconds
    return main, other


async def run(url: str, requests: list[tuple[str, dict]]) -> None:
    async with aiohttp.ClientSession() as session:
        for path, params in requests:
            async with session.get(url + path, params=params) as resp:
                await resp.read()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", type=int, default=20000)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    args = p.parse_args()
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    roam, db, _ = asyncio.run(bench_query.build(args.size, 768))
    exact, vocabulary = bench_query.Exact(db), bench_query.title_words(db)
    rng = random.Random(args.size)
    nodes = rng.sample(sorted(exact.by_node), min(args.queries, len(exact.by_node)))
    texts = [" ".join(rng.sample(vocabulary, rng.randint(1, 3))) for _ in range(args.queries)]
    # Other nodes and texts for the unsampled pass (the daemon keeps recent query vectors:
    # the same texts again would leave the query embedding out of the profile).
    others = sorted(set(exact.by_node) - set(nodes))
    spare_nodes = rng.sample(others, min(args.queries, len(others)))
    spare_texts = [" ".join(rng.sample(vocabulary, rng.randint(1, 3))) for _ in range(args.queries)]
    del exact
    routes = {
        "similar": [("/similar", {"node": n, "k": "10"}) for n in nodes],
        "search": [("/search", {"q": t, "k": "10"}) for t in texts],
    }
    spare = {
        "similar": [("/similar", {"node": n, "k": "10"}) for n in spare_nodes],
        "search": [("/search", {"q": t, "k": "10"}) for t in spare_texts if t not in set(texts)],
    }
    logs = RESULTS / "logs"
    server = embed_server(logs / "embed-profile-query.log", "--backend", "hash", "--dims", "768")
    proc = daemon(roam, db, server.url, HASH_MODEL, logs / "daemon-profile-query.log")
    try:

        async def ready() -> None:
            async with aiohttp.ClientSession() as session:
                await wait_ready(session, proc.url)

        asyncio.run(ready())
        for route, requests in routes.items():
            asyncio.run(run(proc.url, requests[:20]))  # warm-up
            before = thread_cpu(proc.pid)
            asyncio.run(run(proc.url, spare[route]))  # unsampled: each thread's CPU time
            after = thread_cpu(proc.pid)
            loop_ms, other_ms = ((a - b) / len(spare[route]) * 1000 for a, b in zip(after, before))
            raw = RESULTS / f"profile-query-{route}.raw"
            spy = subprocess.Popen([py_spy, "record", "--pid", str(proc.pid), "--threads", "-r", str(args.rate),
                                    "-f", "raw", "-o", str(raw)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
            time.sleep(1.0)  # py-spy attaches (not a test: a benchmark's start-up)
            started = time.perf_counter()
            asyncio.run(run(proc.url, requests))
            seconds = time.perf_counter() - started
            spy.send_signal(signal.SIGINT)
            spy.wait(timeout=60)
            print(f"/{route}: {len(requests)} requests in {seconds:.2f} s ({seconds / len(requests) * 1000:.2f} ms each, wall)")
            print(f"  unsampled, from /proc: event-loop thread {loop_ms:.2f} ms of CPU per request "
                  f"({100 * loop_ms / max(loop_ms + other_ms, 1e-9):.1f}%), other threads {other_ms:.2f} ms")
            print(summarise(raw, len(requests), args.rate))
    finally:
        proc.stop()
        server.stop()


if __name__ == "__main__":
    main()
