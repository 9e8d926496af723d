"""Save-to-searchable latency of one-heading edits through the running daemon.

    nice python bench/bench_live.py [--headings 10000] [--edits 40]
        [--delay-per-request 0] [--delay-per-text 0]

Indexes a synthetic corpus (bench/corpus.py; in process, hash embedder), starts the real
daemon on it (watcher on, default debounce) with bench/st_ollama.py as its Ollama, then
edits one heading at a time: a new sentence with a unique word is written into the body
of a random heading of a random file (the file rewritten in place, as an editor saves).
For each edit it records, from the write:

* ``keyword``: when ``/search?q=WORD`` first returns that heading (indexed, FTS);
* ``searchable``: when, in addition, ``/status`` shows nothing pending (the heading's new
  chunk exists once keyword search finds it, so nothing pending means its vector is
  stored and vector search and /similar see it too);
* how many texts the daemon sent to the embedder for the edit (from the server's /stats,
  less the one query embedding of the unique word that /search asked for).

Edits are sequential, each waiting for the previous to be fully embedded. Polls every
10 ms. Writes bench/results/live.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import shutil
import sys
import time
from pathlib import Path

import aiohttp

from _common import (
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
from corpus import generate

HEADING = re.compile(r"^(\*+) (.*)$")


def edit(path: Path, rng: random.Random, word: str) -> tuple[str, int]:
    """Add a sentence with ``word`` to the body of a random heading; returns its title
    and line."""
    lines = path.read_text(encoding="utf-8").split("\n")
    heads = [i for i, line in enumerate(lines) if HEADING.match(line)]
    i = rng.choice(heads)
    j = i + 1
    if j < len(lines) and lines[j] == ":PROPERTIES:":
        while lines[j] != ":END:":
            j += 1
        j += 1
    lines.insert(j, f"An edit mentions {word} here.")
    path.write_text("\n".join(lines), encoding="utf-8")
    title = HEADING.match(lines[i]).group(2)  # type: ignore[union-attr]
    return title, i + 1


async def get(session: aiohttp.ClientSession, url: str, **params) -> dict:
    async with session.get(url, params=params) as resp:
        return await resp.json()


async def run(headings: int, edits: int, per_request: float, per_text: float) -> dict:
    base = RESULTS / "live-work"
    shutil.rmtree(base, ignore_errors=True)
    roam, db = base / "roam", base / "index.sqlite3"
    generate(roam, headings, seed=11)
    await index_in_process(roam, db, HashEmbedder(768))
    server = embed_server(
        RESULTS / "logs" / "embed-live.log", "--backend", "hash", "--dims", "768",
        "--delay-per-request", str(per_request), "--delay-per-text", str(per_text),
    )  # fmt: skip
    proc = daemon(roam, db, server.url, HASH_MODEL, RESULTS / "logs" / "daemon-live.log")
    rng = random.Random(5)
    files = sorted(roam.rglob("*.org"))
    keyword, searchable, texts = [], [], []
    try:
        async with aiohttp.ClientSession() as session:
            await wait_ready(session, proc.url)
            await asyncio.sleep(1.0)  # let the watcher settle
            for n in range(edits):
                async with session.get(server.url + "/_fake/stats") as resp:
                    before = (await resp.json())["embed_texts_total"]
                word = f"zq{n}x{rng.randrange(10**6)}"
                path = rng.choice(files)
                started = time.perf_counter()
                _, line = edit(path, rng, word)
                rel = path.relative_to(roam).as_posix()
                t_keyword = None
                while True:
                    body = await get(session, proc.url + "/search", q=word, k=5)
                    found = any(r["file"] == rel and r["line"] == line for r in body["results"])
                    now = time.perf_counter() - started
                    if found and t_keyword is None:
                        t_keyword = now
                    if found:  # indexed: its new chunk exists, so pending == 0 means embedded
                        status = await get(session, proc.url + "/status")
                        if status["pending"] == 0:
                            break
                    if now > 30:
                        status = await get(session, proc.url + "/status")
                        raise TimeoutError(
                            f"edit {n} of {rel}:{line} not searchable after 30 s: {body}, pending {status['pending']}"
                        )
                    await asyncio.sleep(0.01)
                keyword.append(t_keyword)
                searchable.append(time.perf_counter() - started)
                async with session.get(server.url + "/_fake/stats") as resp:
                    # Less the one embedding of the search word (the daemon caches it).
                    texts.append((await resp.json())["embed_texts_total"] - before - 1)
            memory = rss_mb(proc.pid)
            status = await get(session, proc.url + "/status")
    finally:
        proc.stop()
        server.stop()
        shutil.rmtree(base, ignore_errors=True)
    ms = lambda xs, p: round(percentile(xs, p) * 1000, 1)  # noqa: E731
    return {
        "headings": status["headings"], "chunks": status["chunks"], "edits": edits,
        "delay_per_request": per_request, "delay_per_text": per_text,
        "keyword_p50_ms": ms(keyword, 50), "keyword_p95_ms": ms(keyword, 95),
        "searchable_p50_ms": ms(searchable, 50), "searchable_p95_ms": ms(searchable, 95),
        "texts_per_edit_mean": sum(texts) / len(texts), "texts_per_edit_max": max(texts),
        "daemon_rss_mb": memory,
    }  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--headings", type=int, default=10000)
    p.add_argument("--edits", type=int, default=40)
    p.add_argument("--delay-per-request", type=float, default=0.0)
    p.add_argument("--delay-per-text", type=float, default=0.0)
    args = p.parse_args()
    r = asyncio.run(run(args.headings, args.edits, args.delay_per_request, args.delay_per_text))
    print(json.dumps(r), file=sys.stderr)
    save("live", {"machine": machine(), **r})


if __name__ == "__main__":
    main()
