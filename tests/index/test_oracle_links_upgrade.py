"""Upgrading an index whose link graph holds the oracle's citations (m010): the reader
used to count the ``[[id:]]`` links of an answer's ``Sources:`` list as the user's links.
The index is made as it was (the row the old reader wrote put back by hand, m010 not
applied); opening it must re-read the files holding an oracle answer, and only those, so
the citation leaves the graph."""

from __future__ import annotations

import sqlite3

from arcology_oracle.index.service import OracleIndex
from tests.org_samples import IDS
from tests.runners import reconcile_once

MIGRATION = "m010_reread_oracle_citations"
TALK = "1111cccc-0000-4000-8000-000000000001"
CONVERSATION = (
    f":PROPERTIES:\n:ID: {TALK}\n:END:\n#+title: Talk\n\n* Starters\n** Me\nHow do I revive it?\n"
    "** Oracle\n:PROPERTIES:\n:ROLE:     oracle\n:END:\nFeed it [1].\n\n"
    f"Sources:\n- [1] [[id:{IDS['starter']}][Starter maintenance]]\n"
)


async def test_the_oracle_citations_of_an_old_index_leave_the_graph(roam_dir, make_settings):
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / "talk.org").write_text(CONVERSATION)
    await reconcile_once(settings)
    with sqlite3.connect(settings.db_path) as conn:
        (heading,) = conn.execute("SELECT id FROM headings WHERE title = 'Oracle'").fetchone()
        conn.execute("INSERT INTO links (heading, src_node, dst_node) VALUES (?, ?, ?)", (heading, TALK, IDS["starter"]))
        conn.execute("DELETE FROM _migrations WHERE name = ?", (MIGRATION,))
    conn.close()

    index = OracleIndex(settings)
    await index.start()
    try:
        assert TALK in [b["node_id"] for b in (await index.node_links(IDS["starter"]))[1]]  # as the old index had it
        report = await index.reconcile()
        assert report.failed == {} and report.indexed == 1  # talk.org alone
        assert TALK not in [b["node_id"] for b in (await index.node_links(IDS["starter"]))[1]]
    finally:
        await index.close()
