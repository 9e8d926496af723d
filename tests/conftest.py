"""Shared fixtures: isolated settings, the example vault, a fake Ollama, the app, and the
real daemon process.

Everything is real but Ollama: SQLite files and org files live in ``tmp_path``, the fake
Ollama is an aiohttp server on loopback (see ``tests/fakes/fake_ollama.py``), and
``daemon`` starts ``arcology-oracle serve`` as a subprocess.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import os
import shutil
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from aiohttp import web

from arcology_oracle.config import Settings, load_settings
from arcology_oracle.http.app import create_app
from arcology_oracle.http.keys import index_key, ready_key, worker_key
from arcology_oracle.index.service import OracleIndex
from tests.fakes.fake_ollama import FakeOllama, running_fake_ollama
# free_port and wait_until too: tests written before tests/runners.py import them from here.
from tests.runners import REPO, Daemon, free_port, start_daemon, wait_indexed, wait_until  # noqa: F401

EXAMPLE_ROAM = REPO / "examples" / "roam"

# Compiled modules are kept (in the git-ignored __pycache__), by pytest's workers and by
# every process they start: with PYTHONDONTWRITEBYTECODE set in the environment (as on
# some machines) none ever was, so each daemon the suite starts compiled the
# package again from source (~0.5 s of its start) and each worker rewrote every test
# module's asserts again. A test that wants it off for its process sets it there.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


def copy_examples(target: Path) -> Path:
    """A copy of the example notes at ``target``, each file modified now, as in a fresh
    clone: the notes carry no date of their own, so the daemon dates them by their files,
    and a checkout's times (a "last week" of a clone made on a Sunday) must not decide
    what a time question finds."""
    shutil.copytree(EXAMPLE_ROAM, target, symlinks=True, copy_function=shutil.copy)
    return target


@contextlib.contextmanager
def module_environment(tmp: Path) -> Iterator[dict[str, str]]:
    """For a daemon a whole module shares (:func:`isolated_environment` is per test):
    nothing of the developer's ``ARCOLOGY_ORACLE_*`` or ``OLLAMA_HOST`` meanwhile, and the
    ``env`` to start it with (config and data dirs under ``tmp``)."""
    home = tmp / "home"
    with pytest.MonkeyPatch.context() as mp:
        for name in list(os.environ):
            if name.startswith("ARCOLOGY_ORACLE_") or name == "OLLAMA_HOST":
                mp.delenv(name)
        yield {"XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data")}


@contextlib.asynccontextmanager
async def daemon_with_mcp_port(tmp: Path, **start) -> AsyncIterator[tuple[Daemon, int, Path]]:
    """``(daemon, its MCP port, its notes)``: the real daemon over a copy of the example
    notes in ``tmp``, with ``serve --mcp-port`` and the fake Ollama (``daemon.fake_ollama``),
    indexed; for a module's tests to share (:func:`module_environment`). ``start``:
    more of :func:`~tests.runners.start_daemon`'s arguments (``extra_args`` are added)."""
    roam = copy_examples(tmp / "roam")
    with module_environment(tmp) as env:
        async with running_fake_ollama() as fake:
            port = free_port()
            extra = ["--mcp-port", str(port), *start.pop("extra_args", ())]
            daemon = await start_daemon(tmp, roam_dir=roam, ollama_url=fake.url, env=env, extra_args=extra, **start)
            try:
                await wait_indexed(daemon)
                daemon.fake_ollama = fake
                yield daemon, port, roam
            finally:
                daemon.stop()


# The longest a test may read the calendar for (its own today, then the daemon's "last
# week", "yesterday", today's daily note) without the day changing under it.
DAY_MARGIN = datetime.timedelta(minutes=2)


@pytest.fixture(autouse=True)
def one_day():
    """No test starts in the last :data:`DAY_MARGIN` of a day: one that begins then waits
    for midnight to pass. A test that wrote last week's notes at 23:59:50 on a Sunday and
    asked the daemon for "last week" a few seconds later got the week after them."""
    now = datetime.datetime.now()
    midnight = datetime.datetime.combine(now.date() + datetime.timedelta(days=1), datetime.time())
    if midnight - now < DAY_MARGIN:
        while datetime.datetime.now() < midnight:
            time.sleep((midnight - datetime.datetime.now()).total_seconds() + 0.01)


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory, monkeypatch):
    """No test reads the developer's config, data dir, token or Ollama."""
    home = tmp_path_factory.mktemp("home")
    for name in list(os.environ):
        if name.startswith("ARCOLOGY_ORACLE_") or name == "OLLAMA_HOST":
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    # No relevance cut-off: the fake embedder's vectors score nothing like a real model's
    # (answers/relevance.py is calibrated on all-MiniLM-L6-v2); tests of the cut-off set it.
    monkeypatch.setenv("ARCOLOGY_ORACLE_MIN_SCORE", "0")


@pytest.fixture
def roam_dir(tmp_path) -> Path:
    """A private copy of the example vault (examples/roam)."""
    return copy_examples(tmp_path / "roam")


@pytest.fixture
async def fake_ollama() -> AsyncIterator[FakeOllama]:
    async with running_fake_ollama() as fake:
        yield fake


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
            "min_score": 0.0,  # see isolated_environment
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


@pytest.fixture
async def production_daemon(settings):
    """The app served as ``run_app`` serves it: without aiohttp's handler cancellation
    (the test server turns that on, which would hide a missing disconnect check)."""
    app = create_app(settings, watch=False)
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    await asyncio.wait_for(app[ready_key].wait(), 30)
    await asyncio.wait_for(app[worker_key].idle.wait(), 30)
    port = site._server.sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    await runner.cleanup()


@pytest.fixture
async def daemon(tmp_path, roam_dir, fake_ollama) -> AsyncIterator[Daemon]:
    """The real daemon over a copy of the vault, talking to the fake Ollama."""
    d = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url)
    yield d
    d.stop()
