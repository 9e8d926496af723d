"""How long /ask waits for its notes when the embedder is across a network.

    python bench/ask_latency.py [--delay 0.010] [--asks 30] [--compare DIR ...] [--rounds N]

Indexes the bundled example notes (examples/roam) through the daemon's own OracleIndex with
the tests' fake Ollama as its embedder, then makes it answer each request ``--delay``
seconds late (a GPU box across a tailnet) and times ``gather_context`` (what /ask runs
before the model: the question's and the buffer's embeddings, then the notes) for
``--asks`` distinct questions, each with a buffer. Prints the median in milliseconds, and
the median CPU time of this process an ask (the fake Ollama's included, the same work
for every copy). ``--compare DIR``: also each other copy of the package's ``daemon/``
directory (e.g. ``git archive <commit> daemon`` unpacked), each in its own process, in
turn, ``--rounds`` times (alternated), with the load average before each.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


async def measure(delay: float, asks: int) -> tuple[float, float]:
    from arcology_oracle.answers.context import gather_context
    from arcology_oracle.config import load_settings
    from arcology_oracle.index.service import OracleIndex
    from tests.fakes.fake_ollama import running_fake_ollama

    with tempfile.TemporaryDirectory() as tmp:
        roam = Path(tmp) / "roam"
        shutil.copytree(REPO / "examples" / "roam", roam)
        async with running_fake_ollama() as fake:
            settings = load_settings(
                overrides={"roam_dir": roam, "db_path": Path(tmp) / "index.sqlite3", "ollama_host": fake.url}, environ={}
            )
            index = OracleIndex(settings)
            await index.start()
            try:
                await index.reconcile()
                await index.embed_pending()
                fake.state.delay_per_request = delay
                times, cpu = [], []
                for i in range(asks):
                    started, used = time.perf_counter(), time.process_time()
                    await gather_context(index, f"what is wrong with my tomatoes ({i})",
                                         buffer=f"* Greenhouse, day {i}\nBrown patches on the leaves.")  # fmt: skip
                    times.append((time.perf_counter() - started) * 1000)
                    cpu.append((time.process_time() - used) * 1000)
            finally:
                await index.close()
    return statistics.median(times), statistics.median(cpu)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--delay", type=float, default=0.010, help="seconds the embedder takes per request")
    p.add_argument("--asks", type=int, default=30)
    p.add_argument("--compare", type=Path, nargs="*", default=[], help="other copies of daemon/ to time in turn")
    p.add_argument("--rounds", type=int, default=1, help="times each copy is timed, alternated")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # this process's package only
    args = p.parse_args()
    if args.one:
        import arcology_oracle

        wall, cpu = asyncio.run(measure(args.delay, args.asks))
        print(f"{wall:.1f} {cpu:.2f} {Path(arcology_oracle.__file__).parent}")
        return
    for src in [REPO / "daemon", *args.compare] * args.rounds:
        # PYTHONPATH picks the copy (the package printed beside the time says which ran);
        # no user's config file is read (XDG_CONFIG_HOME: the bench's own, as the daemon's).
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(src).resolve()), str(REPO)]),
               "XDG_CONFIG_HOME": str(REPO / "bench" / "results" / "xdg-config")}  # fmt: skip
        out = subprocess.run([sys.executable, __file__, "--one", "--delay", str(args.delay), "--asks", str(args.asks)],
                             env=env, check=True, stdout=subprocess.PIPE, text=True).stdout.split()  # fmt: skip
        load = os.getloadavg()[0]
        print(f"{out[2]}: median {out[0]} ms, CPU {out[1]} ms an ask (embedder {args.delay * 1000:.0f} ms a request, "
              f"{args.asks} asks; load {load:.2f} before)")  # fmt: skip


if __name__ == "__main__":
    main()
