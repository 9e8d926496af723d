"""A note saved in place (truncated, then written) is never read half way: the half may
lack the private ``#+filetags`` line the whole has, and would be stored public until
read again. Real files written in two steps by this process (its descriptor open for
writing between them, as the saving program's is), real SQLite; the database's every
byte is searched."""

from __future__ import annotations

from arcology_oracle.index import note_io
from arcology_oracle.index.service import OracleIndex
from tests.corpus_tools import db_bytes

BEFORE = "#+title: Plans\n* Garden\nhalfsaveturnips in March\n"
# The whole note is private: its #+filetags line (which counts anywhere) comes last.
FIRST_HALF = b"#+title: Plans\n* Lawyer\nhalfsavesecret: call on Monday\n"
SECOND_HALF = b"#+filetags: :private:\n"


async def test_a_note_half_saved_is_not_read_until_its_writer_is_done(tmp_path, make_settings):
    note_io.prepare_leases()  # as the daemon does at start (SIGIO ignored)
    roam = tmp_path / "notes"
    roam.mkdir()
    note = roam / "plans.org"
    note.write_text(BEFORE)
    settings = make_settings(roam_dir=roam)
    index = OracleIndex(settings)
    await index.start()
    try:
        await index.reconcile()
        with open(note, "r+b") as saving:  # the other program's save, under way
            saving.truncate(0)
            saving.write(FIRST_HALF)
            saving.flush()
            report = await index.index_paths(["plans.org"])  # the watcher (or a reconcile) reads meanwhile
            assert report.indexed == 0 and list(report.failed) == ["plans.org"], report
            assert b"halfsavesecret" not in db_bytes(settings.db_path)
            assert await index.read(lambda s: sorted(s.file_states())) == ["plans.org"]  # as it was
            saving.write(SECOND_HALF)
        report = await index.index_paths(["plans.org"])  # the save done: read whole
        assert report.private == 1 and report.deleted == 1, report
        assert await index.read(lambda s: sorted(s.file_states())) == []
    finally:
        await index.close()
    raw = db_bytes(settings.db_path)
    assert b"halfsavesecret" not in raw and b"halfsaveturnips" not in raw
