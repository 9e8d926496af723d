"""The MCP ``remember`` tool passes on a refused capture's ``retry`` (see
tests/index/test_refusals_say_retry.py for the daemon's side): an agent reads, in the
tool error's words and in its structured content, whether sending the same text again
in a moment can work. Over both transports (``arcology-oracle mcp`` on stdio and
``serve --mcp-port``), against the real daemon and real files."""

from __future__ import annotations

import os

from tests.index.test_write_attacks import serve, today_rel, user_daily
from tests.mcp_server.test_mcp import http_mcp, stdio_client
from tests.runners import free_port

WRITES = {"ARCOLOGY_ORACLE_MCP_ALLOW_WRITES": "true"}
TOKEN = "tok-remember"


def refusal(result) -> tuple[str, dict]:
    assert result.is_error, result.content
    return " ".join(block.text for block in result.content), result.structured_content


async def test_a_refused_remember_says_whether_to_try_again(tmp_path, fake_ollama):
    roam = tmp_path / "roam"
    (roam / "daily").mkdir(parents=True)
    daily = roam / today_rel()
    daily.write_text(user_daily())
    (roam / "inbox.org").write_text("#+title: Inbox\n")
    mcp_port = free_port()
    daemon = await serve(tmp_path, roam, fake_ollama, token=TOKEN, env=WRITES, extra_args=["--mcp-port", str(mcp_port)])
    try:
        # Emacs holds both notes with unsaved edits: saved, the capture can go in.
        for note in (daily, roam / "inbox.org"):
            os.symlink("me@elsewhere.99:1700000000", note.parent / f".#{note.name}")
        before = daily.read_bytes()
        async with stdio_client("--url", daemon.url, env={**WRITES, "ARCOLOGY_ORACLE_TOKEN": TOKEN}) as stdio:
            async with http_mcp(f"http://127.0.0.1:{mcp_port}/mcp", daemon.headers) as http:
                for client in (stdio, http):
                    text, data = refusal(await client.call_tool("remember", {"text": "Call the plumber"}))
                    assert data and data["retry"] is True and data["error"] in text, (text, data)
                    assert text.endswith("(retry: true: the same call can succeed in a moment)"), text

                # A note that is not UTF-8 never takes a capture.
                os.unlink(roam / ".#inbox.org")
                (roam / "inbox.org").write_bytes(b"#+title: Inbox\n\xe9t\xe9\n")
                for client in (stdio, http):
                    text, data = refusal(await client.call_tool("remember", {"text": "Call the plumber"}))
                    assert data and data["retry"] is False and "UTF-8" in data["error"] and data["error"] in text, (text, data)
                    assert text.endswith("(retry: false: the same call will not succeed; nothing was remembered)"), text
        assert daily.read_bytes() == before
    finally:
        daemon.stop()
