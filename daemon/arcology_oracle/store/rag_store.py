"""Reads of the index that only answering questions needs (synchronous, one Store).

Kept apart from :mod:`arcology_oracle.store` so the store stays about indexing; every
function takes a :class:`~arcology_oracle.store.Store` and runs on a reader thread
through ``OracleIndex.read``.
"""

from __future__ import annotations

from collections.abc import Sequence

from .index import Store


def heading_chunks(store: Store, heading_ids: Sequence[int]) -> dict[int, list[tuple[str, str]]]:
    """``(hash, text)`` of each heading's chunks, in order."""
    out: dict[int, list[tuple[str, str]]] = {}
    for heading_id in heading_ids:
        out[heading_id] = [
            (r[0], r[1])
            for r in store.conn.execute(
                "SELECT hash, text FROM chunks WHERE heading = ? ORDER BY ordinal", (heading_id,)
            )
        ]
    return out


def file_info(store: Store, paths: Sequence[str]) -> dict[str, dict]:
    """``{path: {"title", "mtime_ns", "hash"}}`` for the indexed files among ``paths``."""
    out: dict[str, dict] = {}
    for path in set(paths):
        row = store.conn.execute("SELECT title, mtime_ns, hash FROM files WHERE path = ?", (path,)).fetchone()
        if row is not None:
            out[path] = {"title": row[0], "mtime_ns": row[1], "hash": row[2]}
    return out


def subtree(store: Store, *, node_id: str | None = None, path: str | None = None) -> list[dict] | None:
    """The headings of a whole note, in file order, or None when it is not indexed.

    A file node (or ``path``) is every heading of its file; a heading node is that heading
    and the headings below it (its subtree, child nodes included, as Org shows it).
    Private, crypt and excluded headings are never in the index, so never here.
    """
    if path is None:
        node = store.node(node_id)
        if node is None:
            return None
        rows = store.file_headings(node["file"])
        if node["level"] == 0:
            return rows
        inside = [r for r in rows if r["start_line"] >= node["start_line"]]
        out = [inside[0]] if inside else []
        for row in inside[1:]:
            if row["level"] <= node["level"]:
                break
            out.append(row)
        return out
    rows = store.file_headings(path)
    return rows or None
