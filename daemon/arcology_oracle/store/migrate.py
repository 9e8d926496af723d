"""Applies the schema migrations of :mod:`.migrations` that a database has not had yet,
each in one transaction with its record in ``_migrations``."""

from __future__ import annotations

import time

from .db import sqlite
from .generation_cache import NONE_PENDING
from .migrations import MIGRATIONS, Migration


def migrate(conn) -> list[str]:
    """Apply pending migrations; return the names applied. Each runs in one transaction."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    applied = []
    for fn in MIGRATIONS:
        if fn.__name__ in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            # executescript would COMMIT our transaction first; run statements one by one.
            _run_in_transaction(conn, fn)
            conn.execute(
                "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (fn.__name__, time.time())
            )
            # It may have changed chunks or vectors without a new write generation: in the same
            # transaction, no record that none was pending stays (vector_sync._none_pending_upto).
            if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone():
                conn.execute("DELETE FROM meta WHERE key = ?", (NONE_PENDING,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(fn.__name__)
    return applied


class _StatementRunner:
    """Stands in for the connection so ``executescript`` runs inside the open transaction."""

    def __init__(self, conn):
        self._conn = conn

    def executescript(self, script: str) -> None:
        for statement in _split_statements(script):
            self._conn.execute(statement)

    def execute(self, *args):
        return self._conn.execute(*args)


def _run_in_transaction(conn, fn: Migration) -> None:
    fn(_StatementRunner(conn))


def _split_statements(script: str) -> list[str]:
    """Split a script into complete statements using SQLite's own completeness test."""
    statements, current = [], ""
    for line in script.splitlines(keepends=True):
        if not current and line.strip().startswith("--"):
            continue
        current += line
        if sqlite.complete_statement(current):
            if current.strip():
                statements.append(current.strip())
            current = ""
    if current.strip():
        statements.append(current.strip())
    return statements
