"""A ``#+SETUPFILE:`` line under a private heading: Org reads its file tags for the whole
note (so the note depends on that file), but the line is private text: the index stored
the setup file's path with the note's row (``files.setup``). Its name is now kept in
memory only; the note is still read again when that setup file changes, by the running
daemon and after a restart. The real LiveIndex over real files and a real database."""

from __future__ import annotations

from arcology_oracle.index import live
from arcology_oracle.index.live import LiveIndex
from tests.index.test_private_files import bytes_holding, rows_holding
from tests.runners import wait_until

SETUP = "therapistjanedoe-setup.org"
NOTE = (
    "#+title: Health\n* Appointments\nsetupnamedpublicword on Monday\n"
    f"* Therapy :private:\n#+SETUPFILE: ../setups/{SETUP}\nsetupnamedsecretword\n"
)


async def test_a_setup_file_named_under_a_private_heading_is_not_stored_and_still_counts(
    tmp_path, make_settings, monkeypatch
):
    roam = tmp_path / "notes"
    roam.mkdir()
    (roam / "health.org").write_text(NOTE)
    setup = tmp_path / "setups" / SETUP  # (one in the notes directory would be a note of its own)
    setup.parent.mkdir()
    setup.write_text("#+title: setup\n")
    monkeypatch.setattr(live, "SETUP_CHECK_SECONDS", 0.05)
    settings = make_settings(roam_dir=roam)

    def stored(word: str) -> bool:
        return bool(rows_holding(settings.db_path, (word,)) or bytes_holding(settings.db_path, (word,)))

    index = LiveIndex(settings)
    await index.start()
    try:
        await index.ready.wait()
        assert stored("setupnamedpublicword") and not stored("setupnamedsecretword")
        assert not stored("therapistjanedoe")  # the name under the private heading
        # ... is in memory: the note is not read again at each look at the setup files
        assert [rel for rel, seen in index.index.indexer.private.setup_records if SETUP in seen] == ["health.org"]
        setup.write_text("#+title: setup\n#+filetags: :private:\n")  # the note unchanged
        await wait_until(lambda: not stored("setupnamedpublicword"))
        setup.write_text("#+title: setup\n")
        await wait_until(lambda: stored("setupnamedpublicword"))
        assert not stored("therapistjanedoe")
    finally:
        await index.stop()

    setup.write_text("#+filetags: :private:\n")  # while the daemon is down
    index = LiveIndex(settings)
    await index.start()
    try:
        await index.ready.wait()
        assert not stored("setupnamedpublicword")  # read again at the start: private now
    finally:
        await index.stop()
