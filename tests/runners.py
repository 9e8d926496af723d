"""Running the real thing for tests and benchmarks: the daemon as a subprocess, the CLI,
and waiting on a condition.

Both ``tests/conftest.py`` and ``bench/_common.py`` start daemons with
:func:`spawn_daemon`, so the suite and the benchmarks run the one same way.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp

REPO = Path(__file__).resolve().parent.parent


# Ports a test's servers take, below the range the kernel hands outgoing connections
# (Linux's starts at 32768): a port found free here is taken by no client meanwhile. Each
# pytest-xdist worker (gw0, gw1 ...) has its own slice, so two workers never pick the same
# (past 20 workers two share one, each from its own place in it).
_PORTS_FROM, _PORTS_PER_WORKER = 12000, 1000
_worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
_slice = _PORTS_FROM + _worker % 20 * _PORTS_PER_WORKER
_next_port = itertools.count(os.getpid() % _PORTS_PER_WORKER)


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on, for a server a test starts in another
    process: this worker's next port that binds. Between this call and the server's bind
    neither another worker nor a connection's own port takes it (the slices above)."""
    for _ in range(_PORTS_PER_WORKER):
        port = _slice + next(_next_port) % _PORTS_PER_WORKER
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # another program's
            return port
    raise AssertionError(f"no free port in {_slice}-{_slice + _PORTS_PER_WORKER - 1}")


async def wait_until(predicate, *, timeout: float = 10.0, interval: float = 0.02):
    """Poll an (async or sync) predicate until true; fail the test after ``timeout``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = predicate()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(interval)


async def past_a_fifo(done: asyncio.Future, fifo, timeout: float = 10.0):
    """The result of ``done``, work that must not wait on the FIFO ``fifo`` (nothing
    writes to it); fails after ``timeout``, and then lets a read blocked on the FIFO
    see its end, so that nothing is left waiting."""
    try:
        return await asyncio.wait_for(asyncio.shield(done), timeout)
    finally:
        for _ in range(2):  # let a read blocked on the FIFO see its end, then wait for it
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        await asyncio.wait_for(done, timeout)


async def run_cli(*args: str, env: dict | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arcology_oracle", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=REPO, env={**os.environ, **(env or {})},
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    return proc.returncode, out.decode(), err.decode()


def stop_process(proc: subprocess.Popen, timeout: float = 10) -> None:
    """SIGTERM, then SIGKILL if it has not exited within ``timeout`` seconds."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Daemon:
    """A running ``arcology-oracle serve`` subprocess."""

    def __init__(self, proc: subprocess.Popen, url: str, log_path: Path, token: str | None):
        self.proc = proc
        self.url = url
        self.log_path = log_path
        self.token = token

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    async def get_json(self, path: str, **params):
        async with aiohttp.ClientSession(headers=self.headers) as session:
            async with session.get(self.url + path, params=params) as resp:
                return resp.status, await resp.json()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        stop_process(self.proc)


def spawn_daemon(
    *,
    roam_dir: Path,
    db_path: Path,
    ollama_url: str,
    log_path: Path,
    port: int | None = None,
    token: str | None = None,
    extra_args=(),
    env=None,
    preexec_fn=None,
) -> Daemon:
    """Start ``arcology-oracle serve`` (this Python, the package on its path) without
    waiting for it; its stdout and stderr go to ``log_path``; ``preexec_fn`` runs in the
    child before the exec (``subprocess.Popen``'s)."""
    port = port or free_port()
    cmd = [
        sys.executable, "-m", "arcology_oracle", "serve",
        "--roam-dir", str(roam_dir), "--db", str(db_path),
        "--port", str(port), "--ollama-host", ollama_url, *extra_args,
    ]  # fmt: skip
    full_env = {**os.environ, **(env or {})}
    if token:
        full_env["ARCOLOGY_ORACLE_TOKEN"] = token
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log_file:
        proc = subprocess.Popen(
            cmd, stdout=log_file, stderr=subprocess.STDOUT, env=full_env, cwd=REPO, preexec_fn=preexec_fn
        )
    return Daemon(proc, f"http://127.0.0.1:{port}", log_path, token)


async def start_daemon(
    tmp_path: Path, *, roam_dir: Path, ollama_url: str, token: str | None = None, extra_args=(), env=None,
    embedded: bool = False, preexec_fn=None,
) -> Daemon:
    """Start the real daemon (quick debounce and retries, for tests) and wait until
    ``/health`` answers (with ``embedded``, until it has also indexed and embedded
    everything: nothing pending, nothing running)."""
    port = free_port()
    env = {"ARCOLOGY_ORACLE_DEBOUNCE_SECONDS": "0.1", "ARCOLOGY_ORACLE_RETRY_MAX_SECONDS": "0.5", **(env or {})}
    daemon = spawn_daemon(
        roam_dir=roam_dir, db_path=tmp_path / "daemon.sqlite3", ollama_url=ollama_url,
        log_path=tmp_path / f"daemon-{port}.log", port=port, token=token, extra_args=extra_args, env=env,
        preexec_fn=preexec_fn,
    )  # fmt: skip
    proc = daemon.proc

    async def healthy():
        if proc.poll() is not None:
            raise AssertionError(f"daemon exited with {proc.returncode}:\n{daemon.log()}")
        try:
            async with aiohttp.ClientSession() as session:
                async with session.get(daemon.url + "/health") as resp:
                    return resp.status == 200
        except aiohttp.ClientConnectionError:
            return False

    try:
        await wait_until(healthy, timeout=30)
        if embedded:
            await wait_indexed(daemon)
    except BaseException:
        daemon.stop()
        raise
    return daemon


async def wait_indexed(daemon: Daemon, timeout: float = 60) -> dict:
    """Wait until the daemon has read and embedded every note (nothing pending, nothing
    running, something indexed); return its last ``/status``."""
    last: list = []

    async def done():
        status, body = await daemon.get_json("/status")
        last[:] = [status, body]
        ready = status == 200 and body["pending"] == 0 and body["headings"] and not body["indexing"]["running"]
        return body if ready else None

    try:
        return await wait_until(done, timeout=timeout)
    except AssertionError:
        raise AssertionError(f"the daemon did not finish indexing; last /status: {last}\n{daemon.log()}") from None


async def reconcile_once(settings):
    """Open an :class:`OracleIndex` on ``settings``, reconcile it once and close it; the
    reconcile's report."""
    from arcology_oracle.index.service import OracleIndex

    index = OracleIndex(settings)
    await index.start()
    try:
        return await index.reconcile()
    finally:
        await index.close()
