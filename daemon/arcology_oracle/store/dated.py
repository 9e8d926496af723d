"""Queries restricted to headings dated within a range of days (``headings.date``,
ISO ``YYYY-MM-DD``; see ``notes.Heading.date``). Bounds are inclusive ISO strings."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from .db import limit as limit_sql
from .index import Store
from .snippets import SNIPPET_SQL
from .vector_sync import VEC_TABLE

# At most this many chunk vectors are scored exactly for one range; wider ranges (years
# of a large index) fall back to a nearest-neighbour search filtered afterwards.
MAX_EXACT_VECTORS = 50_000


def fts_in_range(store: Store, match: str, k: int, since: str, until: str) -> list[tuple[int, float, str]]:
    """Like ``Store.fts_search``, among headings dated ``since``..``until``."""
    rows = store.conn.execute(
        "SELECT f.rowid, bm25(headings_fts, 4.0, 2.0, 1.0) AS rank,"
        f" {SNIPPET_SQL.replace('length(text)', 'length(f.text)')}"
        " FROM headings_fts f JOIN headings h ON h.id = f.rowid"
        f" WHERE headings_fts MATCH ? AND h.date BETWEEN ? AND ? ORDER BY rank {limit_sql(k)}",
        (match, since, until),
    ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def vectors_in_range(store: Store, since: str, until: str) -> tuple[list[int], np.ndarray] | None:
    """Heading ids and the matrix of their chunks' vectors (one row per chunk) for the
    headings dated in range, or None when there are more than ``MAX_EXACT_VECTORS``."""
    if not store.has_vector_table():
        return [], np.zeros((0, 0), np.float32)
    rows = store.conn.execute(
        "SELECT c.heading, v.embedding FROM headings h JOIN chunks c ON c.heading = h.id"
        f" JOIN embeddings e ON e.hash = c.hash JOIN {VEC_TABLE} v ON v.rowid = e.id"
        f" WHERE h.date BETWEEN ? AND ? {limit_sql(MAX_EXACT_VECTORS + 1)}",
        (since, until),
    ).fetchall()
    if len(rows) > MAX_EXACT_VECTORS:
        return None
    if not rows:
        return [], np.zeros((0, 0), np.float32)
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)
    return [r[0] for r in rows], matrix


def headings_in_range(store: Store, since: str, until: str, limit: int, *, daily: bool = False) -> list[int]:
    """Ids of headings dated in range, oldest first (file order within a day, the headings
    whose notes state their date before those dated only by their file's modification
    time: a question about today must reach today's journal before every note merely
    saved today); a file's text before its first heading only when there is some. With
    ``daily``, only the headings of daily notes (the journal: dated by their file's name)."""
    only = " AND h.date_source = 'daily'" if daily else ""
    return [
        r[0]
        for r in store.conn.execute(
            "SELECT h.id FROM headings h JOIN files f ON f.id = h.file WHERE h.date BETWEEN ? AND ?"
            f" AND (h.level > 0 OR h.text != ''){only} ORDER BY h.date, h.date_source IS 'mtime', f.path, h.start_line"
            f" {limit_sql(limit)}",
            (since, until),
        )
    ]


def headings_across_days(store: Store, since: str, until: str, limit: int) -> list[int]:
    """Ids of up to ``limit`` headings dated in range, spread over its days: each day's
    first (in :func:`headings_in_range`'s order within a day), then each day's second,
    and so on; within a round, the days in an order any start of which spreads evenly
    over the range (first, middle, quarters...: :func:`_spread`), so that a week, or a
    year, cut to a few notes is not its first day or days. Not in date order."""
    rows = store.conn.execute(
        "SELECT id, date, n FROM (SELECT h.id, h.date, ROW_NUMBER() OVER (PARTITION BY h.date"
        " ORDER BY h.date_source IS 'mtime', f.path, h.start_line) AS n"
        " FROM headings h JOIN files f ON f.id = h.file WHERE h.date BETWEEN ? AND ? AND (h.level > 0 OR h.text != ''))"
        " WHERE n <= ?",
        (since, until, int(limit)),
    ).fetchall()
    place = _day_places(r[1] for r in rows)
    return [r[0] for r in sorted(rows, key=lambda r: (r[2], place[r[1]]))][: int(limit)]


def across_days(days: Sequence[str]) -> list[int]:
    """The indexes of items whose days are ``days`` (the items of one day in the order
    they are to be taken) in the order :func:`headings_across_days` takes
    headings: each day's first, then each day's second..., the days of a round in
    :func:`_day_places` order."""
    place, seen = _day_places(days), Counter()
    rounds = []
    for i, day in enumerate(days):
        rounds.append((seen[day], place[day], i))
        seen[day] += 1
    return [i for *_, i in sorted(rounds)]


def _day_places(days: Iterable[str]) -> dict[str, int]:
    """Each of the distinct ``days``' place within a round over them (:func:`_spread`
    of the days in date order)."""
    ordered = sorted(set(days))
    return dict(zip(ordered, _spread(len(ordered))))


def _spread(count: int) -> list[int]:
    """Each of ``count`` positions' place in an order that keeps any start of it spread
    evenly (the van der Corput order: 0, 4, 2, 6, 1, 5, 3, 7 for eight): its index's
    bits reversed."""
    bits = max(1, (count - 1).bit_length())
    return [int(f"{i:0{bits}b}"[::-1], 2) for i in range(count)]


def has_daily_headings(store: Store) -> bool:
    """Whether any heading of a daily note is indexed."""
    return store.conn.execute("SELECT 1 FROM headings WHERE date_source = 'daily' LIMIT 1").fetchone() is not None


def heading_dates(store: Store, ids: list[int], *, stated: bool = False) -> dict[int, str | None]:
    """The date of each heading id; with ``stated``, only dates the notes state (not
    the file's modification time)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    only = " AND date_source IS NOT 'mtime'" if stated else ""
    return dict(store.conn.execute(f"SELECT id, date FROM headings WHERE id IN ({marks}){only}", ids).fetchall())


# The date sources that say when a note was written (see ``notes.Heading.date``): its
# ``:CREATED:`` property, a daily note's name, the file's name (org-roam names new notes
# by the second they were made) or ``#+date``, and headings inheriting one of those. Not
# the file's modification time (the last edit, or the day the notes were copied), nor a
# heading's first timestamp or CLOSED (when something is due or was done).
WRITTEN_SOURCES = ("created", "daily", "filename", "file-date")
_WRITTEN = "date_source IN ({})".format(",".join(f"'{source}'" for source in WRITTEN_SOURCES))


def written_days(store: Store, node_ids: list[str]) -> dict[str, str]:
    """Node id -> the day (ISO) its notes say it was written, for those of ``node_ids``
    whose own heading has one (:data:`WRITTEN_SOURCES`)."""
    if not node_ids:
        return {}
    marks = ",".join("?" * len(node_ids))
    rows = store.conn.execute(f"SELECT own_id, date FROM headings WHERE own_id IN ({marks}) AND {_WRITTEN}", node_ids)
    return dict(rows.fetchall())


def written_on(store: Store, day: str) -> int:
    """How many nodes were written on ``day`` (ISO), by :func:`written_days`."""
    return store.conn.execute(
        f"SELECT count(DISTINCT own_id) FROM headings WHERE date = ? AND own_id IS NOT NULL AND {_WRITTEN}", (day,)
    ).fetchone()[0]
