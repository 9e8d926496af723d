"""Shared fixtures: isolated settings, the example vault, a fake Ollama, the app, and the
real daemon process.

Everything is real but Ollama: SQLite files and org files live in ``tmp_path``, the fake
Ollama is an aiohttp server on loopback (see ``tests/fakes/fake_ollama.py``), and
``daemon`` starts ``arcology-oracle serve`` as a subprocess.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import aiohttp
import pytest

from arcology_oracle.config import Settings, load_settings
from arcology_oracle.http.app import create_app
from arcology_oracle.http.keys import index_key, ready_key, worker_key
from arcology_oracle.index.service import OracleIndex
from tests.fakes.fake_ollama import FakeOllama, running_fake_ollama

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_ROAM = REPO / "examples" / "roam"


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory, monkeypatch):
    """No test reads the developer's config, data dir, token or Ollama."""
    home = tmp_path_factory.mktemp("home")
    for name in list(os.environ):
        if name.startswith("ARCOLOGY_ORACLE_") or name == "OLLAMA_HOST":
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))


@pytest.fixture
def roam_dir(tmp_path) -> Path:
    """A private copy of the example vault (examples/roam)."""
    target = tmp_path / "roam"
    shutil.copytree(EXAMPLE_ROAM, target, symlinks=True)
    return target


@pytest.fixture
async def fake_ollama() -> AsyncIterator[FakeOllama]:
    async with running_fake_ollama() as fake:
        yield fake


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def make_settings(tmp_path, roam_dir) -> Callable[..., Settings]:
    """Build Settings for this test: db in tmp_path, the copied vault, no real Ollama."""

    def make(**overrides) -> Settings:
        values = {
            "roam_dir": roam_dir,
            "db_path": tmp_path / "index.sqlite3",
            "ollama_host": "http://127.0.0.1:9",  # discard port: refused at once
            "debounce_seconds": 0.05,
            "retry_max_seconds": 0.5,
            "embed_timeout": 10,
            "connect_timeout": 2,
        }
        values.update(overrides)
        return load_settings(overrides=values, environ={})

    return make


@pytest.fixture
def settings(make_settings, fake_ollama) -> Settings:
    """Settings pointing at the running fake Ollama."""
    return make_settings(ollama_host=fake_ollama.url)


@pytest.fixture
async def index(settings) -> AsyncIterator[OracleIndex]:
    """An started OracleIndex over the vault, reconciled and fully embedded."""
    idx = OracleIndex(settings)
    await idx.start()
    await idx.reconcile()
    await idx.embed_pending()
    yield idx
    await idx.close()


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


@pytest.fixture
def make_client(aiohttp_client):
    """``await make_client(settings, watch=False, embedded=True)``: a test client for the
    app, after its first reconcile (and, with ``embedded``, once nothing is pending)."""

    async def make(settings: Settings, *, watch: bool = False, embedded: bool = True, **kw):
        app = create_app(settings, watch=watch, **kw)
        client = await aiohttp_client(app)
        await asyncio.wait_for(app[ready_key].wait(), 30)
        if embedded:
            await asyncio.wait_for(app[worker_key].idle.wait(), 30)
        client.index = app[index_key]
        return client

    return make


@pytest.fixture
async def client(make_client, settings):
    return await make_client(settings)


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

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


async def start_daemon(
    tmp_path: Path, *, roam_dir: Path, ollama_url: str, token: str | None = None, extra_args=(), env=None
) -> Daemon:
    """Start the real daemon and wait until ``/health`` answers."""
    port = free_port()
    log_path = tmp_path / f"daemon-{port}.log"
    cmd = [
        sys.executable, "-m", "arcology_oracle", "serve",
        "--roam-dir", str(roam_dir), "--db", str(tmp_path / "daemon.sqlite3"),
        "--port", str(port), "--ollama-host", ollama_url, *extra_args,
    ]  # fmt: skip
    full_env = {**os.environ, **(env or {})}
    full_env.setdefault("ARCOLOGY_ORACLE_DEBOUNCE_SECONDS", "0.1")
    full_env.setdefault("ARCOLOGY_ORACLE_RETRY_MAX_SECONDS", "0.5")
    if token:
        full_env["ARCOLOGY_ORACLE_TOKEN"] = token
    log_file = open(log_path, "wb")
    proc = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT, env=full_env, cwd=REPO)
    log_file.close()
    daemon = Daemon(proc, f"http://127.0.0.1:{port}", log_path, token)

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
        await wait_until(healthy, timeout=30, interval=0.1)
    except BaseException:
        daemon.stop()
        raise
    return daemon


@pytest.fixture
async def daemon(tmp_path, roam_dir, fake_ollama) -> AsyncIterator[Daemon]:
    """The real daemon over a copy of the vault, talking to the fake Ollama."""
    d = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url)
    yield d
    d.stop()
