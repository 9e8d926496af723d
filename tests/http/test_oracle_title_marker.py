"""The ``Oracle`` title marks a conversation's turn as the oracle's only alone or before
punctuation (notes/conversations.py, ``is_marker_title``): a turn of the user's titled
"Oracle of Delphi" is their subject, and was read as the oracle's answer, so it left
/similar, /ask and summaries as if the oracle had written it. An index made before is
read again (m024), the conversations holding such a title and no other file."""

from __future__ import annotations

import sqlite3

import pytest

from arcology_oracle.notes.conversations import is_marker_title, parse_conversation
from tests.runners import reconcile_once

MINE = "5555dddd-0000-4000-8000-000000000005"
TALK = "6666dddd-0000-4000-8000-000000000006"
FILES = {
    "delphi-mine.org": (
        f":PROPERTIES:\n:ID: {MINE}\n:END:\n#+title: Greek sanctuaries\n\n"
        "* Delphi sanctuary pilgrimage\nThe Pythia spoke at the Delphi sanctuary to every pilgrim.\n"
    ),
    "delphi-talk.org": (
        f":PROPERTIES:\n:ID: {TALK}\n:END:\n#+title: Delphi talk\n\n"
        "* Sanctuaries\n** Me\n:PROPERTIES:\n:ROLE: user\n:END:\nWhere did pilgrims go?\n"
        "** Oracle (llama3.2)\nANSWERED the Delphi sanctuary drew every pilgrim.\n"
        "** Oracle of Delphi\nMYWORDS the Pythia at the Delphi sanctuary spoke to each pilgrim.\n"
    ),
}


@pytest.mark.parametrize(
    "title,marks",
    [("Oracle", True), ("oracle:", True), ("Oracle (llama3.2)", True), ("Oracle <2024-03-01 Fri>", True),
     ("Oracle — the answer", True), ("Oracle of Delphi", False), ("Oracle Database tuning", False),
     ("Oracle's prophecy", False), ("Oracles", False)],
)  # fmt: skip
def test_the_title_marker(title, marks):
    assert is_marker_title(title) is marks
    org = f"* Topic\n** A question\n:PROPERTIES:\n:ROLE: user\n:END:\nq\n** {title}\ntext\n** Me\nmore\n"
    assert [t.role for t in parse_conversation(org).turns][1] == ("assistant" if marks else "user")


async def test_a_users_turn_titled_oracle_of_delphi_is_theirs(make_client, settings, roam_dir):
    for name, text in FILES.items():
        (roam_dir / name).write_text(text, encoding="utf-8")
    client = await make_client(settings)
    resp = await client.get(f"/nodes/{TALK}")
    roles = {h["heading"]: h["role"] for h in (await resp.json())["headings"]}
    assert roles["Oracle of Delphi"] is None and roles["Oracle (llama3.2)"] == "oracle", roles  # None: the user's
    resp = await client.get("/similar", params={"node": MINE, "k": "50", "all": "true"})
    found = {(r["file"], r["heading"]) for r in (await resp.json())["results"]}
    assert ("delphi-talk.org", "Oracle (llama3.2)") not in found
    assert ("delphi-talk.org", "Oracle of Delphi") in found or ("delphi-talk.org", "Me") in found, found


async def test_an_index_made_before_reads_such_conversations_again(roam_dir, make_settings):
    settings = make_settings(roam_dir=roam_dir)
    for name, text in FILES.items():
        (roam_dir / name).write_text(text, encoding="utf-8")
    (roam_dir / "oracle-db.org").write_text("* Oracle Database tuning\nIndexes first.\n", encoding="utf-8")
    await reconcile_once(settings)
    with sqlite3.connect(settings.db_path) as conn:  # as the older reader marked it
        conn.execute("UPDATE headings SET oracle = 1 WHERE title = 'Oracle of Delphi'")
        conn.execute("DELETE FROM _migrations WHERE name = 'm024_reread_oracle_titles'")
    conn.close()
    report = await reconcile_once(settings)
    assert report.failed == {} and report.indexed == 1  # the conversation alone
    with sqlite3.connect(settings.db_path) as conn:
        marks = dict(conn.execute("SELECT title, oracle FROM headings WHERE title LIKE 'Oracle%'").fetchall())
    conn.close()
    assert marks == {"Oracle (llama3.2)": 1, "Oracle of Delphi": 0, "Oracle Database tuning": 0}
