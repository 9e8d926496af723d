"""Tests of arcology_oracle.mcp_server."""
