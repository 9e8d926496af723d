"""Which notes each write of headings changed (store/note_changes.py): recorded by the
real writes of a real SQLite store as keyed digests (never a note's ID or path), read
back from any earlier generation the record reaches, and "cannot tell" (None) whenever it
does not."""

from __future__ import annotations

import dataclasses
import json
import re

from arcology_oracle.notes.records import Chunk, ParsedFile, sha256_hex
from arcology_oracle.store import Store
from arcology_oracle.store import note_changes
from arcology_oracle.store.note_changes import MAX_NOTES, NOTES_CHANGED, appended, digest, since
from tests.store_rows import heading


def write(store: Store, path: str, nodes: list[str | None]) -> None:
    rows = [dataclasses.replace(heading(i), node_id=n, own_id=n, text=f"{path} {i}") for i, n in enumerate(nodes)]
    chunks = [[Chunk(0, f"{path} {i}", sha256_hex(f"{path} {i}"))] for i in range(len(rows))]
    parsed = ParsedFile(path=path, title=path, file_id=None, headings=rows)
    store.replace_file(parsed, size=1, mtime_ns=1, file_hash=sha256_hex(path + repr(nodes)), chunks=chunks)


def named(*notes: str) -> set[str]:
    return {digest(note) for note in notes}


def test_every_write_of_headings_names_the_notes_it_changed(tmp_path):
    """A save names the notes it had and has (one taken out of the file too), a file's
    headings in no node by ``file:`` and its path, a deleted file its notes; a later
    reader gets the union since its generation; a write of no heading renews nothing."""
    store = Store.open(tmp_path / "index.sqlite3")
    try:
        write(store, "a.org", ["a1", "a2"])
        write(store, "b.org", ["b1", None])
        start = store.nodes_generation()
        write(store, "a.org", ["a1", "a3"])
        one = store.nodes_generation()
        assert store.notes_changed_since(start) == named("a1", "a2", "a3")
        with store.transaction():
            store.conn.execute("INSERT INTO embeddings (hash) VALUES ('x')")
        assert store.nodes_generation() == one
        assert store.delete_file("b.org")
        assert store.notes_changed_since(one) == named("b1", "file:b.org")
        assert store.notes_changed_since(start) == named("a1", "a2", "a3", "b1", "file:b.org")
        listed = [note for _, _, notes in json.loads(store.get_meta(NOTES_CHANGED)) for note in notes or ()]
        assert listed and all(re.fullmatch("[0-9a-f]{16}", note) for note in listed)  # digests only
        assert "b.org" not in store.get_meta(NOTES_CHANGED)
        assert store.notes_changed_since(store.nodes_generation()) == frozenset()
        assert store.notes_changed_since("a token never recorded") is None
        assert store.notes_changed_since(None) is None
    finally:
        store.close()


def test_the_record_cannot_tell_past_a_write_it_does_not_list():
    """A write of more notes than the record lists (a cold index) stands for every note,
    and an old write the record left out, or a database token it does not end at (a
    writer that kept no record), cannot be told from."""
    record = appended(None, "t1", {"x"})
    record = appended(record, "t2", {f"n{i}" for i in range(MAX_NOTES + 1)})
    record = appended(record, "t3", {"y"})
    assert since(record, "t3", "t2") == named("y")
    assert since(record, "t3", "t1") is None  # across the write of every note
    assert since(record, "t4", "t2") is None  # the database is at a token not recorded
    for n in range(MAX_NOTES):
        record = appended(record, f"u{n}", {f"m{n}"})
    assert since(record, f"u{MAX_NOTES - 1}", "t3") is None  # left out: the record is bounded
    assert since(record, f"u{MAX_NOTES - 1}", f"u{MAX_NOTES - 3}") == named(f"m{MAX_NOTES - 2}", f"m{MAX_NOTES - 1}")
    last = MAX_NOTES - 1  # a reader whose token was read before the record's last writes:
    assert since(record, f"u{last - 2}", f"u{last - 4}") == named(f"m{last - 3}", f"m{last - 2}")
    assert since("not json", "u5", "u3") is None


def test_a_write_of_another_process_cannot_be_told(monkeypatch):
    """Another process keys its digests by its own secret: its writes cannot be told
    from here, so a cache forgets everything rather than keep what they changed."""
    record = appended(None, "t1", {"x"})
    monkeypatch.setattr(note_changes, "_SECRET_ID", "another")
    monkeypatch.setattr(note_changes, "_SECRET", b"another secret..")
    record = appended(record, "t2", {"y"})
    monkeypatch.undo()
    assert since(record, "t2", "t1") is None
