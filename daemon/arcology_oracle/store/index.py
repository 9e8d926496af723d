"""The index store: files, headings, chunks, links, FTS5 and vectors in one SQLite file.

:class:`Store` is one connection to it, assembled from one class per job:

- :mod:`.connection`: opening (and rebuilding a corrupt file), transactions, ``meta``,
  checkpoints;
- :mod:`.vector_sync`: the embedding model, storing and dropping vectors, pending texts,
  the in-memory vector index kept in step;
- :mod:`.writes`: a file's headings, chunks and links replaced in one transaction;
- :mod:`.reads`: heading, node, file and chunk rows;
- :mod:`.search`: FTS5 matches, nearest vectors, vectors and note texts for re-scoring;
- :mod:`.turns`: dialogue turns, their keyword search and scenes;
- :mod:`.summaries`: the summaries cache;
- :mod:`.links`: rejected link suggestions and the node graph;
- :mod:`.integrity`: self-checks and their repair (for the doctor).

A store is used from one thread at a time; the daemon keeps a single writer (the
indexer) and one reader per worker thread. All SQL of the package lives in this folder.
"""

from __future__ import annotations

from .connection import WRITER_CACHE_KIB, StoreBase
from .integrity import Integrity, IntegrityReport
from .links import LinkGraph
from .reads import Reads
from .search import Search
from .summaries import SummaryCache
from .turns import Turns
from .vector_sync import VEC_TABLE, EmbeddingModelInfo
from .writes import FileState, FileWrites

__all__ = ["Store", "StoreBase", "FileState", "EmbeddingModelInfo", "IntegrityReport", "VEC_TABLE", "WRITER_CACHE_KIB"]


class Store(FileWrites, Search, Reads, Turns, SummaryCache, LinkGraph, Integrity):
    """Synchronous access to the index database. See the module docstring."""
