"""SQLite storage: connections, migrations and the index store."""

from .index import EmbeddingModelInfo, FileState, Store

__all__ = ["EmbeddingModelInfo", "FileState", "Store"]
