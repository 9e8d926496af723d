"""The notes as MCP tools: an MCP server (official ``mcp`` SDK) over a running daemon.

Named ``mcp_server`` rather than ``mcp`` so that nothing here can be mistaken for the
SDK's own top-level ``mcp`` package. ``tools`` builds the server, ``views`` shapes what
it returns, ``stdio`` runs it for ``arcology-oracle mcp`` and ``http_transport`` serves it
over streamable HTTP beside the daemon (``serve --mcp-port``).
"""
