"""A change to what decides how files are read (the private tags, the chunking) reads
files again, even those whose size and modification time did not change: a tag newly
made private leaves the index, from every byte of the database. A tag made private (and
nothing else changed) reads only the files holding it; any other change reads all."""

from __future__ import annotations

from arcology_oracle.answers.search import search
from arcology_oracle.index.service import OracleIndex
from tests.corpus_tools import db_bytes, unreadable_to_the_indexer

NOTE = "#+title: Health\n* Doctor visit :health:\nrulesgnuflamingo result was negative.\n* Walk\nrulesvisiblestoat in the park\n"
# The tag only by inheritance, in another case, on a heading below the tagged one.
INHERITED = "#+title: Clinic\n#+filetags: :HEALTH:\n* Waiting room\n** Notes\nrulesinheritedheron\n"
# A note none of whose headings is stored (a PGP block before its only heading keeps its
# preamble out, its heading is private), whose file tag is made private: its title goes.
HEADLESS = (":PROPERTIES:\n:ID: onco-1\n:END:\n#+title: Oncology rulessecrettitle\n#+filetags: :health:\n"
            "-----BEGIN PGP MESSAGE-----\nxyz\n-----END PGP MESSAGE-----\n* Visit :private:\nnotes\n")


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
    (roam_dir / "clinic.org").write_text(INHERITED)
    (roam_dir / "oncology.org").write_text(HEADLESS)
    report, found = await reconciled(make_settings())
    assert found["rulesgnuflamingo"] and found["rulesvisiblestoat"]

    settings = make_settings(private_tags=["private", "Health"])
    headless = [path for path, ids in heading_ids(settings.db_path, every_file=True).items() if not ids]
    assert "oncology.org" in headless
    report, found = await reconciled(settings)
    # the two files holding the tag, and those with no heading stored; unchanged on disk.
    # clinic.org and oncology.org, private whole now, leave the index
    assert report.indexed + report.deleted == 2 + len(headless) < report.seen and report.deleted == 2
    assert report.private == 3 and report.failed == {}  # those two and private-diary.org
    assert found["rulesgnuflamingo"] == [] and found["rulesvisiblestoat"]
    assert b"rulesgnuflamingo" not in db_bytes(settings.db_path).lower()
    assert b"rulesinheritedheron" not in db_bytes(settings.db_path).lower()
    assert b"rulessecrettitle" not in db_bytes(settings.db_path).lower()  # the title of a note kept out whole

    report, _ = await reconciled(settings)  # the same rules: nothing read again but the private files
    assert report.indexed == 0 and report.unchanged == report.seen - 3 and report.private == 3

    report, found = await reconciled(make_settings(private_tags=["private"]))
    assert report.indexed == report.seen - 1 and found["rulesgnuflamingo"]  # a tag no longer private: every file, and back

    report, _ = await reconciled(make_settings(private_tags=["private"], chunk_chars=900))
    assert report.indexed == report.seen - 1 and report.private == 1  # the chunking: every file but the private diary


def test_only_tags_added_to_the_private_ones_narrow_the_reread():
    from arcology_oracle.index.parsing import ParseOptions, newly_private

    def rules(tags, chunk=1200):
        return ParseOptions(frozenset(tags), chunk, 200).reading_rules()

    assert newly_private(rules(["private"]), rules(["private", "health", "Diary"])) == {"health", "Diary"}
    assert newly_private(rules(["private", "health"]), rules(["private"])) is None  # no longer private: all
    assert newly_private(rules(["private"]), rules(["Private"])) is None  # not a superset as written: all
    assert newly_private(rules(["private"]), rules(["private", "health"], chunk=900)) is None
    assert newly_private(rules(["private"]), rules(["private"])) is None
    assert newly_private(None, rules(["private"])) is None  # an index without rules
    assert newly_private("not json", rules(["private"])) is None
    for edited in ('{"private_tags": 5}', '{"private_tags": null}', '{"private_tags": [["x"]]}', "[]", "{}"):
        assert newly_private(edited, rules(["private"])) is None  # rules edited by hand: every file


def heading_ids(db_path, *, every_file: bool = False) -> dict[str, list[int]]:
    """Each file's heading ids (with ``every_file``, files with none too)."""
    from arcology_oracle.store import Store

    store = Store.open(db_path)
    try:
        rows = store.conn.execute("SELECT f.path, h.id FROM files f LEFT JOIN headings h ON f.id = h.file ORDER BY h.id")
        out: dict[str, list[int]] = {}
        for path, heading_id in rows:
            if heading_id is not None or every_file:
                out.setdefault(path, [])
            if heading_id is not None:
                out[path].append(heading_id)
        assert store.check_integrity().fts == "ok"
        return out
    finally:
        store.close()


async def test_a_file_read_again_into_the_same_rows_keeps_them(roam_dir, make_settings):
    """A tag no longer private reads every file again; those it does not touch come out
    the same and keep their rows (the same heading ids), the one it does is rewritten."""
    (roam_dir / "health.org").write_text(NOTE)
    settings = make_settings(private_tags=["private", "Health"])
    await reconciled(settings)
    before = heading_ids(settings.db_path)

    report, found = await reconciled(make_settings())
    assert report.indexed == report.seen - 1 and found["rulesgnuflamingo"] and found["rulesvisiblestoat"]  # all but the diary
    after = heading_ids(settings.db_path)
    assert after.keys() == before.keys() and len(after) > 10
    assert after["health.org"] != before["health.org"] and len(after["health.org"]) == len(before["health.org"]) + 1
    assert all(after[path] == before[path] for path in after if path != "health.org")


async def test_a_file_that_cannot_be_read_after_a_tag_was_made_private_leaves_the_index(roam_dir, make_settings, monkeypatch):
    """Nothing can tell whether it is private now: out until it can be read."""
    (roam_dir / "health.org").write_text(NOTE)
    await reconciled(make_settings())
    unreadable_to_the_indexer(monkeypatch, "health.org")
    settings = make_settings(private_tags=["private", "Health"])
    report, found = await reconciled(settings)
    assert report.deleted == 1 and found["rulesgnuflamingo"] == [] and found["rulesvisiblestoat"] == []
    assert b"rulesgnuflamingo" not in db_bytes(settings.db_path).lower()
