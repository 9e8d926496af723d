"""Synthetic headings written straight into a :class:`~arcology_oracle.store.Store`, for
the store and vector tests (no org files, no parsing)."""

from __future__ import annotations

from arcology_oracle.notes.records import Chunk, Heading, ParsedFile, sha256_hex
from arcology_oracle.store import Store


def heading(i: int) -> Heading:
    return Heading(
        node_id=f"node-{i}", own_id=f"node-{i}", level=1, title=f"Heading {i}", olp=(), tags=(), todo=None,
        properties={}, body=f"body {i}", text=f"body {i}", start_line=i + 1, end_line=i + 1, node_title="T",
    )  # fmt: skip


def write_file(store: Store, path: str, numbers: list[int]) -> list[str]:
    parsed = ParsedFile(path=path, title="T", file_id=None, headings=[heading(i) for i in numbers])
    chunks = [[Chunk(0, f"text {path} {i}", sha256_hex(f"text {path} {i}"))] for i in numbers]
    store.replace_file(parsed, size=1, mtime_ns=1, file_hash=sha256_hex(path + str(numbers)), chunks=chunks)
    return [c[0].hash for c in chunks]
