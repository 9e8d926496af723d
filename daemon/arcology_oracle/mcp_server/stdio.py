"""``arcology-oracle mcp``: the MCP server over stdin/stdout, for clients that launch it.

It needs no index of its own: every call goes to the running daemon (``daemon_url``, or
``http://host:port`` from the same settings as ``serve``). If no daemon answers, the
server still starts and each call returns a tool error naming the URL.
"""

from __future__ import annotations

import anyio

from ..config import Settings
from ..http.client import DaemonClient
from .tools import build_server


def run_stdio(settings: Settings) -> int:
    """Serve MCP on stdio until the client closes stdin. Returns the exit code."""

    async def main() -> None:
        async with DaemonClient.from_settings(settings) as client:
            await build_server(client, settings).run_stdio_async()

    anyio.run(main)
    return 0
