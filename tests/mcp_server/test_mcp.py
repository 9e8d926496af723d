"""The MCP server, driven by the official SDK's own client against the real daemon.

Over stdio the client spawns ``arcology-oracle mcp`` as a subprocess; over HTTP it talks
to ``arcology-oracle serve --mcp-port``. The daemon is the real process with the fake
Ollama (see conftest.py).
"""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import socket
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.org_samples import CRYPT_ID, EXCLUDED_ID, IDS, PRIVATE_DIARY_ID, SECRET_WORDS
from tests.runners import REPO, free_port, start_daemon, wait_indexed

SCRIPT = Path(sys.executable).with_name("arcology-oracle")


@asynccontextmanager
async def stdio_client(*args: str, env: dict[str, str] | None = None):
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "arcology_oracle"]
    params = StdioServerParameters(
        command=command[0], args=[*command[1:], "mcp", *args], env={**os.environ, **(env or {})}, cwd=str(REPO)
    )
    async with Client(params) as client:
        yield client


def structured(result) -> dict:
    assert not result.is_error, result.content
    return result.structured_content


def error_text(result) -> str:
    assert result.is_error, result.structured_content
    return " ".join(block.text for block in result.content)


def assert_nothing_private(data) -> None:
    text = json.dumps(data, ensure_ascii=False) if not isinstance(data, str) else data
    for word in SECRET_WORDS:
        assert word not in text
    for node_id in (CRYPT_ID, EXCLUDED_ID, PRIVATE_DIARY_ID):
        assert node_id not in text
    assert "Private thoughts" not in text and "Even more private" not in text


async def test_stdio_tools_resources_and_errors(daemon):
    await wait_indexed(daemon)
    async with stdio_client("--url", daemon.url) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        # remember needs writes enabled.
        assert set(tools) == {"search_notes", "similar_notes", "read_note", "list_journal"}
        for tool in tools.values():
            assert tool.description and len(tool.description) > 80
            assert tool.input_schema["type"] == "object" and tool.input_schema["properties"]
            assert tool.annotations.read_only_hint is True
        assert tools["read_note"].input_schema["required"] == ["id"]
        assert tools["search_notes"].input_schema["properties"]["k"]["maximum"] == 50
        assert sorted(tools["list_journal"].input_schema["required"]) == ["since", "until"]

        # search_notes
        hits = structured(await client.call_tool("search_notes", {"query": "feeding the sourdough starter", "k": 5}))
        assert hits["results"] and len(hits["results"]) <= 5
        first = hits["results"][0]
        assert first["node_id"] in (IDS["starter"], IDS["sourdough"])
        assert first["link"].startswith(f"[[id:{first['node_id']}][")

        # similar_notes, by node and by text
        hits = structured(await client.call_tool("similar_notes", {"node_id": IDS["sourdough"], "k": 3}))
        ids = [r["node_id"] for r in hits["results"]]
        assert IDS["hydration"] in ids and IDS["sourdough"] not in ids
        hits = structured(await client.call_tool("similar_notes", {"text": "tomato blight on the leaves", "k": 3}))
        assert hits["results"][0]["node_id"] in (IDS["blight"], IDS["tomatoes"])

        # read_note: title, outline, tags, body, links and backlinks with titles
        note = structured(await client.call_tool("read_note", {"id": IDS["sourdough"]}))
        assert note["title"] == "Sourdough Baking" and note["tags"] == ["baking", "bread"]
        assert "* Bulk fermentation" in note["body"] and f":ID:       {IDS['sourdough']}" in note["body"]
        assert {"node_id": IDS["hydration"], "title": "Bread Hydration"} in note["links"]
        assert {"node_id": IDS["journal_0301"], "title": "2024-03-01"} in note["backlinks"]
        child = structured(await client.call_tool("read_note", {"id": IDS["bakers_percentages"]}))
        assert child["outline_path"] == [] and child["body"].startswith("* Baker's percentages\n:PROPERTIES:")

        # the resource: the node's org text
        resource = await client.read_resource(f"org-roam://node/{IDS['hydration']}")
        text = resource.contents[0].text
        assert "#+title: Bread Hydration" in text and "** Stretch and folds" in text

        # errors: unknown id, bad arguments; the server goes on answering
        assert "no node with ID" in error_text(await client.call_tool("read_note", {"id": "no-such-node"}))
        for dots in (".", ".."):  # path segments, not IDs: /nodes/.. is the daemon's own page
            assert "no node with ID" in error_text(await client.call_tool("read_note", {"id": dots}))
        assert "no node with ID" in error_text(await client.call_tool("similar_notes", {"node_id": "no-such-node"}))
        assert "exactly one" in error_text(await client.call_tool("similar_notes", {"node_id": IDS["sourdough"], "text": "x"}))
        assert "exactly one" in error_text(await client.call_tool("similar_notes", {}))
        for bad_id in ("", "x" * 9000):  # said of the tool's argument, not of the daemon's HTTP
            assert "node_id" in error_text(await client.call_tool("similar_notes", {"node_id": bad_id}))
        assert "k" in error_text(await client.call_tool("search_notes", {"query": "bread", "k": 0}))
        assert "since" in error_text(await client.call_tool("search_notes", {"query": "bread", "since": "last March"}))
        assert "query" in error_text(await client.call_tool("search_notes", {}))
        assert "since is after until" in error_text(
            await client.call_tool("search_notes", {"query": "bread", "since": "2024-03-02", "until": "2024-03-01"})
        )
        with pytest.raises(MCPError, match="no node with ID"):
            await client.read_resource("org-roam://node/no-such-node")
        assert structured(await client.call_tool("read_note", {"id": IDS["hydration"]}))["title"] == "Bread Hydration"


async def test_stdio_never_returns_private_text(daemon):
    await wait_indexed(daemon)
    async with stdio_client("--url", daemon.url) as client:
        for word in (*SECRET_WORDS, "private thoughts"):
            hits = structured(await client.call_tool("search_notes", {"query": word, "k": 50}))
            assert_nothing_private(hits)
            assert_nothing_private(structured(await client.call_tool("similar_notes", {"text": word, "k": 50})))
        journal = structured(await client.call_tool("read_note", {"id": IDS["journal_0301"]}))
        assert "* Meeting with Sam" in journal["body"]
        assert_nothing_private(journal)
        emacs = await client.read_resource(f"org-roam://node/{IDS['emacs_config']}")
        assert "* Keybindings" in emacs.contents[0].text
        assert_nothing_private(emacs.contents[0].text)
        for node_id in (CRYPT_ID, EXCLUDED_ID, PRIVATE_DIARY_ID):
            assert "no node with ID" in error_text(await client.call_tool("read_note", {"id": node_id}))
            with pytest.raises(MCPError):
                await client.read_resource(f"org-roam://node/{node_id}")


async def test_stdio_search_by_date(daemon):
    await wait_indexed(daemon)
    async with stdio_client("--url", daemon.url) as client:
        args = {"query": "sourdough starter baked loaf", "k": 10}
        undated = structured(await client.call_tool("search_notes", args))
        assert {r["file"] for r in undated["results"]} > {"journal/2024-03-01.org"}
        day = structured(await client.call_tool("search_notes", {**args, "since": "2024-03-01", "until": "2024-03-01"}))
        assert day["results"] and {r["file"] for r in day["results"]} == {"journal/2024-03-01.org"}
        assert all(r["date"] == "2024-03-01" for r in day["results"]) and "2024-03-01" in day["note"]
        # The starter node is dated by its CREATED property (2024-02-10).
        february = structured(await client.call_tool("search_notes", {**args, "until": "2024-02-28"}))
        assert [r["node_id"] for r in february["results"]] == [IDS["starter"]] * len(february["results"])
        assert february["results"]
        # Dates are the headings' own: in the undated Coffee Brewing note, "Grinder
        # settings" is dated by its logbook entry (2024-01-15).
        grinder = structured(await client.call_tool("search_notes", {"query": "grind V60", "since": "2024-01-15", "until": "2024-01-15"}))
        assert [(r["heading"], r["date"]) for r in grinder["results"]] == [("Grinder settings", "2024-01-15")]


async def test_stdio_list_journal(daemon):
    await wait_indexed(daemon)
    async with stdio_client("--url", daemon.url) as client:
        journal = structured(await client.call_tool("list_journal", {"since": "2024-03-01", "until": "2024-03-02"}))
        listed = [(r["date"], r["heading"]) for r in journal["results"]]
        assert listed[:3] == [
            ("2024-03-01", "Baked a sourdough loaf"),
            ("2024-03-01", "Fixed a borrow checker error"),
            ("2024-03-01", "Meeting with Sam <2024-03-01 Fri 14:00>"),
        ]
        assert [d for d, _ in listed] == sorted(d for d, _ in listed) and listed[-1] == ("2024-03-02", "Read a chapter of Norman")
        assert journal["results"][0]["link"] == f"[[id:{IDS['journal_0301']}][2024-03-01]]"
        assert journal["more"] is False and journal["note"] is None
        assert_nothing_private(journal)
        short = structured(await client.call_tool("list_journal", {"since": "2024-03-01", "until": "2024-03-02", "k": 2}))
        assert len(short["results"]) == 2 and short["more"] is True
        empty = structured(await client.call_tool("list_journal", {"since": "2023-01-01", "until": "2023-12-31"}))
        assert empty["results"] == [] and empty["note"] == "no journal headings dated 2023-01-01 to 2023-12-31"
        assert "since is after until" in error_text(
            await client.call_tool("list_journal", {"since": "2024-03-02", "until": "2024-03-01"})
        )
        assert "until" in error_text(await client.call_tool("list_journal", {"since": "2024-03-01"}))
        assert "since" in error_text(await client.call_tool("list_journal", {"since": "last week", "until": "2024-03-01"}))


ORACLE_CHAT = """#+title: Rye chat
* Which flour for a rye starter?
:PROPERTIES:
:ROLE: user
:END:
My rye starter smells of acetone.
** Oracle
:PROPERTIES:
:ROLE: oracle
:END:
Feed it wholemeal rye with the quokkaberry method.
"""


async def test_stdio_without_a_journal_and_with_an_oracle_answer(tmp_path, roam_dir, fake_ollama):
    for daily in (roam_dir / "journal").iterdir():
        daily.unlink()
    (roam_dir / "rye-chat.org").write_text(ORACLE_CHAT)
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url)
    try:
        await wait_indexed(daemon)
        async with stdio_client("--url", daemon.url) as client:
            answer = structured(await client.call_tool("list_journal", {"since": "2000-01-01", "until": "2030-12-31"}))
            assert answer["results"] == [] and "the notes have no journal" in answer["note"]
            # The oracle's own earlier answer is listed, marked as such.
            hits = structured(await client.call_tool("search_notes", {"query": "quokkaberry", "k": 3}))
            assert [(r["heading"], r["role"]) for r in hits["results"]] == [("Oracle", "oracle")]
    finally:
        daemon.stop()


async def test_stdio_with_no_daemon_reports_the_url_and_keeps_running(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    async with stdio_client("--url", url) as client:
        assert {t.name for t in (await client.list_tools()).tools} >= {"search_notes", "read_note"}
        for name, args in (
            ("search_notes", {"query": "bread"}),
            ("similar_notes", {"text": "bread"}),
            ("read_note", {"id": IDS["sourdough"]}),
            ("search_notes", {"query": "bread", "since": "2024-01-01"}),
            ("list_journal", {"since": "2024-01-01", "until": "2024-01-31"}),
        ):
            message = error_text(await client.call_tool(name, args))
            assert url in message and "no arcology-oracle daemon answers" in message
        with pytest.raises(MCPError, match=url.replace(".", r"\.")):
            await client.read_resource(f"org-roam://node/{IDS['sourdough']}")


async def test_stdio_url_and_token_from_the_environment(tmp_path, roam_dir, fake_ollama):
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, token="s3cret-token")
    try:
        await wait_indexed(daemon)
        async with stdio_client(env={"ARCOLOGY_ORACLE_DAEMON_URL": daemon.url}) as client:
            assert "refused the token" in error_text(await client.call_tool("read_note", {"id": IDS["sourdough"]}))
        env = {"ARCOLOGY_ORACLE_DAEMON_URL": daemon.url, "ARCOLOGY_ORACLE_TOKEN": "s3cret-token"}
        async with stdio_client(env=env) as client:
            assert structured(await client.call_tool("read_note", {"id": IDS["sourdough"]}))["title"] == "Sourdough Baking"
    finally:
        daemon.stop()


async def test_remember_only_when_writes_are_allowed(daemon, roam_dir):
    async with stdio_client("--url", daemon.url, env={"ARCOLOGY_ORACLE_MCP_ALLOW_WRITES": "true"}) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "remember" in tools and tools["remember"].annotations.read_only_hint is False
        # The daemon's /memorize writes today's daily note; the tool answers its link.
        result = await client.call_tool("remember", {"text": "buy rye flour"})
        assert not result.is_error, result.content
        link = " ".join(block.text for block in result.content)
        assert link.startswith("[[id:") and link.endswith("][buy rye flour]]")
        daily = roam_dir / "daily" / f"{datetime.date.today():%Y-%m-%d}.org"
        assert "* buy rye flour" in daily.read_text()


@asynccontextmanager
async def http_mcp(url: str, headers: dict[str, str]):
    async with httpx2.AsyncClient(headers=headers) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            yield client


async def test_streamable_http_beside_the_daemon(tmp_path, roam_dir, fake_ollama):
    mcp_port = free_port()
    daemon = await start_daemon(
        tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, token="tok-123", extra_args=["--mcp-port", str(mcp_port)]
    )
    url = f"http://127.0.0.1:{mcp_port}/mcp"
    try:
        await wait_indexed(daemon)
        async with http_mcp(url, daemon.headers) as client:
            assert {t.name for t in (await client.list_tools()).tools} == {"search_notes", "similar_notes", "read_note", "list_journal"}
            hits = structured(await client.call_tool("search_notes", {"query": "covering index sqlite", "k": 3}))
            assert hits["results"][0]["file"] == "sqlite-indexing.org"
            note = structured(await client.call_tool("read_note", {"id": IDS["journal_0301"]}))
            assert note["date"] == "2024-03-01"
            assert_nothing_private(note)
            assert "no node with ID" in error_text(await client.call_tool("read_note", {"id": "nope"}))
            resource = await client.read_resource(f"org-roam://node/{IDS['sqlite']}")
            assert "FTS5 full text search" in resource.contents[0].text

        # The daemon's guard (every rule: tests/http/test_guard_ports.py).
        init = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        async with httpx.AsyncClient() as http:
            resp = await http.post(url, json=init, headers=accept)
            assert resp.status_code == 401 and resp.json()["error"] == "missing or wrong bearer token"
            resp = await http.post(url, json=init, headers={**accept, "Authorization": "Bearer wrong"})
            assert resp.status_code == 401
            auth = {**accept, **daemon.headers}
            resp = await http.post(url, json=init, headers={**auth, "Host": f"evil.example:{mcp_port}"})
            assert resp.status_code == 403
            resp = await http.post(url, json=init, headers={**auth, "Origin": "http://evil.example"})
            assert resp.status_code == 403
    finally:
        daemon.stop()


def test_mcp_port_in_use_is_a_clear_error_and_touches_nothing(tmp_path, roam_dir):
    """As a busy daemon port (tests/test_daemon.py): it was bound after the locks and the
    start's clean-up of the notes (a killed import's staging folder removed, a killed
    forget settled), which a start that ends at once must leave alone."""
    db = tmp_path / "fresh" / "x.db"
    staging = roam_dir / ".arcology-import-abcd1234"
    staging.mkdir()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "arcology_oracle", "serve", "--roam-dir", str(roam_dir), "--db", str(db),
             "--port", str(free_port()), "--mcp-port", str(port)],
            capture_output=True, text=True, timeout=60, cwd=REPO,
        )  # fmt: skip
    assert proc.returncode == 2 and f"cannot listen for MCP on 127.0.0.1:{port}" in proc.stderr
    assert staging.is_dir() and not db.parent.exists(), proc.stderr  # (no database, no lock file)


async def test_stdio_speaks_to_an_older_client(daemon):
    """mcp.el and many desktop clients still open with a 2024-11-05 initialize and
    newline-delimited JSON-RPC; the server answers in that version."""
    await wait_indexed(daemon)
    proc = await asyncio.create_subprocess_exec(
        str(SCRIPT), "mcp", "--url", daemon.url,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip

    async def rpc(message: dict) -> dict | None:
        proc.stdin.write((json.dumps(message) + "\n").encode())
        await proc.stdin.drain()
        if "id" not in message:
            return None
        return json.loads(await asyncio.wait_for(proc.stdout.readline(), 30))

    try:
        init = await rpc({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "mcp.el", "version": "0.1"}},
        })  # fmt: skip
        assert init["result"]["protocolVersion"] == "2024-11-05"
        assert init["result"]["capabilities"]["tools"] is not None
        await rpc({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = await rpc({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert {t["name"] for t in tools["result"]["tools"]} == {"search_notes", "similar_notes", "read_note", "list_journal"}
        call = await rpc({
            "jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "read_note", "arguments": {"id": IDS["rust_ownership"]}},
        })  # fmt: skip
        assert call["result"]["isError"] is False
        assert json.loads(call["result"]["content"][0]["text"])["title"] == "Rust Ownership"
    finally:
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), 30)
    assert proc.returncode == 0
