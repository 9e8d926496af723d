"""The rows one file is stored as, but for the ids they get: built from what the reader
gave (:func:`rows_of`), and whether the store holds exactly those (:func:`stored_as`).

Reading a file again after a change of the reading rules (a new reader, a tag no longer
private) mostly gives what is already stored, and replacing rows is the dearest write
there is (every heading's old text deleted from three keyword indexes). :func:`stored_as`
tells ``FileWrites.replace_file`` when it can keep them.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from dataclasses import dataclass

from ..notes import cjk
from ..notes.oracle_words import dialogues_of, oracle_headings
from ..notes.records import Chunk, Heading, ParsedFile
from .labels import node_labels

# json.dumps with keyword arguments builds a new encoder per call (0.9 s of a profiled
# cold index of 22,695 headings: four calls per heading).
to_json = json.JSONEncoder(ensure_ascii=False).encode

# The columns of a heading after its id and file, in the order rows_of gives them.
HEADING_COLUMNS = (
    "node_id, own_id, level, title, olp, olp_text, tags, todo, properties, body, text, start_line, end_line,"
    " node_title, aliases, date, date_source, hash, cjk_head, cjk_text, oracle"
)


@dataclass(frozen=True)
class FileRows:
    """A file's rows, each child row naming its heading by position in ``headings``."""

    headings: list[tuple]  # HEADING_COLUMNS, in file order
    chunks: list[tuple]  # (heading, ordinal, text, hash, first_turn, last_turn)
    turns: list[tuple]  # (heading, ordinal, speaker, text, start_line, end_line, date, cjk_text)
    links: list[tuple]  # (heading, src_node, dst_node)
    labels: list[tuple]  # (heading, node, label)


def rows_of(parsed: ParsedFile, mtime_ns: int, chunks: Sequence[Sequence[Chunk]]) -> FileRows:
    """The rows ``parsed`` (with ``chunks[i]`` the chunks of its ``i``-th heading) is stored
    as, for a file last modified at ``mtime_ns``."""
    # Headings nothing in the file dates are dated by the file's modification time.
    day = datetime.date.fromtimestamp(mtime_ns / 1e9).isoformat()
    headings = parsed.headings
    oracle = oracle_headings(headings, dialogues_of(chunks))
    return FileRows(
        headings=[(*_heading_row(h, day, parsed.title), int(i in oracle)) for i, h in enumerate(headings)],
        chunks=[(i, c.ordinal, c.text, c.hash, c.first_turn, c.last_turn) for i, cs in enumerate(chunks) for c in cs],
        # The turns of the dialogue headings (carried by their first chunk).
        turns=[
            (i, t.ordinal, t.speaker, t.text, t.start_line, t.end_line, t.when or h.date or day, cjk.bigrams(t.text))
            for i, (h, cs) in enumerate(zip(headings, chunks)) if cs and cs[0].dialogue
            for t in cs[0].dialogue
        ],  # fmt: skip
        links=[(i, h.node_id, dst) for i, h in enumerate(headings) for dst in h.links],
        # Tags and refs of nodes, for the graph signal of similarity (store/links.py).
        labels=[(i, h.own_id, label) for i, h in enumerate(headings) if h.own_id for label in node_labels(h.tags, h.refs)],
    )


def stored_as(conn, file_rowid: int, rows: FileRows) -> bool:
    """Whether the file ``file_rowid`` is stored as exactly ``rows`` (its children in any
    order). Its headings are read and compared first (in id order, which is file order:
    they are inserted so); the rest only when they are the same, so a file whose text
    changed costs one read of its headings."""
    ids: dict[int, int] = {}
    headings = []
    for row in conn.execute(f"SELECT id, {HEADING_COLUMNS} FROM headings WHERE file = ? ORDER BY id", (file_rowid,)):
        ids[row[0]] = len(ids)
        headings.append(tuple(row[1:]))
    if headings != rows.headings:
        return False
    for mine, columns, table in (
        (rows.chunks, "ordinal, text, hash, first_turn, last_turn", "chunks"),
        (rows.turns, "ordinal, speaker, text, start_line, end_line, date, cjk_text", "turns"),
        (rows.links, "src_node, dst_node", "links"),
        (rows.labels, "node, label", "node_labels"),
    ):
        stored = conn.execute(
            f"SELECT heading, {columns} FROM {table} WHERE heading IN (SELECT id FROM headings WHERE file = ?)", (file_rowid,)
        )
        if sorted(((ids[r[0]], *r[1:]) for r in stored), key=repr) != sorted(mine, key=repr):
            return False
    return True


def _heading_row(h: Heading, day: str, file_title: str) -> tuple:
    context = _context(h, file_title)
    return (
        h.node_id,
        h.own_id,
        h.level,
        h.title,
        _json_list(h.olp),
        context,
        _json_list(h.tags),
        h.todo,
        to_json(h.properties) if h.properties else "{}",
        h.body,
        h.text,
        h.start_line,
        h.end_line,
        h.node_title,
        _json_list(h.aliases),
        h.date or day,
        h.date_source if h.date else "mtime",
        h.content_hash(),
        cjk.bigrams(h.title + "\n" + context),
        cjk.bigrams(h.text),
    )


def _context(h: Heading, file_title: str) -> str:
    """What keyword search knows a heading by besides its title and text: its file's
    title (for a heading below the file level), outline path, aliases and tags."""
    parts = ([file_title] if h.level else []) + list(h.olp) + list(h.aliases) + list(h.tags)
    return " / ".join(parts)


def _json_list(values: Sequence[str]) -> str:
    return to_json(list(values)) if values else "[]"
