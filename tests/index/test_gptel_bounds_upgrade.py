"""Upgrading an index made before a gptel chat's reasoning and tool calls were the model's
words (m021): the chats whose bounds are saved are re-read, so the model's thinking is no
longer stored as the user's turn, and only those files. The index is made as it was (its
turns removed by hand, m021 not applied)."""

from __future__ import annotations

import sqlite3

from tests.http.test_oracle_words_gptel import REASONING_CHAT
from tests.runners import reconcile_once

MIGRATION = "m021_reread_gptel_bounds"


def turns(db_path) -> list[tuple[str, str]]:
    with sqlite3.connect(db_path) as conn:
        rows = conn.execute("SELECT speaker, text FROM turns ORDER BY ordinal").fetchall()
    conn.close()
    return rows


async def test_a_chat_with_bounds_is_read_again(roam_dir, make_settings):
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / "kiln-chat.org").write_text(REASONING_CHAT)
    await reconcile_once(settings)
    read = turns(settings.db_path)
    with sqlite3.connect(settings.db_path) as conn:
        conn.execute("DELETE FROM turns")
        conn.execute("DELETE FROM _migrations WHERE name = ?", (MIGRATION,))
    conn.close()

    report = await reconcile_once(settings)
    assert report.failed == {} and report.indexed == 1  # the chat alone
    assert turns(settings.db_path) == read
    assert [speaker for speaker, text in read if "THINKINGWORDS" in text] == ["llama3.2+notes"]
