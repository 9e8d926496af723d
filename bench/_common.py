"""Helpers shared by the benchmark scripts: processes, timing, RSS, results.

Not imported by the daemon or the tests. Scripts run from the repository root as
``python bench/NAME.py``; this module puts the repository on ``sys.path`` so the fakes in
``tests/`` and the package in ``daemon/`` import without installing anything more.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
# BENCH_DAEMON_SRC=/path/to/daemon measures another copy of the package (to compare a
# change), in this process as in the daemons the scripts start.
DAEMON_SRC = Path(os.environ.get("BENCH_DAEMON_SRC", REPO / "daemon"))
for extra in (REPO, DAEMON_SRC, REPO / "bench"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

# OpenBLAS threads spin for ~50 ms after every call before they sleep: after each timing
# of the numpy floor they held the second core while the daemon answered the next
# request (measured: 58 ms of CPU per matrix-vector product followed by a 50 ms pause,
# 4.7 with this). Read once, when numpy loads; not passed on to the daemons started here.
_had_timeout = "OPENBLAS_THREAD_TIMEOUT" in os.environ
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
import aiohttp  # noqa: E402
import numpy as np  # noqa: E402

if not _had_timeout:
    del os.environ["OPENBLAS_THREAD_TIMEOUT"]

from arcology_oracle.config import Prefixes  # noqa: E402
from tests.runners import Daemon, spawn_daemon, stop_process  # noqa: E402

HASH_MODEL = "bench-hash"


class HashEmbedder:
    """The daemon's Embedder protocol over :class:`st_ollama.HashVectors`, in process.

    It remembers every text's vector: after a first pass over a corpus (a warm-up
    index), it answers from memory, which makes it the zero-latency embedder whose cost
    is nothing but a dict lookup, so that a timed index measures the daemon alone.
    ``seconds`` is the time spent computing vectors (not answering from memory).
    ``remember=False`` keeps nothing: a corpus embedded once (bench_query.py's build)
    would otherwise hold every vector as Python floats, ~20 GB at a million headings.
    """

    prefixes = Prefixes()

    def __init__(self, dims: int = 768, model: str = HASH_MODEL, *, remember: bool = True):
        from st_ollama import HashVectors

        self.remember = remember

        self.model = model
        self.vectors = HashVectors(dims)
        self.texts = 0
        self.requests = 0
        self.seconds = 0.0
        self._memo: dict[str, list[float]] = {}

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.requests += 1
        self.texts += len(texts)
        if not self.remember:
            started = time.perf_counter()
            vectors = self.vectors.embed(list(texts)).tolist()
            self.seconds += time.perf_counter() - started
            return vectors
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            started = time.perf_counter()
            self._memo.update(zip(missing, self.vectors.embed(missing).tolist()))
            self.seconds += time.perf_counter() - started
        return [self._memo[t] for t in texts]

    async def embed_query(self, text: str) -> list[float]:
        return (await self.embed_documents([text]))[0]

    async def dimensions(self) -> int | None:
        return self.vectors.dims

    async def close(self) -> None:
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: Sequence[float], p: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), p)) if values else float("nan")


def machine() -> dict:
    """What the numbers were measured on, including how busy the machine was."""
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "loadavg_at_start": os.getloadavg(),
        "numpy": np.__version__,
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def save(name: str, data: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    data = {**data, "loadavg_at_end": os.getloadavg()}
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2) + "\n")
    print(f"results written to {path}", file=sys.stderr)
    return path


def rss_mb(pid: int) -> dict[str, float]:
    """Current (VmRSS) and peak (VmHWM) resident memory of ``pid`` in MB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    return out


class Process:
    """A subprocess whose first stdout line is its URL (the embedding server, the fake
    Ollama); stopped with SIGTERM."""

    def __init__(self, cmd: list[str], log: Path, *, env: dict | None = None):
        self.log = log
        log.parent.mkdir(parents=True, exist_ok=True)
        self.log_file = open(log, "wb")
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=self.log_file, env={**os.environ, **(env or {})}, cwd=REPO
        )
        self.url = self.proc.stdout.readline().decode().strip()  # type: ignore[union-attr]
        if not self.url.startswith("http"):
            raise RuntimeError(f"{cmd[:3]} did not start; see {log}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        stop_process(self.proc, 20)
        self.log_file.close()


def embed_server(log: Path, *args: str, python: str = sys.executable) -> Process:
    return Process([python, str(REPO / "bench" / "st_ollama.py"), *args], log)


def daemon(
    roam: Path, db: Path, ollama_url: str, model: str, log: Path, *, extra_env: dict | None = None, src: Path | None = None
) -> Daemon:
    """The real daemon (``arcology-oracle serve``) as a subprocess, started as the tests
    start it (:func:`tests.runners.spawn_daemon`), with the package from ``src`` (default
    ``DAEMON_SRC``)."""
    env = {
        "PYTHONPATH": str(src or DAEMON_SRC),
        "XDG_CONFIG_HOME": str(RESULTS / "xdg-config"),
        **(extra_env or {}),
    }
    return spawn_daemon(roam_dir=roam, db_path=db, ollama_url=ollama_url, log_path=log,
                        extra_args=["--embed-model", model], env=env)  # fmt: skip


async def wait_ready(session: aiohttp.ClientSession, url: str, *, timeout: float = 1800) -> dict:
    """Wait until the daemon answers and has nothing left to index or embed."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            async with session.get(url + "/status") as resp:
                if resp.status == 200:
                    status = await resp.json()
                    if not status["indexing"]["running"] and status["pending"] == 0 and status["chunks"] > 0:
                        return status
        except aiohttp.ClientConnectionError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError("daemon not ready")
        await asyncio.sleep(0.2)


async def index_in_process(roam: Path, db: Path, embedder, **settings) -> dict:
    """Reconcile ``roam`` into ``db`` and embed everything, through the daemon's own
    :class:`OracleIndex`; returns the seconds of each phase and the counts."""
    from arcology_oracle.config import load_settings
    from arcology_oracle.index.service import OracleIndex

    values = {"roam_dir": roam, "db_path": db, "ollama_host": "http://127.0.0.1:9", "embed_model": embedder.model}
    index = OracleIndex(load_settings(overrides={**values, **settings}, environ={}), embedder=embedder)
    await index.start()
    try:
        started = time.perf_counter()
        report = await index.reconcile()
        reconciled = time.perf_counter()
        embedded = await index.embed_pending()
        done = time.perf_counter()
        status = await index.status()
    finally:
        await index.close()
    return {
        "reconcile_s": reconciled - started,
        "embed_s": done - reconciled,
        "total_s": done - started,
        "files_indexed": report.indexed,
        "embedded": embedded,
        **{k: status[k] for k in ("files", "headings", "chunks", "nodes")},
    }
