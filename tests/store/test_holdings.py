"""Which notes hold other notes (store/holdings.py, ``Store.holders_among``): the same
answer as comparing every pair, served from memory between writes and never stale after
one. Real SQLite."""

from __future__ import annotations

import dataclasses
import itertools
import json
import random

from arcology_oracle.notes.records import Chunk, ParsedFile, sha256_hex
from arcology_oracle.store import Store
from arcology_oracle.store.holdings import holders, holding_of
from tests.store_rows import heading


def every_pair(notes: dict[str, set[tuple[str, str]]]) -> set[str]:
    """What holders() must give, by its definition, comparing every two notes."""
    return {h for n, h in itertools.permutations(notes, 2) if notes[n] and notes[n] < notes[h]}


def test_holders_are_those_holding_all_of_another_and_more():
    """Small notes drawn from few headings (so that many hold or share some), and the
    cases the least-heading shortcut must not miss: a one-heading note held by a note
    whose least heading it is, copies (each holds the other, nothing more)."""
    rng = random.Random(7)
    pool = [(f"T{i % 3}", f"text {i}") for i in range(6)]
    cases = [
        {"n": {pool[0]}, "h": {pool[0], pool[1]}},
        {"a": {pool[2], pool[3]}, "copy": {pool[2], pool[3]}, "other": {pool[4]}},
        {"empty": set(), "h": {pool[0], pool[1]}},
    ]
    cases += [{f"note{j}": set(rng.sample(pool, rng.randint(0, 4))) for j in range(rng.randint(2, 8))} for _ in range(500)]
    for notes in cases:
        found = holders({n: holding_of(sorted(hs)) for n, hs in notes.items()})
        assert found == every_pair(notes), notes


def write(store: Store, path: str, node: str, headings: list[tuple[str, str]]) -> None:
    rows = [
        dataclasses.replace(heading(i), node_id=node, own_id=node if i == 0 else None, title=title, body=text, text=text)
        for i, (title, text) in enumerate(headings)
    ]
    chunks = [[Chunk(0, f"{path} {i}", sha256_hex(f"{path} {i}"))] for i in range(len(rows))]
    parsed = ParsedFile(path=path, title=path, file_id=None, headings=rows)
    store.replace_file(parsed, size=1, mtime_ns=1, file_hash=sha256_hex(repr(headings)), chunks=chunks)


def test_a_note_that_comes_to_hold_another_is_a_holder_after_the_write(tmp_path):
    """Asked again, the notes' headings come from memory; once the other note is written
    holding the first one's heading and more, it is a holder at once (the remembered
    headings were of the write before)."""
    store = Store.open(tmp_path / "index.sqlite3")
    try:
        write(store, "part.org", "part", [("Unified format", "Context lines once, merged.")])
        write(store, "chapter.org", "chapter", [("Output formats", "Several formats.")])
        assert store.holders_among(["part", "chapter"]) == set()
        hits = store._holdings.hits
        assert store.holders_among(["chapter", "part"]) == set()
        assert store._holdings.hits == hits + 2
        write(store, "chapter.org", "chapter",
              [("Output formats", "Several formats."), ("Unified format", "Context lines once, merged.\n")])  # fmt: skip
        assert store.holders_among(["part", "chapter"]) == {"chapter"}
    finally:
        store.close()


def headings_read(store: Store) -> list[str]:
    """From now on, the notes whose headings' text ``store`` reads (each statement
    trimming text, its bound list of node ids), appended as they are read."""
    read: list[str] = []

    def trace(sql: str) -> None:
        if "trim(text" in sql and "json_each('" in sql:
            read.extend(json.loads(sql.split("json_each('", 1)[1].split("')", 1)[0]))

    store.conn.set_trace_callback(trace)
    return read


def test_a_write_reads_again_only_the_notes_it_changed(tmp_path):
    """After a save, the first section query reads again the headings of the notes the
    save changed, not those of every candidate (BENCHMARKS.md, issue 29, seventeenth
    round); the note it changed is seen changed at once, ceasing to hold the other, and
    another coming to hold it."""
    store = Store.open(tmp_path / "index.sqlite3")
    try:
        write(store, "part.org", "part", [("Unified format", "Context lines once, merged.")])
        write(store, "chapter.org", "chapter",
              [("Output formats", "Several formats."), ("Unified format", "Context lines once, merged.")])  # fmt: skip
        for n in range(5):
            write(store, f"other{n}.org", f"other{n}", [(f"Other {n}", f"Text {n}."), ("More", "More.")])
        asked = ["part", "chapter", *(f"other{n}" for n in range(5))]
        read = headings_read(store)
        assert store.holders_among(asked) == {"chapter"}
        assert sorted(read) == sorted(asked)
        read.clear()
        write(store, "chapter.org", "chapter", [("Output formats", "Several formats."), ("Unified format", "Now other.")])
        assert store.holders_among(asked) == set()
        assert read == ["chapter"]  # the chapter alone, read again
        read.clear()
        write(store, "other0.org", "other0", [("Other 0", "Text 0."), ("Unified format", "Context lines once, merged.")])
        assert store.holders_among(asked) == {"other0"}
        assert read == ["other0"]
    finally:
        store.close()


def test_a_note_losing_headings_and_gaining_none_is_seen_changed(tmp_path):
    """A note whose ID two files carry loses one file's headings when that file is
    deleted, and no heading of it is new (its greatest heading id stays): it holds the
    other note no more."""
    store = Store.open(tmp_path / "index.sqlite3")
    try:
        write(store, "part.org", "part", [("Unified format", "Context lines once, merged.")])
        write(store, "copy.org", "chapter", [("Unified format", "Context lines once, merged.")])
        write(store, "chapter.org", "chapter", [("Output formats", "Several formats.")])  # its greatest id
        assert store.holders_among(["part", "chapter"]) == {"chapter"}
        assert store.delete_file("copy.org")
        assert store.holders_among(["part", "chapter"]) == set()
    finally:
        store.close()
