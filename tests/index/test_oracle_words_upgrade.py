"""Upgrading an index made before the oracle's words were kept per heading (m020): the
files that can hold any (a ``:ROLE:``, dialogue) are read again once and their headings
marked; the rest keep their rows."""

from __future__ import annotations

import sqlite3

from arcology_oracle.index.service import OracleIndex
from tests.http.test_oracle_words_marked import FILES, ORACLE_HEADINGS

PLAIN = {"kiln-plain.org": "#+title: Plain kiln\n\n* Firing schedule\nCone six, slowly.\n"}


def marked(db) -> set[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT f.path, h.title FROM headings h JOIN files f ON f.id = h.file WHERE h.oracle")
        found = {tuple(r) for r in rows}
    conn.close()
    return found


async def test_an_index_without_the_mark_is_marked_by_reading_again_the_files_that_can_hold_it(roam_dir, make_settings):
    settings = make_settings(roam_dir=roam_dir)
    for rel, text in {**FILES, **PLAIN}.items():
        (roam_dir / rel).write_text(text)
    index = OracleIndex(settings)
    await index.start()
    try:
        await index.reconcile()
    finally:
        await index.close()
    expected = ORACLE_HEADINGS | {("kiln-summary.org", "Kiln summary")}  # the file's own record too
    assert marked(settings.db_path) == expected
    # As an index of the version before was: no column, the migration not applied.
    with sqlite3.connect(settings.db_path) as conn:
        conn.execute("ALTER TABLE headings DROP COLUMN oracle")
        conn.execute("DELETE FROM _migrations WHERE name = 'm020_oracle_words'")
    conn.close()

    index = OracleIndex(settings)
    await index.start()
    try:
        report = await index.reconcile()
        assert marked(settings.db_path) == expected
        assert report.indexed == 3  # the three files with a :ROLE: (one holds dialogue); not the others
        again = await index.reconcile()
        assert again.indexed == 0
    finally:
        await index.close()
