"""What a daemon start costs with many private notes: each start reads them again (nothing
of them is stored), and 200 or more once started a parser process for them.

Makes a vault of ``--private`` tag-private notes and ``--public`` public ones, indexes it
once, then starts ``arcology-oracle serve`` ``--starts`` times and reports, for each, the
time until its log says the first reconcile is done, the CPU time of the daemon and its
children (a parser process included) over the start and one quiet second after it, and
whether parser processes were started. Ollama is not needed (a closed port).

    python bench/private_start.py [--private 250] [--public 20] [--starts 5]

``BENCH_DAEMON_SRC=/path/to/daemon`` measures another copy of the package.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SRC = Path(os.environ.get("BENCH_DAEMON_SRC", REPO / "daemon"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_start(roam: Path, db: Path, log: Path) -> tuple[float, float, bool]:
    """(seconds to the first reconcile's end, CPU seconds, parser processes started)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [sys.executable, "-m", "arcology_oracle", "serve", "--roam-dir", str(roam), "--db", str(db),
           "--port", str(free_port()), "--ollama-host", "http://127.0.0.1:9"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    started = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        while "initial index of" not in log.read_text(errors="replace"):
            if proc.poll() is not None:
                raise SystemExit(log.read_text())
            time.sleep(0.005)
        ready = time.perf_counter() - started
        time.sleep(1.0)  # let a parser process finish and exit
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return ready, cpu, "worker processes" in log.read_text(errors="replace")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--private", type=int, default=250)
    parser.add_argument("--public", type=int, default=20)
    parser.add_argument("--starts", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        roam, db, log = Path(tmp, "notes"), Path(tmp, "index.sqlite3"), Path(tmp, "daemon.log")
        roam.mkdir()
        body = "".join(f"* Heading {h}\nSome words about day {h} and what was done.\n" for h in range(8))
        for n in range(args.private):
            (roam / f"private-{n:04}.org").write_text(f"#+title: Private {n}\n#+filetags: :private:\n\n{body}")
        for n in range(args.public):
            (roam / f"public-{n:04}.org").write_text(f"#+title: Public {n}\n\n{body}")
        one_start(roam, db, log)  # builds the index
        runs = [one_start(roam, db, log) for _ in range(args.starts)]
    print(f"package: {SRC}; {args.private} private and {args.public} public notes, {args.starts} starts")
    for ready, cpu, workers in runs:
        print(f"  first reconcile done {ready:.2f} s after spawn; CPU {cpu:.2f} s; parser process: {'yes' if workers else 'no'}")
    ready, cpu = sorted(r[0] for r in runs), sorted(r[1] for r in runs)
    print(f"median: ready {ready[len(ready) // 2]:.2f} s, CPU {cpu[len(cpu) // 2]:.2f} s")


if __name__ == "__main__":
    main()
