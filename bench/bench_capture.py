"""What one ``/memorize`` costs on a small and on a large daily note, in one run.

    nice python bench/bench_capture.py [--captures 25] [--small-kb 40] [--large-kb 4000]

Starts the real daemon (watcher on) with bench/st_ollama.py's hash backend as its
Ollama on a roam directory of two notes: today's daily of about ``--small-kb`` KB
(headings with IDs and a paragraph each) and another note of about ``--large-kb`` KB.
It times one capture (apart: the first capture after someone else wrote the daily reads
it whole), then ``--captures`` more one after the other (each request: append, index,
answer). Then it swaps the sizes (the daily large, the other note small, so the index
holds as much in both phases and only the daily's size differs), waits until the daemon
has indexed and embedded both, and times the same again. Prints the medians and their
ratio (large / small; the goal is <= 2: a capture writes and indexes only what it adds)
and writes bench/results/capture.json.
``BENCH_DAEMON_SRC`` measures another copy of the package (see _common.py).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import shutil
import statistics
import time
import uuid
from pathlib import Path

import aiohttp

from _common import RESULTS, daemon, embed_server, machine, save, wait_ready

# After each (re)index, before timing: the WAL checkpoint of a 10k-heading rewrite and the
# watcher's debounce finish first, so they are not timed as the capture's cost.
SETTLE = 5.0
WORDS = "bread water salt flour yeast oven crumb crust proof dough rest fold shape bake cool".split()


def write_daily(path: Path, kb: int, tag: str) -> int:
    """A daily of about ``kb`` KB; returns its size in bytes."""
    parts = [f":PROPERTIES:\n:ID:       {uuid.uuid4()}\n:END:\n#+title: {path.stem}\n"]
    size, n = len(parts[0]), 0
    while size < kb * 1024:
        words = " ".join(WORDS[(n + i) % len(WORDS)] for i in range(60))
        part = f"* Entry {n} {tag}\n:PROPERTIES:\n:ID:       {uuid.uuid4()}\n:END:\nNote {n} of the {tag} day: {words}.\n"
        parts.append(part)
        size += len(part)
        n += 1
    path.write_text("".join(parts), encoding="utf-8")
    return path.stat().st_size


async def wait_indexed(session: aiohttp.ClientSession, url: str, word: str, timeout: float = 600) -> None:
    """Until ``/search`` finds ``word`` and nothing is left to index."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        async with session.get(url + "/search", params={"q": word, "k": "1"}) as resp:
            found = (await resp.json()).get("results")
        async with session.get(url + "/status") as resp:
            status = await resp.json()
        if found and not status["indexing"]["running"]:
            return
        await asyncio.sleep(0.05)
    raise TimeoutError(f"{word!r} not indexed after {timeout} s")


async def captures(session: aiohttp.ClientSession, url: str, n: int, label: str) -> list[float]:
    times = []
    for i in range(n):
        started = time.perf_counter()
        async with session.post(url + "/memorize", json={"text": f"Capture {i} on the {label} daily: ring the miller"}) as resp:
            body = await resp.json()
            if resp.status != 200 or not body.get("indexed"):
                raise RuntimeError(f"capture {i} failed: {resp.status} {body}")
        times.append(time.perf_counter() - started)
    return times


async def run(n: int, small_kb: int, large_kb: int) -> dict:
    base = RESULTS / "capture-work"
    shutil.rmtree(base, ignore_errors=True)
    roam, db = base / "roam", base / "index.sqlite3"
    daily = roam / "daily" / f"{datetime.date.today():%Y-%m-%d}.org"
    daily.parent.mkdir(parents=True)
    other = roam / "other.org"  # the rest of the notes: the index is as large in both phases
    small_size = write_daily(daily, small_kb, "smallmarker")
    write_daily(other, large_kb, "otherlarge")
    server = embed_server(RESULTS / "logs" / "embed-capture.log", "--backend", "hash", "--dims", "256")
    proc = daemon(roam, db, server.url, "bench-hash", RESULTS / "logs" / "daemon-capture.log")
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as session:
            await wait_ready(session, proc.url, timeout=300)
            await wait_indexed(session, proc.url, "smallmarker")
            await asyncio.sleep(SETTLE)
            small_first = await captures(session, proc.url, 1, "small")
            small = await captures(session, proc.url, n, "small")
            large_size = write_daily(daily, large_kb, "largemarker")
            write_daily(other, small_kb, "othersmall")
            await wait_indexed(session, proc.url, "largemarker")
            await wait_ready(session, proc.url, timeout=600)
            await asyncio.sleep(SETTLE)
            large_first = await captures(session, proc.url, 1, "large")
            large = await captures(session, proc.url, n, "large")
    finally:
        proc.stop()
        server.stop()
        shutil.rmtree(base, ignore_errors=True)
    small_ms, large_ms = statistics.median(small) * 1000, statistics.median(large) * 1000
    return {
        "captures": n, "small_bytes": small_size, "large_bytes": large_size,
        "small_median_ms": round(small_ms, 1), "large_median_ms": round(large_ms, 1),
        "small_max_ms": round(max(small) * 1000, 1), "large_max_ms": round(max(large) * 1000, 1),
        "ratio": round(large_ms / small_ms, 2),
        "small_ms": [round(t * 1000, 1) for t in small], "large_ms": [round(t * 1000, 1) for t in large],
        # The first capture after the daily was written by someone else reads it whole.
        "small_first_ms": round(small_first[0] * 1000, 1), "large_first_ms": round(large_first[0] * 1000, 1),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--captures", type=int, default=25)
    parser.add_argument("--small-kb", type=int, default=40)
    parser.add_argument("--large-kb", type=int, default=4000)
    args = parser.parse_args()
    result = asyncio.run(run(args.captures, args.small_kb, args.large_kb))
    print(
        f"capture on a {result['small_bytes'] / 1024:.0f} KB daily: {result['small_median_ms']} ms (median of "
        f"{result['captures']}); on a {result['large_bytes'] / 1e6:.1f} MB daily: {result['large_median_ms']} ms; "
        f"ratio {result['ratio']} (goal <= 2); the first capture after the daily was written elsewhere: "
        f"{result['small_first_ms']} ms and {result['large_first_ms']} ms"
    )
    save("capture", {"machine": machine(), **result})


if __name__ == "__main__":
    main()
