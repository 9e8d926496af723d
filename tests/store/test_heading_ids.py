"""A heading id is never given out again (store/writes.py ``_insert_rows``).

Readers hold heading ids between two statements and between two reads: /search's keyword
half and its vector half run on two reader threads, /suggest-links for a heading reads its
headings' ids and later their vectors, a result's rows are read after its ranking. A note
indexed again gets its headings' ids anew; when the ids of a note indexed again, or of one
deleted, went to the next headings indexed, an id held across such a write named another
heading by then (the note indexed last was read again into the ids it had, one heading
added at its top shifting every other). Now an id held across a write names its heading or
none.
"""

from __future__ import annotations

from arcology_oracle.store import Store
from tests.store_rows import write_file


def _ids(store: Store, path: str) -> list[int]:
    return [r[0] for r in store.conn.execute(
        "SELECT h.id FROM headings h JOIN files f ON f.id = h.file WHERE f.path = ? ORDER BY h.id", (path,)
    )]  # fmt: skip


def _title(store: Store, heading_id: int) -> str | None:
    row = store.conn.execute("SELECT title FROM headings WHERE id = ?", (heading_id,)).fetchone()
    return None if row is None else row[0]


def test_a_note_indexed_again_never_gets_ids_another_heading_had(tmp_path):
    store = Store.open(tmp_path / "db.sqlite3", writer=True)
    write_file(store, "a.org", [1, 2, 3])
    write_file(store, "b.org", [10, 11, 12])  # the highest ids
    old = _ids(store, "b.org")
    held = old[0]
    assert _title(store, held) == "Heading 10"
    write_file(store, "b.org", [9, 10, 11, 12])  # a heading added at its top
    assert _title(store, held) in (None, "Heading 10")  # was "Heading 9"
    assert not set(_ids(store, "b.org")) & set(old)
    store.close()


def test_the_ids_of_a_note_deleted_go_to_no_other_note(tmp_path):
    store = Store.open(tmp_path / "db.sqlite3", writer=True)
    write_file(store, "a.org", [1, 2])
    write_file(store, "b.org", [3, 4])
    gone = _ids(store, "b.org")
    store.delete_file("b.org")
    write_file(store, "c.org", [5, 6])
    assert not set(_ids(store, "c.org")) & set(gone)  # c.org got b.org's ids
    assert all(_title(store, i) is None for i in gone)
    store.close()


def test_no_id_is_given_out_again_after_the_store_is_opened_again(tmp_path):
    """What was given is kept in the database, not in the writer's memory: another
    process (the CLI beside the daemon) or the daemon started again gives out ids above
    it too."""
    store = Store.open(tmp_path / "db.sqlite3", writer=True)
    write_file(store, "a.org", [1])
    write_file(store, "b.org", [2, 3])
    gone = _ids(store, "b.org")
    store.delete_file("b.org")
    store.close()
    again = Store.open(tmp_path / "db.sqlite3", writer=True)
    write_file(again, "c.org", [4, 5])
    assert min(_ids(again, "c.org")) > max(gone)
    again.close()


def test_ids_of_a_write_rolled_back_were_never_seen_and_the_rest_keep_their_order(tmp_path):
    """A file's headings keep ids in file order (store/file_rows.py ``stored_as`` reads
    them so), also when a savepoint of the batch was rolled back."""
    store = Store.open(tmp_path / "db.sqlite3", writer=True)
    with store.transaction():
        write_file(store, "a.org", [1, 2])
        try:
            with store.transaction():
                write_file(store, "b.org", [3, 4])
                raise RuntimeError("the file could not be read")
        except RuntimeError:
            pass
        write_file(store, "c.org", [5, 6, 7])
    assert [_title(store, i) for i in _ids(store, "c.org")] == ["Heading 5", "Heading 6", "Heading 7"]
    assert _ids(store, "b.org") == []
    found = store.conn.execute("SELECT rowid FROM headings_fts WHERE headings_fts MATCH 'heading' ORDER BY rowid")
    assert [r[0] for r in found] == _ids(store, "a.org") + _ids(store, "c.org")
    store.close()
