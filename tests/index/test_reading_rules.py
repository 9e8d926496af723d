"""A change to what decides how files are read (the private tags, the chunking) reads
every file again, even those whose size and modification time did not change: a tag
newly made private leaves the index, from every byte of the database."""

from __future__ import annotations

from arcology_oracle.answers.search import search
from arcology_oracle.index.service import OracleIndex
from tests.corpus_tools import db_bytes

NOTE = "#+title: Health\n* Doctor visit :health:\nrulesgnuflamingo result was negative.\n* Walk\nrulesvisiblestoat in the park\n"


async def reconciled(settings):
    index = OracleIndex(settings)
    await index.start()
    try:
        report = await index.reconcile()
        found = {word: (await search(index, word, 5))[1] for word in ("rulesgnuflamingo", "rulesvisiblestoat")}
    finally:
        await index.close()
    return report, found


async def test_a_tag_made_private_leaves_the_index_and_is_read_once(roam_dir, make_settings):
    (roam_dir / "health.org").write_text(NOTE)
    report, found = await reconciled(make_settings())
    assert found["rulesgnuflamingo"] and found["rulesvisiblestoat"]

    settings = make_settings(private_tags=["private", "Health"])
    report, found = await reconciled(settings)
    assert report.indexed == report.seen and report.failed == {}  # every file, unchanged on disk
    assert found["rulesgnuflamingo"] == [] and found["rulesvisiblestoat"]
    assert b"rulesgnuflamingo" not in db_bytes(settings.db_path).lower()

    report, _ = await reconciled(settings)  # the same rules: nothing read again
    assert report.indexed == 0 and report.unchanged == report.seen

    report, found = await reconciled(make_settings(private_tags=["private"], chunk_chars=900))
    assert report.indexed == report.seen and found["rulesgnuflamingo"]  # and back
