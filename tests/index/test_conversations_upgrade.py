"""Upgrading an index made before conversations were dialogue (m012): the files holding a
``:ROLE:`` heading or a gptel chat are re-read, so their turns are stored, and only those.
The index is made as it was (its turns removed by hand, m012 not applied)."""

from __future__ import annotations

import sqlite3

from tests.index.test_oracle_links_upgrade import CONVERSATION
from tests.runners import reconcile_once

MIGRATION = "m012_reread_conversations"
# A chat whose mode line says it is gptel's, without state saved: prompt titles, reply bodies.
GPTEL = "# -*- mode: org; eval: (gptel-mode 1) -*-\n*** Which flour?\nT65.\n*** And water?\n70 percent.\n"


async def test_conversations_of_an_old_index_become_dialogue(roam_dir, make_settings):
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / "talk.org").write_text(CONVERSATION)
    (roam_dir / "gptel-chat.org").write_text(GPTEL)
    await reconcile_once(settings)
    with sqlite3.connect(settings.db_path) as conn:
        assert conn.execute("SELECT count(DISTINCT heading) FROM turns").fetchone()[0] == 2
        conn.execute("DELETE FROM turns")
        conn.execute("DELETE FROM _migrations WHERE name = ?", (MIGRATION,))
    conn.close()

    report = await reconcile_once(settings)
    assert report.failed == {} and report.indexed == 2  # talk.org and the gptel chat alone
    with sqlite3.connect(settings.db_path) as conn:
        speakers = {r[0] for r in conn.execute("SELECT speaker FROM turns")}
    conn.close()
    assert speakers == {"Me", "Oracle", "user", "assistant"}
