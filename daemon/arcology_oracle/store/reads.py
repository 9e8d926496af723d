"""Reading headings, nodes, files, chunks and links: rows as dicts, for search results,
the context of a question, summaries and the HTTP API.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from . import holdings
from .connection import StoreBase
from .oracle_words import users_chunk_sql
from .withheld import hiding


class Reads(StoreBase):
    """Row reads of the index (see the module docstring)."""

    def counts(self) -> dict[str, int]:
        """Files, headings, chunks, embedded and pending chunk counts: of what a reader
        shows, so nothing of a note it hides (store/withheld.py) is counted."""
        one = lambda sql: self.conn.execute(sql).fetchone()[0]  # noqa: E731
        # the chunks of the headings shown (the join, not free, only when some are hidden)
        shown = "JOIN headings h ON h.id = c.heading" if hiding(self.conn) else ""
        chunks = one(f"SELECT count(*) FROM chunks c {shown}")
        embedded = one(
            f"SELECT count(*) FROM chunks c {shown} WHERE EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash)"
        )
        return {
            "files": one("SELECT count(*) FROM files"),
            "headings": one("SELECT count(*) FROM headings"),
            "nodes": one("SELECT count(DISTINCT own_id) FROM headings WHERE own_id IS NOT NULL"),
            "chunks": chunks,
            "embedded": embedded,
            "pending": chunks - embedded,
        }

    def rows_of_node(self, node_id: str) -> int:
        """Rows still holding ``node_id``: headings that carry or belong to it, and links
        from it (a forgotten capture must leave none)."""
        one = self.conn.execute
        headings = one("SELECT count(*) FROM headings WHERE own_id = ? OR node_id = ?", (node_id, node_id)).fetchone()[0]
        return headings + one("SELECT count(*) FROM links WHERE src_node = ?", (node_id,)).fetchone()[0]

    def files_of_node(self, node_id: str) -> list[str]:
        """The files whose headings carry ``node_id`` as their own ID (more than one when
        a note is indexed under two names, a hard link, or the heading was copied)."""
        rows = self.conn.execute(
            "SELECT DISTINCT f.path FROM headings h JOIN files f ON f.id = h.file WHERE h.own_id = ? ORDER BY f.path",
            (node_id,),
        )
        return [row[0] for row in rows]

    def file_paths(self) -> list[str]:
        """The path of every indexed file."""
        return [row[0] for row in self.conn.execute("SELECT path FROM files")]

    def headings(self, ids: Sequence[int]) -> dict[int, dict]:
        """Full heading rows (with the file path as ``file``) by heading id (one query)."""
        rows = self.conn.execute(
            "SELECT h.*, f.path AS file_path FROM headings h JOIN files f ON f.id = h.file"
            " WHERE h.id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(ids)),),
        ).fetchall()
        return {row["id"]: _heading_dict(row) for row in rows}

    def result_rows(self, ids: Sequence[int]) -> dict[int, dict]:
        """The part of :meth:`headings`' rows a search result shows (``id``, ``node_id``,
        ``own_id``, ``node_title``, ``title``, ``olp``, ``file``, ``start_line``,
        ``text``, ``date``), the same values: every result of /similar and /search reads
        its row, and the rest (the body, properties, tags...) was most of that."""
        rows = self.conn.execute(
            "SELECT h.id, h.node_id, h.own_id, h.node_title, h.title, h.olp, f.path, h.start_line, h.text, h.date"
            " FROM headings h JOIN files f ON f.id = h.file WHERE h.id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(ids)),),
        ).fetchall()
        return {
            r[0]: {
                "id": r[0], "node_id": r[1], "own_id": r[2], "node_title": r[3], "title": r[4],
                "olp": [] if r[5] == "[]" else json.loads(r[5]), "file": r[6], "start_line": r[7], "text": r[8],
                "date": r[9],
            }  # fmt: skip
            for r in rows
        }

    def heading_owners(self, ids: Sequence[int]) -> dict[int, tuple[str | None, str]]:
        """``(node id or None, file path)`` by heading id: what grouping results by note
        needs, without reading (and decoding) whole rows."""
        return {
            r[0]: (r[1], r[2])
            for r in self.conn.execute(
                "SELECT h.id, h.node_id, f.path FROM headings h JOIN files f ON f.id = h.file"
                " WHERE h.id IN (SELECT value FROM json_each(?))",
                (json.dumps(list(ids)),),
            )
        }

    def vector_rows_of(self, node_ids: Sequence[str]) -> list[int]:
        """The vector row ids (``embeddings.id``) of the chunks of the nodes ``node_ids``
        that no heading of another node shares (a text kept in two notes keeps its row):
        what a search leaving those nodes out need not read
        (:meth:`~.search.Search.knn_headings`' ``skip``)."""
        return [
            r[0]
            for r in self.conn.execute(
                "WITH out AS (SELECT id FROM headings WHERE node_id IN (SELECT value FROM json_each(?)))"
                " SELECT e.id FROM embeddings e WHERE e.hash IN (SELECT hash FROM chunks WHERE heading IN out)"
                " AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.hash = e.hash AND c.heading NOT IN out)",
                (json.dumps(list(node_ids)),),
            )
        ]

    def copies_of(self, heading_id: int, among: Sequence[int]) -> set[int]:
        """Those of ``among`` (``heading_id`` aside) holding ``heading_id``'s title and
        text word for word (white space around the text aside): the same section kept
        twice. None when its text is empty: headings sharing only a title ("Notes") are
        no copies of each other."""
        space = "' ' || char(9, 10, 13)"
        rows = self.conn.execute(
            f"SELECT h.id FROM headings h, headings q WHERE q.id = ? AND trim(q.text, {space}) != ''"
            " AND h.id IN (SELECT value FROM json_each(?)) AND h.id != q.id"
            f" AND h.title = q.title AND trim(h.text, {space}) = trim(q.text, {space})",
            (heading_id, json.dumps(list(among))),
        )
        return {r[0] for r in rows}

    def holders_among(self, node_ids: Sequence[str]) -> set[str]:
        """Those of ``node_ids`` holding every heading of another of them word for word
        (title and text, white space around the text aside, as :meth:`copies_of`), and
        more: a manual's chapter holding its sections, a note compiled from others.
        Headings with no text and the oracle's words count for neither side. Each note's
        headings, once read, are served from memory until a write changes them
        (:mod:`.holdings`)."""
        ids = list(dict.fromkeys(node_ids))
        if not self.shares_reads:  # it may see its own uncommitted writes: share nothing
            return holdings.holders(self._read_holdings(ids))
        cache = getattr(self, "_holdings", None)
        if cache is None:
            cache = self._holdings = holdings.shared_holdings(self._shared_key())
        token = self.nodes_generation()  # before the rows: see generation_cache
        found, missing = cache.lookup(token, ids, self.notes_changed_since)
        if missing:
            read = self._read_holdings(missing)
            cache.remember(token, read)
            found.update(read)
        return holdings.holders(found)

    def _read_holdings(self, node_ids: list[str]) -> dict[str, holdings.Holding]:
        """Each of ``node_ids``' :func:`.holdings.holding_of` (empty for a note with none)."""
        trimmed = "trim(text, ' ' || char(9, 10, 13))"
        rows = self.conn.execute(
            f"SELECT node_id, title, {trimmed} FROM headings WHERE node_id IN (SELECT value FROM json_each(?))"
            f" AND oracle = 0 AND {trimmed} != ''",
            (json.dumps(node_ids),),
        )
        by_note: dict[str, list[tuple[str, str]]] = {node: [] for node in node_ids}
        for node_id, title, text in rows:
            by_note[node_id].append((title, text))
        return {node: holdings.holding_of(headings) for node, headings in by_note.items()}

    def node_headings(self, node_id: str) -> list[dict]:
        """Every heading that belongs to ``node_id``, in file order (the node's own first)."""
        rows = self.conn.execute(
            "SELECT h.*, f.path AS file_path FROM headings h JOIN files f ON f.id = h.file"
            " WHERE h.node_id = ? ORDER BY f.path, h.start_line",
            (node_id,),
        ).fetchall()
        return [_heading_dict(r) for r in rows]

    def node(self, node_id: str) -> dict | None:
        """The heading (or file record) that carries ``node_id`` as its own ID."""
        row = self.conn.execute(
            "SELECT h.*, f.path AS file_path FROM headings h JOIN files f ON f.id = h.file"
            " WHERE h.own_id = ? ORDER BY h.id LIMIT 1",
            (node_id,),
        ).fetchone()
        return None if row is None else _heading_dict(row)

    def node_heading_ids(self, node_ids: Sequence[str]) -> dict[str, int]:
        """The id of the heading (or file record) that carries each of ``node_ids`` as its
        own ID, the one :meth:`node` reads; nodes not in the index are absent. One
        statement for them all."""
        rows = self.conn.execute(
            "SELECT j.value, (SELECT h.id FROM headings h JOIN files f ON f.id = h.file"
            "  WHERE h.own_id = j.value ORDER BY h.id LIMIT 1) FROM json_each(?) j",
            (json.dumps(list(node_ids)),),
        )
        return {r[0]: r[1] for r in rows if r[1] is not None}

    def node_names(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        """Each of ``node_ids``' names: its title, then its ``ROAM_ALIASES``, as the
        heading :meth:`node` reads holds them; nodes not in the index are absent. One
        statement for them all."""
        rows = self.conn.execute(
            "SELECT own_id, node_title, aliases FROM headings"
            " WHERE own_id IN (SELECT value FROM json_each(?)) ORDER BY id DESC",  # the first heading's last
            (json.dumps(list(node_ids)),),
        )
        # Most notes have no alias: "[]" is not decoded (~2 µs each, ~30 notes a /similar).
        return {node_id: [title, *([] if aliases == "[]" else json.loads(aliases))] for node_id, title, aliases in rows}

    def heading_at(self, path: str, line: int) -> dict | None:
        """The heading of file ``path`` whose lines contain ``line`` (the deepest one)."""
        row = self.conn.execute(
            "SELECT h.*, f.path AS file_path FROM headings h JOIN files f ON f.id = h.file"
            " WHERE f.path = ? AND h.start_line <= ? ORDER BY h.start_line DESC LIMIT 1",
            (path, int(line)),
        ).fetchone()
        return None if row is None else _heading_dict(row)

    def headings_between(self, path: str, after: int, until: int) -> list[dict]:
        """The headings of file ``path`` starting after line ``after`` and at or before
        line ``until``, in file order (the turns of a window of dialogue)."""
        rows = self.conn.execute(
            "SELECT h.*, f.path AS file_path FROM headings h JOIN files f ON f.id = h.file"
            " WHERE f.path = ? AND h.start_line > ? AND h.start_line <= ? ORDER BY h.start_line",
            (path, int(after), int(until)),
        ).fetchall()
        return [_heading_dict(r) for r in rows]

    def saved_heading(self, path: str, title: str, line: int) -> dict | None:
        """The heading of file ``path`` titled ``title`` nearest ``line``, else (renamed)
        the deepest heading whose lines contain ``line``; never the file-level record.
        Its row with the file's title as ``file_title``; None when there is none. One
        row read, however many headings the file has (a year of journal in one file)."""
        row = self.conn.execute(
            "SELECT h.*, f.path AS file_path, f.title AS file_title FROM headings h JOIN files f ON f.id = h.file"
            " WHERE f.path = ? AND h.level > 0 AND (h.title = ? OR h.start_line <= ?)"
            " ORDER BY h.title = ? DESC, CASE WHEN h.title = ? THEN abs(h.start_line - ?) ELSE -h.start_line END"
            " LIMIT 1",
            (path, title, int(line), title, title, int(line)),
        ).fetchone()
        return None if row is None else _heading_dict(row)

    def file_headings(self, path: str) -> list[dict]:
        rows = self.conn.execute(
            "SELECT h.*, f.path AS file_path FROM headings h JOIN files f ON f.id = h.file"
            " WHERE f.path = ? ORDER BY h.start_line",
            (path,),
        ).fetchall()
        return [_heading_dict(r) for r in rows]

    def file_outline(self, path: str) -> list[tuple[int, int, str | None]]:
        """``(start line, level, own ID)`` of each heading of file ``path`` in file order:
        :meth:`file_headings` without reading and decoding whole rows."""
        return [
            (r[0], r[1], r[2])
            for r in self.conn.execute(
                "SELECT h.start_line, h.level, h.own_id FROM headings h JOIN files f ON f.id = h.file"
                " WHERE f.path = ? ORDER BY h.start_line",
                (path,),
            )
        ]

    def chunk_hashes(self, heading_ids: Sequence[int]) -> list[str]:
        """The text hashes of the chunks of ``heading_ids`` that are the user's words
        (:func:`.oracle_words.users_chunk_sql`: not a dialogue's scene holding a turn of
        the oracle's, nor of a heading that is its words), or of all of them when none
        is: what a section is asked about by."""
        out, every = [], []
        for heading_id in heading_ids:
            for text_hash, users in self.conn.execute(
                f"SELECT c.hash, {users_chunk_sql('c', 'h')} FROM chunks c JOIN headings h ON h.id = c.heading"
                " WHERE c.heading = ? ORDER BY c.ordinal",
                (heading_id,),
            ):
                every.append(text_hash)
                if users:
                    out.append(text_hash)
        return out or every

    def holds_heading(self, path: str, node_id: str | None, node_title: str, title: str) -> bool:
        """Whether the index still holds a heading titled ``title`` of the node ``node_id``
        (``node_title``) in the file ``path``: a source given to a model, not made private
        (nor deleted) since."""
        return self.conn.execute(
            "SELECT 1 FROM headings h JOIN files f ON f.id = h.file WHERE f.path = ? AND h.node_id IS ?"
            " AND h.node_title = ? AND h.title = ? LIMIT 1",
            (path, node_id, node_title, title),
        ).fetchone() is not None

    def node_links(self, node_id: str) -> tuple[list[dict], list[dict]]:
        """The indexed nodes ``node_id`` links to, and those linking to it (backlinks),
        each ``{"node_id", "title"}`` sorted by title. Links to or from nodes that are not
        in the index (unknown, excluded or private) are left out."""
        title = "CASE WHEN h.level > 0 THEN h.node_title ELSE h.title END"

        def linked(other: str, this: str) -> list[dict]:
            rows = self.conn.execute(
                f"SELECT l.{other}, MIN({title}) AS t FROM links l JOIN headings h ON h.own_id = l.{other}"
                f" WHERE l.{this} = ? AND l.{other} != ? GROUP BY l.{other} ORDER BY t, l.{other}",
                (node_id, node_id),
            ).fetchall()
            return [{"node_id": r[0], "title": r[1]} for r in rows]

        return linked("dst_node", "src_node"), linked("src_node", "dst_node")


    def heading_chunks(self, heading_ids: Sequence[int]) -> dict[int, list[tuple[str, str]]]:
        """``(hash, text)`` of each heading's chunks, in order."""
        out: dict[int, list[tuple[str, str]]] = {}
        for heading_id in heading_ids:
            out[heading_id] = [
                (r[0], r[1])
                for r in self.conn.execute(
                    "SELECT hash, text FROM chunks WHERE heading = ? ORDER BY ordinal", (heading_id,)
                )
            ]
        return out

    def file_info(self, paths: Sequence[str]) -> dict[str, dict]:
        """``{path: {"title", "mtime_ns", "hash"}}`` for the indexed files among ``paths``."""
        out: dict[str, dict] = {}
        for path in set(paths):
            row = self.conn.execute("SELECT title, mtime_ns, hash FROM files WHERE path = ?", (path,)).fetchone()
            if row is not None:
                out[path] = {"title": row[0], "mtime_ns": row[1], "hash": row[2]}
        return out

    def subtree(self, *, node_id: str | None = None, path: str | None = None) -> list[dict] | None:
        """The headings of a whole note, in file order, or None when it is not indexed.

        A file node (or ``path``) is every heading of its file; a heading node is that heading
        and the headings below it (its subtree, child nodes included, as Org shows it).
        Private, crypt and excluded headings are never in the index, so never here.
        """
        if path is None:
            node = self.node(node_id)
            if node is None:
                return None
            rows = self.file_headings(node["file"])
            if node["level"] == 0:
                return rows
            inside = [r for r in rows if r["start_line"] >= node["start_line"]]
            out = [inside[0]] if inside else []
            for row in inside[1:]:
                if row["level"] <= node["level"]:
                    break
                out.append(row)
            return out
        rows = self.file_headings(path)
        return rows or None


def _heading_dict(row) -> dict:
    d = dict(row)
    d["file"] = d.pop("file_path")
    for key in ("olp", "tags", "properties", "aliases"):
        text = d[key]
        # Most of these are empty; json.loads of "[]" costs 1 us, and a result reads ~80.
        d[key] = [] if text == "[]" else {} if text == "{}" else json.loads(text)
    return d
