"""Fixtures shared by the forget record's tests: a notes directory with a ``daily``
folder, and a database path whose record is registered for it."""

from __future__ import annotations

import pytest

from arcology_oracle.index import forget_journal, note_io


@pytest.fixture(autouse=True)
def leases():
    note_io.prepare_leases()


@pytest.fixture
def root(tmp_path):
    (tmp_path / "roam" / "daily").mkdir(parents=True)
    return tmp_path / "roam"


@pytest.fixture
def db(tmp_path, root):
    db = tmp_path / "index.sqlite3"
    forget_journal.register(root, db)
    return db
