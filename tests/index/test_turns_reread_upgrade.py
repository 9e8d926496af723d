"""Upgrading an index made before a change to how dialogue is read: the migration reads
again the files the change touches, and only those. The index is made as the older
reader left it (its turns or marks changed by hand, the migration not applied):

* m021: a gptel chat's reasoning and tool calls are the model's words (chats whose
  bounds are saved);
* m022, m025, m028: a turn past midnight is on the next day, one a few minutes back
  stays on its day, a reply the next morning goes to the next day (dialogue whose turns
  carry a time of day);
* m023, m026: an org-ai chat is dialogue, and a #+begin_ai only shown is none;
* m027: a file where gptel saved its state but no reply is the user's;
* m029: a heading holding a grounded reply and the user's own lines is the user's, read
  without the reply (files holding a grounded model's turn);
* m030: an ellama session is dialogue, a grounded model's replies the oracle's words
  (files whose first heading is titled like an ellama turn).
* m032: an id: link a grounded reply wrote in a heading of the user's is no link of the
  user's note (files holding a grounded model's turn).
"""

from __future__ import annotations

import sqlite3

from tests.http.test_oracle_words_ellama import CHAT, SESSION, companion, companion_name
from tests.http.test_oracle_words_gptel import REASONING_CHAT
from tests.http.test_oracle_words_org_ai import org_ai_note
from tests.http.test_oracle_words_own_lines import LINKING_CHAT, ORG_AI
from tests.org_samples import IDS
from tests.runners import reconcile_once


def turns(db_path) -> list[tuple[str, str, str | None]]:
    return _rows(db_path, "SELECT speaker, text, date FROM turns ORDER BY heading, ordinal")


def oracle_titles(db_path) -> list[tuple[str]]:
    return _rows(db_path, "SELECT title FROM headings WHERE oracle")


def _rows(db_path, sql: str) -> list[tuple]:
    with sqlite3.connect(db_path) as conn:
        rows = conn.execute(sql).fetchall()
    conn.close()
    return rows


async def upgraded_from(settings, migration: str, *older: str):
    """The index made as the older reader left it (the statements ``older``, ``migration``
    not applied), then reconciled: one file read again, and nothing failed."""
    with sqlite3.connect(settings.db_path) as conn:
        for sql in older:
            conn.execute(sql)
        conn.execute("DELETE FROM _migrations WHERE name = ?", (migration,))
    conn.close()
    report = await reconcile_once(settings)
    assert report.failed == {} and report.indexed == 1
    return report


async def test_a_chat_with_bounds_is_read_again(roam_dir, make_settings):
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / "kiln-chat.org").write_text(REASONING_CHAT)
    await reconcile_once(settings)
    read = turns(settings.db_path)
    await upgraded_from(settings, "m021_reread_gptel_bounds", "DELETE FROM turns")
    assert turns(settings.db_path) == read
    assert [speaker for speaker, text, _ in read if "THINKINGWORDS" in text] == ["llama3.2+notes"]


LATE = "#+title: Late\n\n* [2024-03-05 Tue 23:30] Late chat\n[23:40] Ana: up?\n[23:50] Me: yes\n[00:10] Ana: owls\n[00:25] Me: sleep\n"


async def test_turns_past_midnight_are_dated_again(roam_dir, make_settings):
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / "late.org").write_text(LATE)
    (roam_dir / "untimed.org").write_text("* Chat\nAna: up?\n\nMe: yes\n\nAna: bats\n\nMe: sleep\n")
    await reconcile_once(settings)
    read = turns(settings.db_path)
    assert [date for _, text, date in read if "owls" in text] == ["2024-03-06T00:10"]
    await upgraded_from(
        settings, "m022_reread_turns_past_midnight",
        "UPDATE turns SET date = replace(date, '2024-03-06', '2024-03-05')",
    )
    assert sorted(turns(settings.db_path)) == sorted(read)


async def test_org_ai_chats_are_read_again(roam_dir, make_settings):
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / "celadon.org").write_text(org_ai_note("llama3.2+notes", "GROUNDEDAI"))
    await reconcile_once(settings)
    read = turns(settings.db_path)
    assert {speaker for speaker, _, _ in read} == {"", "Me", "llama3.2+notes"}
    await upgraded_from(settings, "m023_reread_org_ai_chats", "DELETE FROM turns")
    assert sorted(turns(settings.db_path)) == sorted(read)


async def test_turns_a_few_minutes_back_are_dated_again(roam_dir, make_settings):
    # An index whose reader put a turn a few minutes before the one above it on the next
    # day (m022's reader, with the files it re-read) has those files read again (m025).
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / "lunch.org").write_text("* [2024-03-05 Tue 14:00] Lunch\n[14:05] Ana: lunch?\n[14:03] Me: yes\n[14:10] Ana: see\n[14:12] Me: you\n")
    (roam_dir / "untimed.org").write_text("* Chat\nAna: up?\n\nMe: yes\n\nAna: bats\n\nMe: sleep\n")
    await reconcile_once(settings)
    read = turns(settings.db_path)
    assert {date[:10] for _, _, date in read if date and "T" in date} == {"2024-03-05"}
    await upgraded_from(
        settings, "m025_reread_turns_a_few_minutes_back",
        "UPDATE turns SET date = replace(date, '2024-03-05', '2024-03-06') WHERE date >= '2024-03-05T14:03'",
    )
    assert sorted(turns(settings.db_path)) == sorted(read)


async def test_a_reply_the_next_morning_is_dated_again(roam_dir, make_settings):
    # An index whose reader put a reply the next morning on the evening's day (m025's
    # reader: back less than half a day) has the files with turns at a time read again (m028).
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / "kiln.org").write_text("* [2024-03-05 Tue 19:00] Kiln\n[19:30] Ana: kiln?\n[19:40] Me: tired\n[08:00] Ana: now?\n[08:05] Me: yes\n")
    (roam_dir / "untimed.org").write_text("* Chat\nAna: up?\n\nMe: yes\n\nAna: bats\n\nMe: sleep\n")
    await reconcile_once(settings)
    read = turns(settings.db_path)
    assert [date for _, _, date in read if date and "T" in date][-1] == "2024-03-06T08:05"
    await upgraded_from(
        settings, "m028_reread_turns_hours_back",
        "UPDATE turns SET date = replace(date, '2024-03-06', '2024-03-05')",
    )
    assert sorted(turns(settings.db_path)) == sorted(read)


async def test_org_ai_blocks_only_shown_are_read_again(roam_dir, make_settings):
    # m023's reader read a #+begin_ai inside a source block as a chat, the note holding it
    # as the oracle's words: m026 re-reads the files holding such a line, and only those.
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / "setup.org").write_text(
        "* Setup\nMy notes.\n#+begin_src org\n#+begin_ai :model llama3.2+notes\n[ME]: Why?\n\n[AI]: Rye.\n#+end_ai\n#+end_src\n"
    )
    (roam_dir / "other.org").write_text("* Other\nNothing of org-ai.\n")
    await reconcile_once(settings)

    assert turns(settings.db_path) == [] and oracle_titles(settings.db_path) == []
    await upgraded_from(
        settings, "m026_reread_org_ai_blocks_as_org_reads_them",
        "UPDATE headings SET oracle = 1 WHERE title = 'Setup'",
    )
    assert oracle_titles(settings.db_path) == []


async def test_a_file_where_gptel_saved_no_reply_is_read_again(roam_dir, make_settings):
    # A notes file where gptel saved its state but no bounds (no reply): the older reader
    # took its headings for prompts with replies, hidden as the oracle's words with a
    # grounded model. m027 re-reads such files, and only those.
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / "daily.org").write_text(":PROPERTIES:\n:GPTEL_MODEL: llama3.2+notes\n:END:\n#+title: Day\n* Groceries\nBuy oat milk.\n")
    (roam_dir / "other.org").write_text("* Other\nNothing of gptel.\n")
    await reconcile_once(settings)

    assert oracle_titles(settings.db_path) == []
    await upgraded_from(
        settings, "m027_reread_gptel_state_without_bounds",
        "UPDATE headings SET oracle = 1 WHERE title = 'Groceries'",
    )
    assert oracle_titles(settings.db_path) == []


async def test_the_users_lines_beside_a_grounded_reply_are_read_again(roam_dir, make_settings):
    # The older reader kept a heading holding the user's paragraph and a grounded org-ai
    # chat whole as the oracle's words, its chunks the chat's scenes alone: m029 re-reads
    # the files holding a grounded model's turn, and only those (not a chat with another model).
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / "tenmoku.org").write_text(ORG_AI)
    (roam_dir / "celadon.org").write_text(org_ai_note("", "OTHERAI"))
    await reconcile_once(settings)
    own_chunks = (
        "SELECT count(*) FROM chunks WHERE first_turn IS NULL"
        " AND heading IN (SELECT id FROM headings WHERE title = 'Tenmoku test tiles')"
    )

    assert oracle_titles(settings.db_path) == [] and _rows(settings.db_path, own_chunks) == [(1,)]
    await upgraded_from(
        settings, "m029_reread_replies_in_the_users_headings",
        "UPDATE headings SET oracle = 1 WHERE title = 'Tenmoku test tiles'",
        own_chunks.replace("SELECT count(*)", "DELETE"),
    )
    assert oracle_titles(settings.db_path) == [] and _rows(settings.db_path, own_chunks) == [(1,)]


async def test_ellama_sessions_are_read_again(roam_dir, make_settings):
    # The older reader read an ellama session's grounded replies as the user's notes: m030
    # re-reads the files whose first heading is titled like a turn ("User:"), and only those.
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / SESSION).parent.mkdir()
    (roam_dir / SESSION).write_text(CHAT)
    (roam_dir / companion_name(SESSION)).write_text(companion("llama3.2+notes"))
    (roam_dir / "other.org").write_text("* Other\nNothing of ellama.\n\n* Ingredients:\nOat milk.\n")
    await reconcile_once(settings)
    read = turns(settings.db_path)

    assert oracle_titles(settings.db_path) == [("Ellama:",), ("Why coarser",), ("Ellama:",)]
    await upgraded_from(
        settings, "m030_reread_ellama_sessions", "DELETE FROM turns", "UPDATE headings SET oracle = 0", "UPDATE files SET setup = '[]'"
    )
    assert oracle_titles(settings.db_path) == [("Ellama:",), ("Why coarser",), ("Ellama:",)]
    assert turns(settings.db_path) == read


async def test_links_a_reply_wrote_are_read_again(roam_dir, make_settings):
    # The older reader kept the id: link a grounded reply wrote in a heading of the user's
    # as the user's link: m032 re-reads the files holding a grounded model's turn.
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / "tenmoku-links.org").write_text(LINKING_CHAT)
    await reconcile_once(settings)
    mine = "heading IN (SELECT h.id FROM headings h JOIN files f ON f.id = h.file WHERE f.path = 'tenmoku-links.org')"
    links = f"SELECT dst_node FROM links WHERE {mine} ORDER BY dst_node"

    assert _rows(settings.db_path, links) == [(IDS["hydration"],)]
    await upgraded_from(
        settings, "m032_reread_links_in_replies",
        f"INSERT INTO links (heading, src_node, dst_node) SELECT heading, src_node, '{IDS['starter']}' FROM links WHERE {mine}",
    )
    assert _rows(settings.db_path, links) == [(IDS["hydration"],)]
