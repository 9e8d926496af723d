"""Load and soak run of the real daemon: cold index of many files, then concurrent clients
while notes are edited, with a latency bound and the daemon's memory sampled throughout.

    python bench/load.py                      # 10,000 files, 50 clients for 60 s
    python bench/load.py --files 2000 --seconds 20                   # quicker
    python bench/load.py --files 100 --seconds 30 --drop-every 2     # abandoned-stream stress

What runs: the example vault plus ``--files`` generated notes (tests/corpus_tools.py);
the fake Ollama (tests/fakes/fake_ollama.py, a separate process: hashed-word embeddings,
echoing chat streamed word by word with ``--piece-ms`` per piece); the daemon
(``arcology-oracle serve``) as a subprocess. Then:

1. cold index: seconds until the first reconcile is done, and until every chunk is embedded;
2. load: ``--clients`` concurrent loops of ``/search``, ``/similar`` (node, heading and
   text), ``/status`` and streaming ``/ask`` for ``--seconds``, while one editor rewrites a
   note at a time and measures how long until the daemon finds its new word; one
   ``/ask`` in ``--drop-every`` is dropped right after its first token;
3. every 0.5 s the daemon's RSS and open file descriptors are sampled.

Pass/fail (exit status 1 on failure, with the reasons):

* no error: every answer 2xx, every stream ends with ``done``;
* every ``/search``, ``/similar`` and ``/status`` answer, and every ``/ask`` first token,
  within ``--bound-ms``; every whole ``/ask`` within ``--ask-bound-ms``;
* memory stable: the median RSS of the last fifth of the load is at most
  ``--rss-growth`` (fraction) above the median of its second fifth (after warm-up), plus
  16 MB of slack for allocator noise;
* dropped streams free what they held: once the load is over (and after the same 2 s
  warm-up at full concurrency that preceded it), the daemon holds no more connections to
  Ollama than its idle keep-alive pools keep (``--upstream-bound``, 40). A stream closed
  without closing its upstream response keeps its connection checked out for good (and
  Ollama generating); after 100 of them the chat client's pool is exhausted and every
  ``/ask`` waits. ``--drop-every 2`` makes that show within seconds.

Results go to stdout and ``bench/results/load.json`` (with the machine's load average:
the numbers mean little on a busy machine).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from _common import REPO, Process, free_port, machine, percentile, rss_mb, save  # noqa: E402 (sets sys.path)

import aiohttp  # noqa: E402

from tests.corpus_tools import Corpus, write_corpus  # noqa: E402
from tests.org_samples import EXAMPLE_QUERIES, IDS, VAULT  # noqa: E402
from tests.runners import spawn_daemon  # noqa: E402

NDJSON = {"Accept": "application/x-ndjson"}
KINDS = ("search", "similar", "status", "ask")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def fd_kinds(pid: int, daemon_port: int, ollama_port: int) -> dict[str, int]:
    """The daemon's descriptors by kind: client connections, Ollama connections (by TCP
    state), listening sockets, other sockets, files and the rest."""
    tcp: dict[str, tuple[int, int, str]] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except FileNotFoundError:
            continue
        for row in rows:
            f = row.split()
            tcp[f[9]] = (int(f[1].rsplit(":", 1)[1], 16), int(f[2].rsplit(":", 1)[1], 16), f[3])
    states = {"01": "established", "08": "close_wait", "06": "time_wait", "0A": "listen"}
    kinds: dict[str, int] = defaultdict(int)
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            local, remote, state = tcp.get(target[8:-1], (0, 0, "?"))
            state = states.get(state, state)
            if state == "listen":
                kinds["listening"] += 1
            elif local == daemon_port:
                kinds[f"client {state}"] += 1
            elif remote == ollama_port:
                kinds[f"ollama {state}"] += 1
            else:
                kinds["other socket"] += 1
        elif target.startswith("/"):
            kinds["file"] += 1
        else:
            kinds[target.split(":")[0]] += 1
    return dict(sorted(kinds.items()))


class Stats:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: list[str] = []
        self.dropped = 0

    def summary(self) -> dict:
        out = {}
        for kind, values in sorted(self.latency.items()):
            out[kind] = {
                "n": len(values),
                "p50_ms": round(percentile(values, 50) * 1000, 1),
                "p95_ms": round(percentile(values, 95) * 1000, 1),
                "p99_ms": round(percentile(values, 99) * 1000, 1),
                "max_ms": round(max(values) * 1000, 1),
            }
        return out


async def ask(session: aiohttp.ClientSession, url: str, question: str, stats: Stats, drop: bool) -> None:
    started = time.perf_counter()
    async with session.post(url + "/ask", json={"question": question, "stream": True}, headers=NDJSON) as resp:
        if resp.status != 200:
            stats.errors.append(f"/ask {resp.status}: {(await resp.text())[:200]}")
            return
        types = []
        async for raw in resp.content:
            if not raw.strip():
                continue
            event = json.loads(raw)
            types.append(event["type"])
            if event["type"] == "token" and types.count("token") == 1:
                stats.latency["ask_first_token"].append(time.perf_counter() - started)
                if drop:
                    resp.close()  # the client goes away mid-answer
                    stats.dropped += 1
                    return
            if event["type"] == "error":
                stats.errors.append(f"/ask error event: {event}")
        stats.latency["ask_whole"].append(time.perf_counter() - started)
        if not types or types[0] != "sources" or types[-1] != "done":
            stats.errors.append(f"/ask malformed stream: {types[:3]}...{types[-3:]}")


async def one(session, url: str, kind: str, rng: random.Random, stats: Stats, files: list[str], drop: bool) -> None:
    query = rng.choice(list(EXAMPLE_QUERIES))
    if kind == "ask":
        await ask(session, url, query, stats, drop)
        return
    started = time.perf_counter()
    if kind == "search":
        request = session.get(url + "/search", params={"q": query, "k": "10"})
    elif kind == "similar":
        roll = rng.random()
        if roll < 0.4:
            request = session.get(url + "/similar", params={"node": rng.choice(list(IDS.values())), "k": "10"})
        elif roll < 0.7:
            request = session.get(url + "/similar", params={"file": rng.choice(files), "line": "8", "k": "10"})
        else:
            request = session.post(url + "/similar", json={"text": query, "k": 10})
    else:
        request = session.get(url + "/status")
    async with request as resp:
        await resp.read()
        if resp.status != 200 and not (kind == "similar" and resp.status == 404):
            stats.errors.append(f"{kind} {resp.status}: {(await resp.text())[:200]}")
    stats.latency[kind].append(time.perf_counter() - started)


async def status(session, url: str) -> dict:
    async with session.get(url + "/status") as resp:
        return await resp.json()


async def wait_for(predicate, *, timeout: float, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while True:
        value = await predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met")
        await asyncio.sleep(interval)


async def editor(session, url: str, corpus: Corpus, stop: asyncio.Event, stats: Stats) -> None:
    """Rewrite one generated note at a time; measure edit -> searchable."""
    while not stop.is_set():
        rel = corpus.rng.choice(sorted(corpus.files))
        corpus.rewrite(rel)
        word, started = corpus.files[rel], time.perf_counter()

        async def found():
            async with session.get(url + "/search", params={"q": word, "k": "3"}) as resp:
                body = await resp.json()
            return any(r["file"] == f"gen/{rel}" for r in body.get("results", []))

        try:
            await wait_for(found, timeout=60, interval=0.05)
            stats.latency["edit_to_searchable"].append(time.perf_counter() - started)
        except TimeoutError:
            stats.errors.append(f"edit of gen/{rel} not searchable after 60 s")


async def sampler(pid: int, stop: asyncio.Event, samples: list[dict], started: float) -> None:
    while not stop.is_set():
        try:
            samples.append({"t": round(time.perf_counter() - started, 2), "rss_mb": rss_mb(pid)["VmRSS"], "fds": open_fds(pid)})
        except FileNotFoundError:
            return
        try:
            await asyncio.wait_for(stop.wait(), 0.5)
        except asyncio.TimeoutError:
            pass


async def run(args) -> int:
    work = Path(tempfile.mkdtemp(prefix="arcology-load-"))
    failures: list[str] = []
    result: dict = {"args": vars(args), "machine": machine()}
    try:
        roam = work / "roam"
        shutil.copytree(VAULT, roam)
        corpus = write_corpus(roam / "gen", args.files, seed=args.seed)
        expected_files = sum(1 for _ in roam.rglob("*.org"))
        config = json.dumps({"delay_per_piece": args.piece_ms / 1000})
        fake = Process([sys.executable, "-m", "tests.fakes.fake_ollama", "--port", "0", "--config", config], work / "fake.log")
        port = free_port()
        env = {"XDG_CONFIG_HOME": str(work / "config"), "XDG_DATA_HOME": str(work / "data"),
               "ARCOLOGY_ORACLE_DEBOUNCE_SECONDS": "0.3", "PYTHONPATH": str(REPO / "daemon")}  # fmt: skip
        started = time.perf_counter()
        daemon = spawn_daemon(roam_dir=roam, db_path=work / "index.sqlite3", ollama_url=fake.url,
                              log_path=work / "daemon.log", port=port, env=env)  # fmt: skip
        samples: list[dict] = []
        stop_sampling = asyncio.Event()
        connector = aiohttp.TCPConnector(limit=args.clients + 10)
        # A request that waits a minute is an error (a wedged daemon), not a slow answer.
        async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as session:
            sampling = asyncio.create_task(sampler(daemon.pid, stop_sampling, samples, started))

            async def up():
                try:
                    return await status(session, daemon.url)
                except aiohttp.ClientConnectionError:
                    return None

            await wait_for(up, timeout=60)

            async def indexed():
                st = await status(session, daemon.url)
                return st if "initial index of" in daemon.log() and st["files"] == expected_files else None

            st = await wait_for(indexed, timeout=3600, interval=0.2)
            index_s = time.perf_counter() - started

            async def embedded():
                st = await status(session, daemon.url)
                return st if st["pending"] == 0 and not st["indexing"]["running"] else None

            st = await wait_for(embedded, timeout=3600, interval=0.2)
            embed_s = time.perf_counter() - started
            result["cold"] = {
                "files": st["files"], "headings": st["headings"], "chunks": st["chunks"],
                "index_s": round(index_s, 1), "index_and_embed_s": round(embed_s, 1),
                "rss_mb": rss_mb(daemon.pid),
            }  # fmt: skip
            print(f"cold index: {st['files']} files, {st['headings']} headings, {st['chunks']} chunks: "
                  f"indexed in {index_s:.1f} s, embedded by {embed_s:.1f} s", flush=True)  # fmt: skip

            files = sorted(f"gen/{rel}" for rel in corpus.files)
            loop = asyncio.get_running_loop()

            async def warm_then_count_fds() -> int:
                """Fill the connection pools (ours, the daemon's to Ollama) at full
                concurrency, without drops, then count the daemon's descriptors."""
                until = loop.time() + 2.0
                rng = random.Random(args.seed)

                async def loop_once(i: int) -> None:
                    while loop.time() < until:
                        try:
                            await one(session, daemon.url, KINDS[i % 4], rng, Stats(), files, False)
                        except Exception:  # noqa: BLE001 - the load phase counts errors
                            return

                await asyncio.gather(*(loop_once(i) for i in range(args.clients)))
                return open_fds(daemon.pid)

            # A serial pass first: the service time of each kind without queueing.
            serial = Stats()
            rng = random.Random(args.seed)
            for i in range(40):
                await one(session, daemon.url, KINDS[i % 4], rng, serial, files, False)
            result["serial"] = serial.summary()
            fds_before = await warm_then_count_fds()
            ollama_port = int(fake.url.rsplit(":", 1)[1])
            kinds_before = fd_kinds(daemon.pid, port, ollama_port)

            stats = Stats()
            deadline = loop.time() + args.seconds
            load_started = len(samples)
            stop_editing = asyncio.Event()
            edits = asyncio.create_task(editor(session, daemon.url, corpus, stop_editing, stats))
            asks = 0

            async def client(i: int) -> None:
                nonlocal asks
                rng = random.Random(args.seed * 1000 + i)
                n = 0
                while loop.time() < deadline:
                    kind = KINDS[(i + n) % 4]
                    n += 1
                    drop = False
                    if kind == "ask":
                        asks += 1
                        drop = asks % args.drop_every == 0
                    try:
                        await one(session, daemon.url, kind, rng, stats, files, drop)
                    except Exception as exc:  # noqa: BLE001 - every failure is counted
                        stats.errors.append(f"{kind}: {type(exc).__name__}: {exc}")

            await asyncio.gather(*(client(i) for i in range(args.clients)))
            stop_editing.set()
            await edits
            load_samples = samples[load_started:]

            await wait_for(embedded, timeout=600, interval=0.2)
            # Dropped streams must not hold sockets: after the same warm-up as before
            # the load, the daemon has no more descriptors open than it had then.
            fds_after = await warm_then_count_fds()
            kinds_after = fd_kinds(daemon.pid, port, ollama_port)
            result["fds_by_kind"] = {"before": kinds_before, "after": kinds_after}
            upstream = sum(n for kind, n in kinds_after.items() if kind.startswith("ollama"))
            if upstream > args.upstream_bound:
                failures.append(
                    f"{upstream} connections to Ollama after the load, more than its idle pools keep "
                    f"({args.upstream_bound}): streams were abandoned without closing their connection"
                )
            stop_sampling.set()
            await sampling

        daemon.stop()
        fake.stop()

        summary = stats.summary()
        total = sum(v["n"] for k, v in summary.items() if k in ("search", "similar", "status", "ask_first_token"))
        result["load"] = {
            "seconds": args.seconds, "clients": args.clients, "requests": total,
            "throughput_rps": round(total / args.seconds, 1), "dropped_streams": stats.dropped,
            "latency": summary, "errors": stats.errors[:20], "error_count": len(stats.errors),
            "fds_before": fds_before, "fds_after": fds_after,
        }  # fmt: skip
        rss = [s["rss_mb"] for s in load_samples]
        fifth = max(1, len(rss) // 5)
        early, late = percentile(rss[fifth : 2 * fifth], 50), percentile(rss[-fifth:], 50)
        result["memory"] = {
            "rss_mb_load_start": rss[0] if rss else None, "rss_mb_second_fifth_median": early,
            "rss_mb_last_fifth_median": late, "rss_mb_max": max(rss) if rss else None,
            "samples": samples,
        }  # fmt: skip

        if stats.errors:
            failures.append(f"{len(stats.errors)} errors, e.g. {stats.errors[:3]}")
        for kind in ("search", "similar", "status", "ask_first_token"):
            if kind in summary and summary[kind]["max_ms"] > args.bound_ms:
                failures.append(f"{kind}: slowest {summary[kind]['max_ms']} ms > bound {args.bound_ms} ms")
        if "ask_whole" in summary and summary["ask_whole"]["max_ms"] > args.ask_bound_ms:
            failures.append(f"ask_whole: slowest {summary['ask_whole']['max_ms']} ms > bound {args.ask_bound_ms} ms")
        if late > early * (1 + args.rss_growth) + 16:
            failures.append(f"RSS grew from {early:.0f} MB to {late:.0f} MB during the load")
        result["failures"] = failures

        print(f"load: {args.clients} clients for {args.seconds} s: {total} requests ({total / args.seconds:.0f}/s), "
              f"{stats.dropped} streams dropped, {len(stats.errors)} errors")  # fmt: skip
        print("serial (one client): " + ", ".join(f"{k} p50 {v['p50_ms']} ms" for k, v in result["serial"].items()))
        print(f"{'kind':<20} {'n':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
        for kind, row in summary.items():
            print(f"{kind:<20} {row['n']:>6} {row['p50_ms']:>8} {row['p95_ms']:>8} {row['p99_ms']:>8} {row['max_ms']:>8}")
        print(f"RSS: {rss[0] if rss else 0:.0f} MB at load start, median {early:.0f} MB after warm-up, "
              f"{late:.0f} MB at the end, max {max(rss) if rss else 0:.0f} MB; "
              f"descriptors {fds_before} before, {fds_after} after")  # fmt: skip
        print("PASS" if not failures else "FAIL:\n  " + "\n  ".join(failures))
        save(args.out, result)
        return 1 if failures else 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"work directory kept: {work}", file=sys.stderr)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=10_000, help="generated notes besides the example vault (default 10000)")
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--bound-ms", type=float, default=5000, help="bound on every non-/ask answer and /ask first token")
    p.add_argument("--ask-bound-ms", type=float, default=8000, help="bound on every whole /ask stream")
    p.add_argument("--rss-growth", type=float, default=0.10, help="allowed RSS growth (fraction) over the load")
    p.add_argument("--piece-ms", type=float, default=5, help="fake model: milliseconds per streamed piece")
    p.add_argument("--drop-every", type=int, default=10, help="drop one /ask stream in this many")
    p.add_argument("--upstream-bound", type=int, default=40,
                   help="most connections to Ollama allowed once the load is over: the idle keep-alive "
                        "pools of the daemon's two Ollama clients (embedder, chat), 20 each (httpx default)")  # fmt: skip
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="load", help="results name: bench/results/NAME.json")
    p.add_argument("--keep", action="store_true", help="keep the work directory (vault, database, logs)")
    return asyncio.run(run(p.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
