"""The long schemathesis run over the daemon's whole HTTP API (the suite runs a short one).

    python bench/fuzz_api.py                      # 200 examples per operation and mode
    python bench/fuzz_api.py --examples 1000 --random

Starts the fake Ollama and ``arcology-oracle serve`` (with a token) as subprocesses over a
copy of the example vault plus private, crypt and excluded notes, then runs
:func:`tests.api_fuzz.fuzz` (every operation of ``/openapi.json``, schema-conforming and
schema-breaking input: no 5xx, the right error shape on every 4xx, answers matching the
description, no private text) and :func:`tests.api_fuzz.probe_private`. Exits 1 on any
failure; results (requests, statuses, failures, seconds) go to bench/results/fuzz_api.json.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, Process, free_port, machine, save, wait_ready  # noqa: E402 (sets sys.path)

import aiohttp  # noqa: E402

from tests.api_fuzz import EXCLUDE_GLOBS, add_private_notes, fuzz, probe_private  # noqa: E402
from tests.org_samples import VAULT  # noqa: E402

TOKEN = "bench-fuzz-token"


async def wait_indexed(url: str) -> dict:
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session:
        return await wait_ready(session, url, timeout=300)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=200, help="examples per operation and generation mode")
    parser.add_argument("--random", action="store_true", help="a new random seed (default: derandomized)")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="fuzz-api-"))
    roam = work / "roam"
    shutil.copytree(VAULT, roam, symlinks=True)
    add_private_notes(roam)
    fake = Process([sys.executable, "-m", "tests.fakes.fake_ollama"], work / "fake.log")
    port = free_port()
    daemon = Process(
        [sys.executable, "-m", "arcology_oracle", "serve", "--roam-dir", str(roam), "--db", str(work / "db.sqlite3"),
         "--port", str(port), "--ollama-host", fake.url],
        work / "daemon.log",
        env={"ARCOLOGY_ORACLE_TOKEN": TOKEN, "ARCOLOGY_ORACLE_EXCLUDE_GLOBS": EXCLUDE_GLOBS,
             "XDG_CONFIG_HOME": str(work / "config"), "PYTHONPATH": str(REPO / "daemon")},
        url=f"http://127.0.0.1:{port}",
    )  # fmt: skip
    try:
        asyncio.run(wait_indexed(daemon.url))
        started = time.perf_counter()
        report = fuzz(daemon.url, token=TOKEN, max_examples=args.examples, derandomize=not args.random)
        leaks = probe_private(daemon.url, token=TOKEN)
        seconds = time.perf_counter() - started
    finally:
        daemon.stop()
        fake.stop()
    tracebacks = daemon.log.read_text(errors="replace").count("Traceback")
    result = {
        "machine": machine(),
        "examples_per_operation_and_mode": args.examples,
        "operations": report.operations,
        "requests": report.requests,
        "statuses": {str(k): v for k, v in sorted(report.statuses.items())},
        "failures": report.failures,
        "private_leaks": leaks,
        "tracebacks_in_log": tracebacks,
        "seconds": round(seconds, 1),
    }
    save("fuzz_api", result)
    print(f"{report.operations} operations, {report.requests} requests in {seconds:.0f} s; statuses "
          f"{result['statuses']}; {len(report.failures)} failures, {len(leaks)} leaks, {tracebacks} tracebacks")  # fmt: skip
    for failure in report.failures + leaks:
        print("\n" + failure)
    shutil.rmtree(work, ignore_errors=True)
    return 1 if report.failures or leaks or tracebacks else 0


if __name__ == "__main__":
    sys.exit(main())
