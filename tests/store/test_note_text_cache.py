"""The notes' texts kept in memory for /similar's word re-ranking (store/note_text_cache.py):
served again for the same note, never stale after a write, bounded in bytes."""

from __future__ import annotations

import dataclasses
import sys

from arcology_oracle.notes.records import Chunk, ParsedFile, sha256_hex
from arcology_oracle.store import Store
from arcology_oracle.store.note_text_cache import NoteTexts
from tests.store_rows import heading


def _write(store: Store, path: str, headings: list[tuple[str, str]]) -> None:
    """Replace file ``path`` with one heading per ``(node id, text)``."""
    rows = [dataclasses.replace(heading(i), node_id=n, own_id=n, text=t, body=t) for i, (n, t) in enumerate(headings)]
    chunks = [[Chunk(0, t, sha256_hex(t))] for _, t in headings]
    parsed = ParsedFile(path=path, title="T", file_id=None, headings=rows)
    store.replace_file(parsed, size=1, mtime_ns=1, file_hash=sha256_hex(path + str(headings)), chunks=chunks)


def _ids(store: Store, path: str) -> list[int]:
    return [r[0] for r in store.conn.execute(
        "SELECT h.id FROM headings h JOIN files f ON f.id = h.file WHERE f.path = ? ORDER BY h.start_line", (path,)
    )]  # fmt: skip


def test_a_write_makes_the_remembered_texts_stale(tmp_path):
    """Read twice, a note's text comes from memory the second time; after another
    connection's commit changes the note, the new text."""
    writer = Store.open(tmp_path / "db.sqlite3", writer=True)
    reader = Store.open(tmp_path / "db.sqlite3")
    try:
        _write(writer, "a.org", [("node-a", "Rye sourdough"), ("node-a", "A long cold proof")])
        first = _ids(reader, "a.org")[0]
        before = {first: "Heading 0\nRye sourdough\nHeading 1\nA long cold proof"}
        assert reader.note_texts([first], 1000, notes={first: "node-a"}) == before
        assert reader.note_texts([first], 1000, notes={first: "node-a"}) == before
        assert reader._texts.hits == 1
        _write(writer, "a.org", [("node-a", "Spelt sourdough")])
        first = _ids(reader, "a.org")[0]
        assert reader.note_texts([first], 1000, notes={first: "node-a"}) == {first: "Heading 0\nSpelt sourdough"}
    finally:
        reader.close()
        writer.close()


def test_a_text_is_served_for_its_note_and_limit_only(tmp_path):
    """Two headings of one note share its text; a text read for one limit is not served
    for another; headings whose note the caller does not give are read, not remembered."""
    writer = Store.open(tmp_path / "db.sqlite3", writer=True)
    reader = Store.open(tmp_path / "db.sqlite3")
    try:
        _write(writer, "a.org", [("node-a", "Rye"), ("node-a", "Spelt"), ("node-b", "Oats")])
        a0, a1, b = _ids(reader, "a.org")
        notes = {a0: "node-a", a1: "node-a"}
        assert reader.note_texts([a0, b], 1000, notes=notes) == {a0: "Heading 0\nRye\nHeading 1\nSpelt", b: "Heading 2\nOats"}
        assert reader.note_texts([a1], 1000, notes=notes) == {a1: "Heading 0\nRye\nHeading 1\nSpelt"}  # from memory
        assert reader._texts.hits == 1
        assert reader.note_texts([a1], 12, notes=notes) == {a1: "Heading 0\nRy"}
        assert reader.note_texts([b], 1000, notes=notes) == {b: "Heading 2\nOats"}
        assert reader._texts.hits == 1
    finally:
        reader.close()
        writer.close()


def test_the_cache_is_bounded_and_forgets_the_least_recently_used():
    texts = NoteTexts(max_bytes=3 * sys.getsizeof("t0"))  # three of these texts
    read = lambda ids: {i: f"t{i}" for i in ids}  # noqa: E731
    keys = {i: f"note {i}" for i in range(5)}
    assert texts.texts("g1", [0, 1, 2], keys, read) == {0: "t0", 1: "t1", 2: "t2"}
    texts.texts("g1", [0], keys, read)  # 0 is now the most recently used
    texts.texts("g1", [3], keys, read)
    assert (texts.hits, texts.misses) == (1, 4)
    texts.texts("g1", [0, 2, 3], keys, read)
    assert (texts.hits, texts.misses) == (4, 4)
    texts.texts("g1", [1], keys, read)
    assert (texts.hits, texts.misses) == (4, 5)  # 1, least recently used, went first
    texts.texts("g2", [0], keys, read)  # another write generation: nothing is served
    assert (texts.hits, texts.misses) == (4, 6)


def test_a_write_forgets_only_the_notes_it_changed(tmp_path):
    """After a save of one note, the texts of the notes it did not touch come from
    memory, the saved note's and a file-level note's (headings in no node) anew; a write
    of vectors alone forgets nothing (BENCHMARKS.md, issue 29, eighteenth round)."""
    writer = Store.open(tmp_path / "db.sqlite3", writer=True)
    reader = Store.open(tmp_path / "db.sqlite3")
    try:
        _write(writer, "a.org", [("node-a", "Rye sourdough")])
        _write(writer, "b.org", [("node-b", "Oat porridge")])
        _write(writer, "c.org", [(None, "Loose words")])
        a, b, c = (_ids(reader, p)[0] for p in ("a.org", "b.org", "c.org"))
        notes = {a: "node-a", b: "node-b", c: "file:c.org"}
        assert reader.note_texts([a, b, c], 1000, notes=notes)[b] == "Heading 0\nOat porridge"
        misses = reader._texts.misses
        _write(writer, "a.org", [("node-a", "Spelt sourdough")])
        with writer.transaction():  # a batch of vectors stored: no heading changes
            writer.conn.execute("INSERT INTO embeddings (hash) VALUES ('x')")
        a = _ids(reader, "a.org")[0]
        notes = {a: "node-a", b: "node-b", c: "file:c.org"}
        assert reader.note_texts([a, b, c], 1000, notes=notes) == {
            a: "Heading 0\nSpelt sourdough", b: "Heading 0\nOat porridge", c: "Heading 0\nLoose words"}  # fmt: skip
        assert reader._texts.misses == misses + 1  # the saved note alone
        _write(writer, "c.org", [(None, "Other words")])
        c = _ids(reader, "c.org")[0]
        assert reader.note_texts([c], 1000, notes={c: "file:c.org"}) == {c: "Heading 0\nOther words"}
    finally:
        reader.close()
        writer.close()
