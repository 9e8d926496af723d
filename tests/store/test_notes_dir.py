"""The notes directory an index remembers (``meta`` ``notes_dir``), read by the CLI
without opening the database as a store (store/db.py ``remembered_notes_dir``)."""

from __future__ import annotations

import pytest

from arcology_oracle.errors import StoreError
from arcology_oracle.store import Store
from arcology_oracle.store.db import remembered_notes_dir


def test_a_database_whose_path_holds_uri_characters_is_read(tmp_path):
    # Read through a file: URI, "#", "?" and "%" in a folder's name were read as the
    # URI's own: the index was not found, and the CLI fell back on ~/org-roam.
    path = tmp_path / "notes #1? 100%" / "index.sqlite3"
    store = Store.open(path)
    store.remember_notes_dir(str(tmp_path / "roam"))
    store.close()
    assert remembered_notes_dir(path) == str(tmp_path / "roam")


def test_what_is_not_an_index_remembers_nothing(tmp_path):
    assert remembered_notes_dir(tmp_path / "none.sqlite3") is None
    (tmp_path / "empty.sqlite3").write_bytes(b"")  # (SQLite's empty database)
    assert remembered_notes_dir(tmp_path / "empty.sqlite3") is None


def test_a_file_that_is_not_a_database_is_an_error_and_is_kept(tmp_path):
    # It was read as "remembers nothing": the CLI then took ~/org-roam (tests/cli/test_unreadable_index.py).
    (tmp_path / "text.sqlite3").write_text("not a database")
    with pytest.raises(StoreError, match="is not a usable database"):
        remembered_notes_dir(tmp_path / "text.sqlite3")
    assert (tmp_path / "text.sqlite3").read_text() == "not a database"
