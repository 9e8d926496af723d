"""Issues 20 and 30's goals, each measured against its reference in the same run, in one command.

    nice python bench/goals.py [--overhead-headings 20000,100000] [--query-sizes 20000,100000]
        [--queries 200] [--live-headings 10000] [--edits 30] [--chat-mb 10] [--compare OLD_DAEMON_SRC]

100,000 is in the defaults; 1,000,000 (issue 30) is only measured when named in
``--overhead-headings`` or ``--query-sizes`` (hours on a 2-core machine: see BENCHMARKS.md).

Runs, in turn (see each script's docstring for what it does):

* st_ollama.py --measure: the embedder alone through the plain official client (goal
  >= 3,000 texts/s: fast enough that the daemon, not the embedder, is measured);
* bench_overhead.py: cold ``index`` against the plain official client through the same
  Ollama-API embedder -> ``efficiency`` (goal >= 0.85 at each size), with the embedder's
  rate printed beside the daemon's, and the same for the daemon's own cold start; the
  embedder is bench/st_ollama.py's ``precomputed``
  backend (``--embedder``); and the same for the org files ``arcology-oracle import``
  writes from a generated ChatGPT export of ``--chat-mb`` MB (issue 30's chat-log import);
* bench_query.py: /similar and /search over HTTP against the numpy brute-force floor timed
  right after each block of requests, recall@10 against exact search, peak RSS, and the
  first /similar right after a start (goals: p50 <= 3x the floor at 20k and <= 1x beyond
  (issue 30), p95 <= 2x p50, recall >= 0.99, first query <= 200 ms at 100k and <= 2x a
  warm one at 1M, peak RSS < 300 MB at 100k and < 2 GB at 1M); then a reconcile of the
  same notes, all unchanged (goal < 30 s);
* bench_live.py: save-to-searchable p50 (goal < 0.5 s).

Prints one line per goal as it is measured, then all of them as one table (measured
value, verdict, the machine's load, the run's time), and writes bench/results/goals.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

import bench_live
import bench_overhead
import bench_query
import st_ollama
from _common import DAEMON_SRC, machine, save


def check(rows: list, goal: str, value, ok: bool) -> None:
    value = round(value, 3) if isinstance(value, float) else value
    rows.append({"goal": goal, "measured": value, "holds": bool(ok)})
    print(f"{'ok  ' if ok else 'MISS'} {goal}: {value}", file=sys.stderr)


def table(rows: list[dict], out: dict, seconds: float) -> str:
    """The goals as one plain-text table, with the machine's load and the run's time."""
    shown = [(r["goal"], json.dumps(r["measured"]), "holds" if r["holds"] else "MISSED") for r in rows]
    width = max([len(g) for g, _, _ in shown] + [4])
    vwidth = max([len(v) for _, v, _ in shown] + [8])
    lines = [f"{'goal':<{width}}  {'measured':<{vwidth}}  verdict", f"{'-' * width}  {'-' * vwidth}  -------"]
    lines += [f"{g:<{width}}  {v:<{vwidth}}  {h}" for g, v, h in shown]
    load = out["machine"]["loadavg_at_start"]
    lines.append(
        f"{sum(r['holds'] for r in rows)} of {len(rows)} hold; load average at start {load[0]:.2f}, at end "
        f"{os.getloadavg()[0]:.2f}; {seconds / 60:.1f} minutes"
    )
    return "\n".join(lines)


def query_goals(rows: list, r: dict) -> None:
    """Issue 30's query goals for one size, against the numpy floor of the same run; and
    issue 20's first query and peak memory at 100k."""
    chunks, floor = r["chunks"], r["numpy_floor_p50_ms"]
    bound = 3 if chunks <= 30000 else 1  # 3x at 20k; the compact index must beat brute force beyond
    for route in ("similar", "search"):
        p50, p95 = r[f"{route}_p50_ms"], r[f"{route}_p95_ms"]
        check(rows, f"/{route} p50 <= {bound}x numpy floor at {chunks} chunks (ms, floor ms, ratio)",
              [p50, floor, round(p50 / floor, 2)], p50 <= bound * floor)  # fmt: skip
        cpu = r[f"{route}_cpu_ms"] / r["floor_cpu_ms"]
        check(rows, f"... the same in CPU time per request (steadier on a busy machine) at {chunks} chunks",
              round(cpu, 2), cpu <= bound)  # fmt: skip
        check(rows, f"/{route} p95 <= 2x p50 at {chunks} chunks", [p50, p95], p95 <= 2 * p50)
    recall = r["similar_recall_at_10"]
    check(rows, f"/similar recall@10 >= 0.99 at {chunks} chunks", recall, recall >= 0.99)
    if chunks <= 30000:
        return
    first = [x["first_similar_ms"] for x in r["first_after_start"] if x["snapshot"]]
    warm = r["similar_p50_ms"]
    if chunks < 500_000:
        check(rows, f"first /similar after a start <= 200 ms at {chunks} chunks", first, max(first) <= 200)
    else:
        check(rows, f"first /similar after a start <= 2x a warm one at {chunks} chunks (ms, warm p50)",
              [first, warm], max(first) <= 2 * warm)  # fmt: skip
    # The worst peak: after the queries, and after each start (with the snapshot, and
    # without it: the full load of every vector, as after an upgrade).
    peak = round(max([r.get("VmHWM", 1e9)] + [x.get("VmHWM", 1e9) for x in r["first_after_start"]]), 1)
    limit = 300 if chunks < 500_000 else 2048
    check(rows, f"daemon peak RSS < {limit} MB at {chunks} chunks (MB)", peak, peak < limit)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--overhead-headings", default="20000,100000")
    p.add_argument("--rounds", type=int, default=2, help="bench_overhead rounds per size")
    p.add_argument("--query-sizes", default="20000,100000")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--live-headings", type=int, default=10000)
    p.add_argument("--edits", type=int, default=30)
    p.add_argument("--chat-mb", type=float, default=10, help="the chat-log import's export size (0: not measured)")
    p.add_argument("--compare", type=Path, help="bench_overhead only: another copy of daemon/, interleaved")
    p.add_argument("--embedder", choices=sorted(bench_overhead.EMBEDDERS), default="precomputed",
                   help="bench_overhead's embedder (bench/st_ollama.py backend)")  # fmt: skip
    args = p.parse_args()
    started = time.monotonic()
    out: dict = {"machine": machine(), "daemon_src": str(DAEMON_SRC), "overhead": [], "query": [], "goals": []}
    rows = out["goals"]

    srcs = {"this": DAEMON_SRC, **({"compare": args.compare.resolve()} if args.compare else {})}
    overhead_sizes = [int(x) for x in args.overhead_headings.split(",") if x]
    if overhead_sizes or args.chat_mb:
        # The embedder alone, through the plain client, before the daemon is compared with it.
        out["embedder"] = {"backend": args.embedder, **st_ollama.measure(list(bench_overhead.EMBEDDERS[args.embedder]), 10000)}
        print("embedder alone:", json.dumps(out["embedder"]), file=sys.stderr)
        check(rows, "embedder alone >= 3,000 texts/s through the plain client (texts/s)",
              out["embedder"]["plain_texts_per_s"], out["embedder"]["plain_texts_per_s"] >= 3000)  # fmt: skip
    server = bench_overhead.start_embedder(args.embedder, "embed-goals")
    try:
        for n in overhead_sizes:
            r = bench_overhead.run_size(n, srcs, server.url, args.rounds, with_daemon=True)
            out["overhead"].append(r)
            this = r["variants"]["this"]
            eff = this["efficiency_median"]
            rates = {"efficiency": eff, "embedder_texts_per_s": statistics.median(this["plain_texts_per_s"]),
                     "daemon_texts_per_s": statistics.median(this["daemon_texts_per_s"])}  # fmt: skip
            check(rows, f"embedding pipeline >= 85% of the plain client at {n} headings", rates, eff >= 0.85)
            cpu = r["variants"]["this"]["cpu_efficiency_median"]
            check(rows, f"... the same in CPU seconds (steadier on a busy machine) at {n} headings", cpu, cpu >= 0.85)
            served = this["daemon_efficiency_median"]
            check(rows, f"... the daemon's cold start (serve on a fresh database) at {n} headings", served, served >= 0.85)
            save("goals", out)
        if args.chat_mb:
            r = bench_overhead.run_chat_import(args.chat_mb, srcs, server.url, args.rounds)
            out["chat_import"] = r
            this = r["variants"]["this"]
            eff = this["efficiency_median"]
            rates = {"efficiency": eff, "texts": r["texts"], "embedder_texts_per_s": statistics.median(this["plain_texts_per_s"]),
                     "daemon_texts_per_s": statistics.median(this["daemon_texts_per_s"])}  # fmt: skip
            check(rows, f"embedding pipeline >= 85% of the plain client, chat-log import of {args.chat_mb:g} MB", rates, eff >= 0.85)
            cpu = this["cpu_efficiency_median"]
            check(rows, "... the same in CPU seconds, chat-log import", cpu, cpu >= 0.85)
            save("goals", out)
    finally:
        server.stop()

    for size in (int(x) for x in args.query_sizes.split(",") if x):
        r = asyncio.run(bench_query.run_size(size, 768, args.queries))
        r.pop("build", None)
        out["query"].append(r)
        query_goals(rows, r)
        # A reconcile that finds every file unchanged (a restart, `index` run again).
        roam, db = bench_query.CACHE / f"query-{size}-768" / "roam", bench_query.CACHE / f"query-{size}-768" / "index.sqlite3"
        wall, cpu = bench_overhead.run_cli(DAEMON_SRC, "http://127.0.0.1:9", roam, db, "--no-embed")
        r["unchanged_reconcile_s"], r["unchanged_reconcile_cpu_s"] = round(wall, 2), round(cpu, 2)
        check(rows, f"unchanged reconcile < 30 s at {r['chunks']} chunks (s)", r["unchanged_reconcile_s"], wall < 30)
        save("goals", out)

    if args.live_headings:
        r = asyncio.run(bench_live.run(args.live_headings, args.edits, 0.0, 0.0))
        out["live"] = r
        check(rows, f"save-to-searchable p50 < 0.5 s at {r['headings']} headings", r["searchable_p50_ms"], r["searchable_p50_ms"] < 500)
    out["seconds"] = round(time.monotonic() - started, 1)
    save("goals", out)
    print(table(rows, out, out["seconds"]))


if __name__ == "__main__":
    main()
