"""What MCP adds to a call: the same search and note read, straight from the daemon's HTTP
API and through the MCP server over stdio and over streamable HTTP.

    python bench/bench_mcp.py                 # 300 calls of each kind over bench/corpus.py's 2,000 headings
    python bench/bench_mcp.py --calls 100 --headings 500

What runs: the fake Ollama (tests/fakes), the real daemon with ``--mcp-port`` over a
generated vault (bench/corpus.py), ``arcology-oracle mcp`` spawned by the SDK's client.
Calls are sequential (one client), so each number is one call's latency. Results go to
stdout and ``bench/results/mcp.json``; read the ratios, not the milliseconds (the machine
is shared).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, Process, daemon, free_port, machine, percentile, save, wait_ready

import aiohttp  # noqa: E402
import httpx  # noqa: E402
import httpx2  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

import corpus  # noqa: E402


async def timed(calls: int, fn) -> dict[str, float]:
    for _ in range(5):  # warm-up
        await fn()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        await fn()
        times.append((time.perf_counter() - start) * 1000)
    return {"median_ms": percentile(times, 50), "p95_ms": percentile(times, 95)}


async def measure(url: str, mcp_url: str, node_id: str, query: str, calls: int) -> dict:
    out: dict[str, dict] = {}
    async with httpx.AsyncClient(base_url=url) as http:
        out["http search"] = await timed(calls, lambda: http.get("/search", params={"q": query, "k": 8}))
        out["http node"] = await timed(calls, lambda: http.get(f"/nodes/{node_id}"))
    params = StdioServerParameters(command=sys.executable, args=["-m", "arcology_oracle", "mcp", "--url", url], cwd=str(REPO))
    async with Client(params) as client:
        out["mcp stdio search_notes"] = await timed(calls, lambda: client.call_tool("search_notes", {"query": query, "k": 8}))
        out["mcp stdio read_note"] = await timed(calls, lambda: client.call_tool("read_note", {"id": node_id}))
    async with httpx2.AsyncClient() as http2, Client(streamable_http_client(mcp_url, http_client=http2)) as client:
        out["mcp http search_notes"] = await timed(calls, lambda: client.call_tool("search_notes", {"query": query, "k": 8}))
        out["mcp http read_note"] = await timed(calls, lambda: client.call_tool("read_note", {"id": node_id}))
    for kind in ("stdio", "http"):
        for tool, base in (("search_notes", "http search"), ("read_note", "http node")):
            row = out[f"mcp {kind} {tool}"]
            row["ratio_to_http"] = row["median_ms"] / out[base]["median_ms"]
    return out


async def main_async(args) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        roam = Path(tmp) / "roam"
        corpus.generate(roam, args.headings, seed=1)
        lines = [line for f in sorted(roam.rglob("*.org")) for line in f.read_text().splitlines()]
        node_id = next(line.split()[-1] for line in lines if line.startswith(":ID:"))
        query = next(line.lstrip("* ") for line in lines if line.startswith("* "))
        fake = Process([sys.executable, "-m", "tests.fakes"], Path(tmp) / "fake.log")
        mcp_port = free_port()
        server = daemon(roam, Path(tmp) / "db.sqlite3", fake.url, "nomic-embed-text", Path(tmp) / "daemon.log",
                        extra_env={"ARCOLOGY_ORACLE_MCP_PORT": str(mcp_port)})  # fmt: skip
        try:
            async with aiohttp.ClientSession() as session:
                status = await wait_ready(session, server.url)
            results = await measure(server.url, f"http://127.0.0.1:{mcp_port}/mcp", node_id, query, args.calls)
        finally:
            server.stop()
            fake.stop()
    return {"machine": machine(), "headings": status["headings"], "calls": args.calls, "query": query, "results": results}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--headings", type=int, default=2000)
    args = parser.parse_args()
    data = asyncio.run(main_async(args))
    for name, row in data["results"].items():
        ratio = f"  x{row['ratio_to_http']:.2f} of plain HTTP" if "ratio_to_http" in row else ""
        print(f"{name:24} median {row['median_ms']:7.2f} ms  p95 {row['p95_ms']:7.2f} ms{ratio}")
    save("mcp", data)
    print(json.dumps({"headings": data["headings"], "calls": data["calls"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
