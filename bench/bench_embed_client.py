"""What an embedding call costs the daemon's process: its own embedder against the
official ``ollama`` client, in turn, through the same Ollama-API server.

    nice python bench/bench_embed_client.py [--calls 300] [--rounds 3]

Starts bench/st_ollama.py's ``precomputed`` backend (answers cost next to nothing) and,
in this process, calls ``OllamaEmbedder`` (what the daemon runs: a one-text query for
``/search``, 32-text batches for indexing) and ``ollama.AsyncClient.embed`` turned into
the same float32 unit vectors, alternating rounds. Prints CPU milliseconds per call of
this process (the server's CPU is not counted) and the ratio. ``BENCH_DAEMON_SRC``
measures another copy of the package (its embedder against the same official client).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys

from _common import RESULTS, embed_server, machine, save

import ollama

from arcology_oracle.config import load_settings
from arcology_oracle.ollama.embed import OllamaEmbedder, normalised

MODEL = "bench-hash"


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def per_call(call, calls: int) -> float:
    """CPU milliseconds of this process per call, after a warm-up."""
    for _ in range(20):
        await call()
    started = cpu()
    for _ in range(calls):
        await call()
    return 1000 * (cpu() - started) / calls


async def run(url: str, calls: int, rounds: int) -> dict:
    settings = load_settings(overrides={"ollama_host": url, "embed_model": MODEL, "roam_dir": "."}, environ={})
    daemon = OllamaEmbedder(settings)
    official = ollama.AsyncClient(host=url)
    query = ["which note says how long bread dough should rest"]
    batch = [f"heading {i}: a paragraph about kites, bread and the weather" for i in range(32)]

    async def official_embed(texts):
        normalised((await official.embed(model=MODEL, input=texts))["embeddings"])

    out: dict = {}
    for name, texts, n in (("query", query, calls), ("batch of 32", batch, max(calls // 4, 20))):
        mine, theirs = [], []
        for _ in range(rounds):
            mine.append(await per_call(lambda: daemon.embed_documents(texts), n))
            theirs.append(await per_call(lambda: official_embed(texts), n))
        out[name] = {"daemon_ms": mine, "official_ms": theirs}
        m, t = statistics.median(mine), statistics.median(theirs)
        print(f"{name:12s} daemon {m:.3f} ms  official client {t:.3f} ms  ratio {m / t:.2f}  "
              f"(rounds: {', '.join(f'{a:.2f}/{b:.2f}' for a, b in zip(mine, theirs))})", file=sys.stderr)  # fmt: skip
    await daemon.close()
    await official.close()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--calls", type=int, default=300)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    server = embed_server(RESULTS / "logs" / "embed-client.log", "--backend", "precomputed", "--dims", "768")
    try:
        result = asyncio.run(run(server.url, args.calls, args.rounds))
    finally:
        server.stop()
    save("embed-client", {"machine": machine(), "result": result})


if __name__ == "__main__":
    main()
