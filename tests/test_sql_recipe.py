"""README.org's SQL recipe (nearest headings to a heading, by ID, with sqlite-vec) runs
verbatim against a real index and agrees with exact search done by hand."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from arcology_oracle.store.db import connect

README = Path(__file__).resolve().parent.parent / "README.org"


def recipe() -> str:
    text = README.read_text()
    match = re.search(r"#\+name: nearest-headings-sql\n#\+begin_src sql\n(.*?)#\+end_src", text, re.S)
    assert match, "README.org has no block named nearest-headings-sql"
    return match.group(1)


def by_hand(conn, heading_id: int) -> list[tuple[str, float]]:
    """Best cosine of each other heading's chunks against the heading's first chunk."""
    rows = conn.execute(
        "SELECT h.id, h.title, c.ordinal, v.embedding FROM headings h JOIN chunks c ON c.heading = h.id"
        " JOIN embeddings e ON e.hash = c.hash JOIN vec_embeddings v ON v.rowid = e.id"
    ).fetchall()
    vec = {(r[0], r[2]): np.frombuffer(r[3], "<f4").astype(np.float64) for r in rows}
    q = vec[(heading_id, 0)]
    best: dict[int, tuple[str, float]] = {}
    for hid, title, ordinal, _ in rows:
        if hid == heading_id:
            continue
        v = vec[(hid, ordinal)]
        sim = float(q @ v / np.linalg.norm(q) / np.linalg.norm(v))
        if hid not in best or sim > best[hid][1]:
            best[hid] = (title, sim)
    return sorted(best.values(), key=lambda t: -t[1])[:10]


async def test_readme_recipe_finds_the_nearest_headings(index, settings):
    conn = connect(settings.db_path, readonly=True)
    try:
        heading_id, own_id, title = conn.execute(
            "SELECT h.id, h.own_id, h.title FROM headings h WHERE h.own_id IS NOT NULL"
            " AND EXISTS (SELECT 1 FROM chunks c JOIN embeddings e ON e.hash = c.hash WHERE c.heading = h.id)"
            " ORDER BY h.id LIMIT 1"
        ).fetchone()
        got = conn.execute(recipe(), {"id": own_id}).fetchall()
        want = by_hand(conn, heading_id)
        assert len(got) == min(10, len(want)) >= 5
        assert [r["title"] for r in got] == [t for t, _ in want]
        assert [round(r["similarity"], 4) for r in got] == [round(s, 4) for _, s in want]
        assert title not in [r["title"] for r in got] or sum(t == title for t, _ in want)
        assert all(r["path"].endswith(".org") and r["start_line"] >= 1 for r in got)
        # An ID nobody has finds nothing.
        assert conn.execute(recipe(), {"id": "no-such-id"}).fetchall() == []
    finally:
        conn.close()
