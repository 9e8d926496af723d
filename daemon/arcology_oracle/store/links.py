"""Link rejections and the link graph in SQL: what link suggestions and the graph signal
of similarity read (see :mod:`arcology_oracle.answers.links` and
:mod:`arcology_oracle.answers.graph`).

Rejections are pairs of node IDs kept in ``link_rejections`` (migration
``m006_link_rejections``): re-reading a note, deleting it and the doctor leave them, but
one naming a node the privacy rule now keeps out goes (:meth:`LinkGraph.forget_rejections_of`,
which the indexer calls: index/kept_out.py). The graph
reads only nodes that are in the index, so excluded and private nodes never show up as
neighbours, tag holders or candidates.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Collection, Iterable

from ..notes.capture import CAPTURED_BY, CAPTURED_BY_VALUE
from .connection import NODES_GENERATION, StoreBase
from .oracle_words import answer_sql, words_sql
from .shared import PerDatabase


def has_role(alias: str = "") -> str:
    """SQL true for a heading row (of table ``alias``) with a ``:ROLE:`` property: the
    condition of the partial index ``headings_role`` (migration m014), which a query must
    spell this way for SQLite to use the index."""
    column = f"{alias}.properties" if alias else "properties"
    return f"json_extract({column}, '$.ROLE') IS NOT NULL"


class _NodeCount:
    """One database's node count and the generation of the headings it was counted at."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.token: str | None = None
        self.count: int | None = None


_node_counts = PerDatabase(_NodeCount)


class LinkGraph(StoreBase):
    """Rejected link suggestions and the node graph (see the module docstring)."""

    # -- rejections -------------------------------------------------------------------

    def reject_link(self, src: str, dst: str) -> None:
        """Remember that a link from ``src`` to ``dst`` is not wanted (idempotent)."""
        with self.transaction():
            self.conn.execute(
                "INSERT OR IGNORE INTO link_rejections (src_node, dst_node, created_at) VALUES (?, ?, ?)",
                (src, dst, time.time()),
            )

    def reject_indexed_link(self, src: str, dst: str, hidden: Collection[str] = ()) -> list[str]:
        """:meth:`reject_link`, only when both nodes are in the index, checked in the same
        transaction as the write (a note made private meanwhile leaves its nodes'
        IDs in no row); the notes ``hidden`` count as not in it (the withheld ones, which
        no reader shows). Returns the nodes of the two not in it: nothing written then."""
        with self.transaction():
            found = {r[0] for r in self.conn.execute(
                "SELECT DISTINCT h.own_id FROM headings h JOIN files f ON f.id = h.file WHERE h.own_id IN (?, ?)"
                " AND f.path NOT IN (SELECT value FROM json_each(?))", (src, dst, json.dumps(sorted(hidden))),
            )}  # fmt: skip
            missing = [node for node in (src, dst) if node not in found]
            if not missing:
                self.reject_link(src, dst)
            return missing

    def rejected_targets(self, src: str) -> set[str]:
        """The nodes a link from ``src`` was rejected to."""
        return {r[0] for r in self.conn.execute("SELECT dst_node FROM link_rejections WHERE src_node = ?", (src,))}

    def link_rejections(self, src: str | None = None, dst: str | None = None) -> list[dict]:
        """The rejections matching ``src`` and ``dst`` (None matches any), newest first,
        as ``{"from", "to", "created_at"}``."""
        rows = self.conn.execute(
            "SELECT src_node, dst_node, created_at FROM link_rejections"
            " WHERE (?1 IS NULL OR src_node = ?1) AND (?2 IS NULL OR dst_node = ?2)"
            " ORDER BY created_at DESC, src_node, dst_node",
            (src, dst),
        ).fetchall()
        return [{"from": r[0], "to": r[1], "created_at": r[2]} for r in rows]

    def clear_link_rejections(self, src: str | None = None, dst: str | None = None) -> int:
        """Forget the rejections matching ``src`` and ``dst`` (None matches any);
        returns how many were forgotten."""
        with self.transaction():
            cur = self.conn.execute(
                "DELETE FROM link_rejections WHERE (?1 IS NULL OR src_node = ?1) AND (?2 IS NULL OR dst_node = ?2)",
                (src, dst),
            )
        return cur.rowcount

    def rejected_nodes(self) -> set[str]:
        """Every node a rejection names, either side."""
        return {r[0] for r in self.conn.execute("SELECT src_node FROM link_rejections UNION SELECT dst_node FROM link_rejections")}

    def own_ids_of(self, path: str) -> set[str]:
        """The node IDs the indexed file ``path``'s headings hold."""
        return {
            r[0]
            for r in self.conn.execute(
                "SELECT h.own_id FROM headings h JOIN files f ON f.id = h.file WHERE f.path = ? AND h.own_id IS NOT NULL",
                (path,),
            )
        }

    def forget_rejections_of(self, nodes: Iterable[str]) -> int:
        """Forget the rejections naming one of ``nodes`` that the index does not hold (a
        node it holds is public, whatever else was found of it); returns how many."""
        with self.transaction():
            cur = self.conn.execute(
                "DELETE FROM link_rejections WHERE"
                " (src_node IN (SELECT value FROM json_each(?1)) AND NOT EXISTS (SELECT 1 FROM headings WHERE own_id = src_node))"
                " OR (dst_node IN (SELECT value FROM json_each(?1)) AND NOT EXISTS (SELECT 1 FROM headings WHERE own_id = dst_node))",
                (json.dumps(sorted(set(nodes))),),
            )
        return cur.rowcount

    # -- the graph --------------------------------------------------------------------

    def indexed_nodes(self, node_ids: Iterable[str]) -> set[str]:
        """Those of ``node_ids`` that are nodes in the index."""
        ids = list(set(node_ids))
        out: set[str] = set()
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            out |= {
                r[0]
                for r in self.conn.execute(
                    f"SELECT DISTINCT own_id FROM headings WHERE own_id IN ({','.join('?' * len(part))})", part
                )
            }
        return out

    def node_count(self) -> int:
        """How many nodes the index holds. Counted once per generation of the headings
        (:data:`~.connection.NODES_GENERATION`, renewed by every transaction that inserts
        or deletes headings, not by those storing vectors) and remembered for the process:
        counting them is ~2 ms at 20k nodes, most of a ``/similar``, and 20-30 ms at a
        million headings, where each batch of vectors stored while notes are embedded
        made the next ``/similar`` count again."""
        cache = getattr(self, "_node_count", None)
        if cache is None:
            cache = self._node_count = _node_counts.get(self._shared_key())
        token = self.get_meta(NODES_GENERATION)  # before the count: a write in between only recounts
        with cache.lock:
            if cache.count is not None and cache.token == token:
                return cache.count
        count = self.conn.execute("SELECT COUNT(DISTINCT own_id) FROM headings WHERE own_id IS NOT NULL").fetchone()[0]
        with cache.lock:
            cache.token, cache.count = token, count
        return count

    def neighbours(self, node_ids: Iterable[str]) -> dict[str, set[str]]:
        """For each of ``node_ids``, the nodes it links to or is linked from (itself
        aside), indexed or not."""
        ids = list(set(node_ids))
        out: dict[str, set[str]] = {n: set() for n in ids}
        for i in range(0, len(ids), 400):
            part = ids[i : i + 400]
            marks = ",".join("?" * len(part))
            rows = self.conn.execute(
                f"SELECT src_node, dst_node FROM links WHERE src_node IN ({marks})"
                f" UNION SELECT dst_node, src_node FROM links WHERE dst_node IN ({marks}) AND src_node IS NOT NULL",
                part + part,
            )
            for node, other in rows:
                if other != node:
                    out[node].add(other)
        return out

    def label_holders(self, node_id: str) -> dict[str, set[str]]:
        """For each tag and ROAM_REFS entry of ``node_id`` (``"tag:X"``, ``"ref:Y"``), the
        nodes carrying it, ``node_id`` among them (table ``node_labels``)."""
        out: dict[str, set[str]] = {}
        rows = self.conn.execute(
            "SELECT DISTINCT other.label, other.node FROM node_labels own"
            " JOIN node_labels other ON other.label = own.label WHERE own.node = ?",
            (node_id,),
        )
        for label, node in rows:
            out.setdefault(label, set()).add(node)
        return out

    def links_from(self, node_id: str) -> set[str]:
        """The nodes ``node_id`` links to (not those linking to it)."""
        return {r[0] for r in self.conn.execute("SELECT dst_node FROM links WHERE src_node = ?", (node_id,))}

    def links_to(self, node_id: str) -> set[str]:
        """The nodes linking to ``node_id`` (its backlinks)."""
        return {
            r[0]
            for r in self.conn.execute("SELECT src_node FROM links WHERE dst_node = ? AND src_node IS NOT NULL", (node_id,))
        }

    def linked_from_elsewhere(self, path: str) -> bool:
        """Whether a heading of another indexed file links to a node ID the file ``path``
        holds (private headings are not indexed: their links are not seen)."""
        return self.conn.execute(
            "SELECT 1 FROM links l JOIN headings h ON h.id = l.heading JOIN files f ON f.id = h.file"
            " WHERE f.path != ? AND l.dst_node IN (SELECT o.own_id FROM headings o JOIN files of ON of.id = o.file"
            "  WHERE of.path = ? AND o.own_id IS NOT NULL) LIMIT 1",
            (path, path),
        ).fetchone() is not None

    def linked_nodes(self, node_id: str) -> set[str]:
        """Nodes linked from ``node_id`` or linking to it."""
        return self.links_from(node_id) | self.links_to(node_id)

    # -- the oracle's own headings and conversations ----------------------------------

    def oracle_headings(self, ids: Iterable[int]) -> set[int]:
        """Those of the heading ``ids`` that /similar leaves out: the oracle's words
        (:meth:`oracle_words`), or a conversation's root holding some among its dialogue
        turns (its chunks are scenes of the conversation): :func:`.oracle_words.answer_sql`."""
        ids = list(ids)
        if not ids:
            return set()
        rows = self.conn.execute(
            f"SELECT h.id FROM headings h WHERE h.id IN (SELECT value FROM json_each(?)) AND {answer_sql('h')}",
            (json.dumps(ids),),
        )
        return {r[0] for r in rows}

    def oracle_words(self, ids: Iterable[int]) -> set[int]:
        """Those of the heading ``ids`` that are the oracle's words, not the user's notes
        (:func:`.oracle_words.words_sql`: the one rule of every route)."""
        rows = self.conn.execute(
            f"SELECT h.id FROM headings h WHERE h.id IN (SELECT value FROM json_each(?)) AND {words_sql('h')}",
            (json.dumps(list(ids)),),
        )
        return {r[0] for r in rows}

    def owners_and_answers(self, ids: Iterable[int]) -> tuple[dict[int, tuple[str | None, str]], set[int]]:
        """``(heading_owners(ids), never_results)`` in one statement (see
        :meth:`~.reads.Reads.heading_owners`): what /similar asks of its ~100 nearest
        headings, once instead of twice. ``never_results``: those no list shows, so that
        no note is grouped by one of them: :meth:`oracle_headings`, and headings of
        neither a title nor text (:func:`~arcology_oracle.answers.retrieval.is_empty_heading`:
        gptel's ``*** ``, whose vector, its title path alone, is often its note's nearest)."""
        ids = list(ids)
        if not ids:
            return {}, set()
        space = "' ' || char(9, 10, 13)"
        rows = self.conn.execute(
            # A CASE: SQLite computes both sides of an OR that is a result column.
            f"SELECT h.id, h.node_id, f.path, CASE WHEN trim(h.title, {space}) = ''"
            f" AND trim(coalesce(h.text, ''), {space}) = '' THEN 1 ELSE {answer_sql('h')} END"
            " FROM headings h JOIN files f ON f.id = h.file WHERE h.id IN (SELECT value FROM json_each(?))",
            (json.dumps(ids),),
        )
        owners: dict[int, tuple[str | None, str]] = {}
        answers: set[int] = set()
        for heading_id, node_id, path, answer in rows:
            owners[heading_id] = (node_id, path)
            if answer:
                answers.add(heading_id)
        return owners, answers

    def role_outlines(self, paths: Iterable[str]) -> dict[str, list[tuple[int, int, str, bool]]]:
        """For each of ``paths`` holding a heading with a ``:ROLE:`` property, ``(start
        line, level, role, kept)`` of every heading of the file in file order (role
        lower-case, ``""`` for none; ``kept`` for a heading captured by ``/memorize``,
        whose role is that of words kept, in no conversation); files without one are not
        in the answer. Which files have one is read from the index ``headings_role`` (m014)."""
        paths = sorted(set(paths))
        if not paths:
            return {}
        having = [
            r[0]
            for r in self.conn.execute(
                "SELECT DISTINCT f.path FROM headings h JOIN files f ON f.id = h.file"
                f" WHERE f.path IN (SELECT value FROM json_each(?)) AND {has_role('h')}",
                (json.dumps(paths),),
            )
        ]
        out: dict[str, list[tuple[int, int, str, bool]]] = {}
        for path in having:
            out[path] = [
                (r[0], r[1], (r[2] or "").strip().lower(), bool(r[3]))
                for r in self.conn.execute(
                    "SELECT h.start_line, h.level, json_extract(h.properties, '$.ROLE'),"
                    " json_extract(h.properties, ?) = ? FROM headings h"
                    " JOIN files f ON f.id = h.file WHERE f.path = ? ORDER BY h.start_line",
                    (f"$.{CAPTURED_BY}", CAPTURED_BY_VALUE, path),
                )
            ]
        return out
