"""Where a cold ``index`` spends its time: py-spy over the daemon's CLI and its parse worker.

    nice python bench/profile_index.py [--headings 20000] [--embedder precomputed|hash]
        [--rate 50] [--top 25] [--idle]

Writes a synthetic corpus (bench/corpus.py, the seed bench_overhead.py uses for the size),
starts bench/st_ollama.py as the embedder, and runs ``arcology-oracle index`` on a fresh
database under ``py-spy record --subprocesses --threads`` (the ``bench`` extra; py-spy must
be allowed to trace its child). Prints the samples per process and thread, then the top
functions by inclusive ("cumulative") and by self samples, lines merged per function.
Without ``--idle`` a sample is CPU work (py-spy drops idle threads); with it, wall time
(waits included). The raw stacks go to bench/results/profile-index.raw, for a flame graph.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import bench_overhead
from _common import DAEMON_SRC, HASH_MODEL, RESULTS
from corpus import generate

WORK = RESULTS / "profile-work"


def summarise(raw: Path, top: int) -> str:
    """Per-thread shares and the top functions of py-spy's raw (collapsed) output."""
    threads: collections.Counter = collections.Counter()
    inclusive: collections.Counter = collections.Counter()
    own: collections.Counter = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n, frames = int(count), stack.split(";")
        where = "worker" if sum(f.startswith("process ") for f in frames) > 1 else "daemon"
        thread = next((f for f in frames if f.startswith("thread ")), "thread ?").split(": ", 1)[-1]
        threads[f"{where} {thread}"] += n
        total += n
        funcs = [re.sub(r":\d+\)$", ")", f) for f in frames if not f.startswith(("process ", "thread "))]
        for f in set(funcs):
            inclusive[(where, f)] += n
        if funcs:
            own[(where, funcs[-1])] += n
    # Frames every sample of a thread has (the event loop, runpy, thread bootstrap) say nothing.
    plumbing = ("threading.py", "concurrent/futures/", "<frozen runpy>", "asyncio/", "multiprocessing/",
                "__main__.py", "arcology_oracle/cli.py", "<string>", "spawn_main")  # fmt: skip
    lines = [f"{total} samples"]
    lines += [f"  {n:6d} {100 * n / total:5.1f}%  {t}" for t, n in threads.most_common()]
    for title, counter in (("inclusive (cumulative)", inclusive), ("self", own)):
        lines.append(f"top {top} by {title} samples")
        shown = [(k, n) for k, n in counter.most_common() if not any(p in k[1] for p in plumbing)][:top]
        lines += [f"  {n:6d} {100 * n / total:5.1f}%  [{w}] {f}" for (w, f), n in shown]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--headings", type=int, default=20000)
    p.add_argument("--embedder", choices=sorted(bench_overhead.EMBEDDERS), default="precomputed")
    p.add_argument("--rate", type=int, default=50, help="py-spy samples per second")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--idle", action="store_true", help="sample idle threads too (wall time)")
    args = p.parse_args()
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    shutil.rmtree(WORK, ignore_errors=True)
    roam, db, raw = WORK / "roam", WORK / "index.sqlite3", RESULTS / "profile-index.raw"
    print(generate(roam, args.headings, seed=args.headings), file=sys.stderr)
    server = bench_overhead.start_embedder(args.embedder, "embed-profile")
    try:
        env = {**os.environ, "PYTHONPATH": str(DAEMON_SRC), "XDG_CONFIG_HOME": str(RESULTS / "xdg-config")}
        cmd = [py_spy, "record", "--subprocesses", "--threads", "-r", str(args.rate), "-f", "raw", "-o", str(raw),
               *(["--idle"] if args.idle else []), "--", sys.executable, "-m", "arcology_oracle", "index", str(roam),
               "--db", str(db), "--ollama-host", server.url, "--embed-model", HASH_MODEL]  # fmt: skip
        subprocess.run(cmd, env=env, check=True, stdout=sys.stderr)
    finally:
        server.stop()
        shutil.rmtree(WORK, ignore_errors=True)
    print(summarise(raw, args.top))


if __name__ == "__main__":
    main()
