"""Upgrading an index made before a dialogue's turns were embedded alone (m013): the
files holding dialogue are re-read, so each turn gets its own chunk, and only those
files. The index is made as it was (its single-turn chunks removed by hand, m013 not
applied)."""

from __future__ import annotations

import sqlite3

from tests.answers.test_dialogue_windows import CHATS
from tests.runners import reconcile_once

MIGRATION = "m013_reread_dialogue"


def turn_chunks(db) -> int:
    with sqlite3.connect(db) as conn:
        count = conn.execute("SELECT count(*) FROM chunks WHERE first_turn IS NOT NULL AND first_turn = last_turn").fetchone()[0]
    conn.close()
    return count


async def test_dialogue_of_an_old_index_gets_its_turns_embedded_alone(roam_dir, make_settings):
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / "ana.org").write_text(CHATS)
    (roam_dir / "bread.org").write_text("#+title: Bread\n* Rye\nWet dough, long proof.\n")
    await reconcile_once(settings)
    made = turn_chunks(settings.db_path)
    assert made > 40
    with sqlite3.connect(settings.db_path) as conn:
        conn.execute("DELETE FROM chunks WHERE first_turn IS NOT NULL AND first_turn = last_turn")
        conn.execute("DELETE FROM _migrations WHERE name = ?", (MIGRATION,))
    conn.close()
    assert turn_chunks(settings.db_path) == 0

    report = await reconcile_once(settings)
    assert report.failed == {} and report.indexed == 1  # ana.org alone
    assert turn_chunks(settings.db_path) == made
