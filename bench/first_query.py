"""The first /similar after a start, and the next ones, against copies of the package in
turn, with the vector snapshot (and the database) in or out of the OS's page cache.

    nice python bench/first_query.py SRC [SRC ...] [--size 1000000] [--rounds 3]
        [--cache warm|snapshot|all] [--then 100]

Each SRC is a directory holding a copy of the ``arcology_oracle`` package (e.g. ``git
archive <rev> daemon | tar -x -C /tmp/base``, then ``/tmp/base/daemon``). Uses
bench_query.py's cached corpus of ``--size`` chunks (built by ``bench_query.py --sizes``
first). Each start: the daemon on it with its snapshot, /health awaited (only), then one
/similar timed at once (the first query, as Emacs sends it when it starts with the
daemon), then ``--then`` more for other nodes in turn (how fast it warms up: their p50,
p95 and the daemon's CPU per request). Before each start, ``--cache snapshot`` drops the
snapshot file's pages from the page cache (``posix_fadvise(DONTNEED)``, no root needed:
the state after a reboot, or after other programs pushed it out), ``all`` the
database's too, ``warm`` nothing. Rounds alternate the sources, so they see about the
same machine. Prints one line per start.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import sys
from pathlib import Path

import aiohttp
import numpy as np
from bench_query import HASH_MODEL, cpu_seconds, timed_get, wait_health
from _common import RESULTS, daemon, embed_server


def drop_from_page_cache(path: Path) -> None:
    """Ask the kernel to forget ``path``'s cached pages (clean ones go at once)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


async def main_async(args) -> None:
    cache = RESULTS / "cache" / f"query-{args.size}-768"
    roam, db = cache / "roam", cache / "index.sqlite3"
    if not db.exists():
        sys.exit(f"no cached corpus at {cache}: run bench_query.py --sizes {args.size} first")
    conn = sqlite3.connect(db)
    nodes = [r[0] for r in conn.execute("SELECT own_id FROM headings WHERE own_id IS NOT NULL LIMIT ? OFFSET 5000",
                                        (args.then + 1,))]  # fmt: skip
    conn.close()
    dropped = {"warm": [], "snapshot": [Path(f"{db}-vectors")], "all": [Path(f"{db}-vectors"), db]}[args.cache]
    server = embed_server(RESULTS / "logs" / "embed-first-query.log", "--backend", "hash", "--dims", "768")
    try:
        for _ in range(args.rounds):
            for src in args.srcs:
                for path in dropped:
                    drop_from_page_cache(path)
                print(f"{src}  {json.dumps(await one_start(roam, db, server.url, nodes, Path(src)))}", flush=True)
    finally:
        server.stop()


async def one_start(roam: Path, db: Path, embedder_url: str, nodes: list[str], src: Path) -> dict:
    """Start the daemon of ``src``, then /similar for each of ``nodes`` in turn."""
    proc = daemon(roam, db, embedder_url, HASH_MODEL, RESULTS / "logs" / "daemon-first-query.log", src=src)
    try:
        async with aiohttp.ClientSession() as session:
            await wait_health(session, proc.url)
            first, _ = await timed_get(session, proc.url + "/similar", node=nodes[0], k=10)
            cpu = cpu_seconds(proc.pid)
            then = [(await timed_get(session, proc.url + "/similar", node=node, k=10))[0] for node in nodes[1:]]
            cpu = cpu_seconds(proc.pid) - cpu
    finally:
        proc.stop()
    out = {"first_ms": round(first * 1000, 1)}
    if then:
        out.update(then_p50_ms=round(float(np.percentile(then, 50)) * 1000, 1),
                   then_p95_ms=round(float(np.percentile(then, 95)) * 1000, 1),
                   then_cpu_ms=round(cpu / len(then) * 1000, 2))  # fmt: skip
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("srcs", nargs="+", help="directories holding a copy of the arcology_oracle package")
    p.add_argument("--size", type=int, default=1_000_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--cache", choices=("warm", "snapshot", "all"), default="snapshot")
    p.add_argument("--then", type=int, default=100, help="queries timed after the first (other nodes)")
    asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    main()
