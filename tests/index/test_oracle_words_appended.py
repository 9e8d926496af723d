"""A capture indexed alone (index/appends.py) is marked the oracle's words exactly when a
full read of its note marks it: a daily whose drawer says ``:ROLE: oracle`` makes it the
oracle's; a daily that is a chat with a grounded model whose reply stands before the
first heading does not (the reply is the oracle's, the headings below it are not). The
append path copied the file record's mark itself, so a user's capture into such a chat
vanished from /similar and /ask until the note was next edited."""

from __future__ import annotations

import datetime
import sqlite3

import pytest

from arcology_oracle.index.memory import Memory
from arcology_oracle.index.service import OracleIndex

NOW = datetime.datetime(2026, 3, 14, 9, 26)
REPLY = "The notes say: water at seventy percent."


def grounded_chat() -> str:
    """A chat whose reply (gptel's bounds: 1-based character positions, written with four
    digits so that writing them moves nothing) stands before its first heading."""
    text = (":PROPERTIES:\n:ID: d-1\n:GPTEL_MODEL: llama3.2+notes\n:GPTEL_BOUNDS: ((response (BBBB EEEE)))\n:END:\n"
            "#+title: 2026-03-14\n\n" + REPLY + "\n* My own question\nmore of mine\n")  # fmt: skip
    begin = text.index(REPLY) + 1
    return text.replace("BBBB", f"{begin:04d}").replace("EEEE", f"{begin + len(REPLY):04d}")


DAILIES = {
    "file role oracle": ":PROPERTIES:\n:ID: d-2\n:ROLE: oracle\n:END:\n#+title: 2026-03-14\n* An answer\nkept\n",
    "grounded chat, reply first": grounded_chat(),
}


def marks(db) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT h.title, h.oracle FROM headings h JOIN files f ON f.id = h.file WHERE f.path = ?",
                            ("daily/2026-03-14.org",))  # fmt: skip
        found = dict(rows.fetchall())
    conn.close()
    return found


@pytest.mark.parametrize("daily", DAILIES)
async def test_a_capture_indexed_alone_is_marked_as_a_full_read_marks_it(tmp_path, roam_dir, make_settings, daily):
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / "daily").mkdir(exist_ok=True)
    (roam_dir / "daily" / "2026-03-14.org").write_text(DAILIES[daily])
    index = OracleIndex(settings)
    await index.start()
    try:
        await index.reconcile()
        captured = await Memory(index).memorize("my sourdough idea: more rye", now=NOW)
        assert captured.file == "daily/2026-03-14.org" and captured.indexed
    finally:
        await index.close()
    # The same note read whole, into an index of its own.
    full = make_settings(roam_dir=roam_dir, db_path=tmp_path / "full.sqlite3")
    index = OracleIndex(full)
    await index.start()
    try:
        await index.reconcile()
    finally:
        await index.close()
    assert marks(settings.db_path) == marks(full.db_path)
    assert marks(full.db_path)["my sourdough idea: more rye"] == (daily == "file role oracle")


async def test_a_capture_titled_oracle_in_a_conversation_daily_stays_the_users(tmp_path, roam_dir, make_settings):
    """The conversation reader takes a turn titled "Oracle..." for the oracle's. Words kept
    by /memorize are in no conversation: whose they are is their :ROLE: alone, so a capture
    titled "Oracle bones" into a daily that is a conversation stays the user's, read whole
    or alone."""
    settings = make_settings(roam_dir=roam_dir)
    (roam_dir / "daily").mkdir(exist_ok=True)
    (roam_dir / "daily" / "2026-03-14.org").write_text(
        "#+title: 2026-03-14\n* Me\n:PROPERTIES:\n:ROLE: user\n:END:\nWhat is rye?\n"
        "* Oracle\n:PROPERTIES:\n:ROLE: oracle\n:END:\nA grain.\n"
    )
    index = OracleIndex(settings)
    await index.start()
    try:
        await index.reconcile()
        await Memory(index).memorize("my reading list on divination", title="Oracle bones", now=NOW)
        # Read whole again (as the next edit of the note would make it).
        path = roam_dir / "daily" / "2026-03-14.org"
        path.write_text(path.read_text() + "\n")
        await index.reconcile()
    finally:
        await index.close()
    assert marks(settings.db_path) == {"2026-03-14": 0, "Me": 0, "Oracle": 1, "Oracle bones": 0}
