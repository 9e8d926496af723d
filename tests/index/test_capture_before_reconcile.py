"""A capture of the oracle's words, and a ``/converse`` answer, quiet their ``id:`` links
to IDs no note has (a model's mangled ID would make every export of the file fail),
which the index tells. A new index, during its first reconcile, knows no ID yet: links
to real notes were quieted too. Until the index has read the notes, the IDs it does not
know are looked for in the files."""

from __future__ import annotations

import asyncio
import datetime

from arcology_oracle.answers.oracle import Oracle
from arcology_oracle.index.memory import Memory
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.notes.org_escape import ZWSP
from arcology_oracle.ollama.chat import OllamaChat
from tests.http.test_model_text_writes import NOTE_ID

NOW = datetime.datetime(2026, 3, 14, 9, 26)
MANGLED = NOTE_ID[:-1]
TEXT = f"Hydration: see [[id:{NOTE_ID}][the note]], not [[id:{MANGLED}][this]] nor id:{MANGLED}x."


def assert_quieted_but_the_notes(written: str) -> None:
    assert f"[[id:{NOTE_ID}][the note]]" in written, written
    assert f"[{ZWSP}[id{ZWSP}:{MANGLED}][this]]" in written and f"id{ZWSP}:{MANGLED}x" in written, written


async def test_a_capture_before_the_first_reconcile_keeps_its_links_to_real_notes(roam_dir, make_settings):
    index = OracleIndex(make_settings(roam_dir=roam_dir))
    await index.start()
    try:
        assert await index.read(lambda store: store.node(NOTE_ID)) is None  # nothing read yet
        memory = Memory(index, ready=asyncio.Event())  # the first reconcile has not ended
        captured = await memory.memorize(TEXT, role="oracle", now=NOW)
    finally:
        await index.close()
    assert_quieted_but_the_notes((roam_dir / captured.file).read_text())


async def test_an_answer_before_the_first_reconcile_keeps_its_links_to_real_notes(roam_dir, make_settings, fake_ollama):
    index = OracleIndex(make_settings(roam_dir=roam_dir, ollama_host=fake_ollama.url))
    await index.start()
    llm = OllamaChat(index.settings)
    fake_ollama.state.chat_reply = TEXT
    try:
        result = await Oracle(index, llm, ready=asyncio.Event()).converse("* Talk\n** How wet?\n")
    finally:
        await llm.close()
        await index.close()
    assert_quieted_but_the_notes(result.org)


async def test_an_index_that_holds_the_notes_reads_no_file_for_an_id_while_it_starts(roam_dir, make_settings, monkeypatch):
    # At every start (its first reconcile running) an ID the index did not know, a
    # model's mangled one, was looked for in every note file: a read of all the notes.
    from arcology_oracle.notes import note_ids

    index = OracleIndex(make_settings(roam_dir=roam_dir))
    await index.start()
    looked: list[set[str]] = []
    monkeypatch.setattr(note_ids, "ids_held", lambda root, wanted=None: looked.append(set(wanted)) or set())
    try:
        await index.reconcile()  # the last run's index
        memory = Memory(index, ready=asyncio.Event())  # this start's reconcile has not ended
        captured = await memory.memorize(TEXT, role="oracle", now=NOW)
    finally:
        await index.close()
    assert looked == []
    assert_quieted_but_the_notes((roam_dir / captured.file).read_text())
