"""The application factory and the server entry point.

``create_app(settings)`` wires everything through ``cleanup_ctx``: the index (store
threads), the first reconcile (in the background, so requests are answered while it
runs), the embedding worker and the watcher. ``run_server`` refuses to listen on a
non-loopback address without a token, and to start beside another daemon (see
:mod:`.server`): it binds the port, then locks the database and the notes, before the app
starts.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from collections.abc import AsyncIterator, Callable
from contextlib import ExitStack

from aiohttp import web

from ..config import Settings
from ..ollama.embed import Embedder
from ..errors import ConfigError, OracleError
from ..index.live import LiveIndex
from ..index.notes_claim import NotesClaimed, claim_notes
from . import ask_routes, links_routes, memory_routes, openapi, peers, routes
from . import web as web_page
from .compat import ollama as ollama_compat
from .compat import openai as openai_compat
from .guard import guard_middleware
from .instance import add_instance_header, notes_middleware
from .keys import index_key, ready_key, settings_key, stopping_key, worker_key
from .middleware import error_middleware, no_store
from .server import listen, lock_database, lock_notes, serve

log = logging.getLogger(__name__)

# Each module either has a ``routes`` table or a ``setup(app)`` that adds its routes
# (and any per-app resources, such as the chat client, through cleanup_ctx).
ROUTE_MODULES = (routes, links_routes, ask_routes, memory_routes, ollama_compat, openai_compat, web_page, openapi)


def create_app(settings: Settings, *, embedder: Embedder | None = None, watch: bool = True) -> web.Application:
    """Build the daemon's application. ``embedder`` replaces the Ollama embedder (tests,
    benchmarks); ``watch=False`` disables the file watcher."""
    app = web.Application(
        middlewares=[error_middleware, guard_middleware, notes_middleware],
        client_max_size=settings.max_body_bytes,
    )
    app[settings_key] = settings
    app.on_response_prepare.append(add_instance_header)
    app.on_response_prepare.append(no_store)
    app[ready_key] = asyncio.Event()
    # Set first thing at shutdown: answers being streamed end at once (http/streaming.py)
    # rather than hold the stop for the runner's grace time, a model generating for a
    # client that is about to lose its daemon anyway.
    app[stopping_key] = stopping = asyncio.Event()

    async def stop_answers(_app: web.Application) -> None:
        stopping.set()

    app.on_shutdown.append(stop_answers)

    async def index_ctx(app: web.Application) -> AsyncIterator[None]:
        live = LiveIndex(settings, embedder, watch=watch, ready=app[ready_key])
        await live.start()
        app[index_key] = live.index
        app[worker_key] = live.worker
        yield
        await live.stop()

    app.cleanup_ctx.append(index_ctx)
    for module in ROUTE_MODULES:
        if hasattr(module, "setup"):
            module.setup(app)
        else:
            app.add_routes(module.routes)
    return app


def check_bind(settings: Settings) -> None:
    """Refuse a non-loopback bind, or host names other than loopback ones (a proxy in
    front: ``tailscale serve``), without a token (ConfigError says why)."""
    if settings.token:
        return
    if not settings.is_loopback:
        raise ConfigError(
            f"refusing to listen on {settings.host} without a token: anyone who can reach that "
            "address could read your notes. Set a token (ARCOLOGY_ORACLE_TOKEN, `token` in the "
            "config file, or --token-file), or bind to 127.0.0.1."
        )
    if settings.allowed_hosts:
        raise ConfigError(
            f"refusing to answer to {', '.join(settings.allowed_hosts)} without a token: a proxy passing that "
            "name on (tailscale serve) lets every device that reaches it read and write your notes. Set a token "
            "(ARCOLOGY_ORACLE_TOKEN, `token` in the config file, or --token-file), or drop allowed_hosts."
        )
    if peers.can_tell():
        log.info("no token: only programs of this account (uid %d) are answered; other accounts of this "
                 "machine get a 403 (see \"Who may talk to the daemon\")", os.geteuid())
    else:
        log.warning("no token: every program and every account on this machine can read and write your notes "
                    "through the daemon; on a shared machine set a token (see \"Who may talk to the daemon\")")


def _claim_notes(settings: Settings) -> int | None:
    """The claim of the daemon's notes on its database (:mod:`..index.notes_claim`): an
    ``index`` of another directory that writes into it meanwhile keeps the daemon out."""
    try:
        return claim_notes(settings.db_path, settings.roam_dir)
    except NotesClaimed as exc:
        raise OracleError(f"`arcology-oracle index` is writing the notes of {exc.holder} into {settings.db_path}: "
                          f"serving {settings.roam_dir} from it would mix the two; wait for it to end, or pass "
                          "another --db") from None  # fmt: skip


def run_server(settings: Settings, setup: Callable[[web.Application], None] | None = None) -> int:
    """Run the daemon until interrupted. Returns the process exit code. ``setup`` may add
    to the app first (the CLI adds the MCP port this way: it lives above this layer).
    Before anything is opened: the port is bound (ConfigError when in use) and the
    database and the notes are locked (OracleError when another daemon holds them, or an
    ``index`` of another directory writes the database)."""
    check_bind(settings)
    sockets = listen(settings.host, settings.port)
    with ExitStack() as held:
        for sock in sockets:
            held.callback(sock.close)
        for lock in (
            lambda: lock_database(settings.db_path, f"another arcology-oracle daemon (or `doctor --repair`) is using "
                                  f"the database {settings.db_path}: stop it, or pass another --db"),
            lambda: lock_notes(settings.roam_dir, f"another arcology-oracle daemon is serving the notes in "
                               f"{settings.roam_dir}: stop it first (two would both write into them)"),
            lambda: _claim_notes(settings),
        ):  # fmt: skip
            if (fd := lock()) is not None:
                held.callback(os.close, fd)
        app = create_app(settings)
        if setup is not None:
            setup(app)

        def listening() -> None:
            # What the start made (modules, classes, functions: ~82,000 objects) lives as
            # long as the daemon: kept out of the cyclic GC, each of whose full collections
            # scanned it all again (~40 ms at a million headings, holding the GIL; one fell
            # in the first query after nearly every start: BENCHMARKS.md, issue 30).
            gc.freeze()
            log.info(
                "arcology-oracle listening on http://%s:%d (notes: %s, database: %s, Ollama: %s)",
                settings.host, settings.port, settings.roam_dir, settings.db_path, settings.ollama_host,
            )  # fmt: skip

        serve(app, sockets, listening)
    return 0
