"""The summaries cache: a generic note summary kept by key until its file changes."""

from __future__ import annotations

import time

from .connection import StoreBase


class SummaryCache(StoreBase):
    """Cached summaries (the oracle's; keys are its business)."""

    def cached_summary(self, key: str) -> str | None:
        row = self.conn.execute("SELECT summary FROM summaries WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def cache_summary(self, key: str, summary: str, file: str | None = None) -> None:
        """Cache a summary; with ``file``, it is dropped when that file is re-indexed or
        deleted (so a summary never outlives the text it was made from)."""
        self.conn.execute(
            "INSERT OR REPLACE INTO summaries (key, file, summary, created_at) VALUES (?, ?, ?, ?)",
            (key, file, summary, time.time()),
        )
