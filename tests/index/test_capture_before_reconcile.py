"""A capture of the oracle's words quiets its ``id:`` links to IDs no note has (a model's
mangled ID would make every export of the daily fail), which the index tells. A new
index, during its first reconcile, knows no ID yet: its links to real notes were
quieted too, the user's link gone. Until the index has read the notes, the IDs it does
not know are looked for in the files."""

from __future__ import annotations

import asyncio
import datetime

from arcology_oracle.index.memory import Memory
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.notes.org_escape import ZWSP
from tests.http.test_model_text_writes import NOTE_ID

NOW = datetime.datetime(2026, 3, 14, 9, 26)
MANGLED = NOTE_ID[:-1]


async def test_a_capture_before_the_first_reconcile_keeps_its_links_to_real_notes(roam_dir, make_settings):
    index = OracleIndex(make_settings(roam_dir=roam_dir))
    await index.start()
    try:
        assert await index.read(lambda store: store.node(NOTE_ID)) is None  # nothing read yet
        memory = Memory(index, ready=asyncio.Event())  # the first reconcile has not ended
        text = f"Hydration: see [[id:{NOTE_ID}][the note]], not [[id:{MANGLED}][this]] nor id:{MANGLED}x."
        captured = await memory.memorize(text, role="oracle", now=NOW)
    finally:
        await index.close()
    written = (roam_dir / captured.file).read_text()
    assert f"[[id:{NOTE_ID}][the note]]" in written, written
    assert f"[{ZWSP}[id{ZWSP}:{MANGLED}][this]]" in written and f"id{ZWSP}:{MANGLED}x" in written, written
