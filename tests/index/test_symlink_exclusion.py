"""A symlink never walks around ``exclude_globs`` (issue 14, item 4): a file is left out
when either the path it was reached by or its real path inside the root is excluded, and
a file reached by several paths is indexed once. The full reconcile, the watcher's path
(``index_paths``), the live watcher and ``doctor`` all agree.

Real files and links in ``tmp_path``, the real indexer and SQLite (its bytes and WAL are
searched for the excluded words), the real watcher.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from arcology_oracle.index.doctor import diagnose
from arcology_oracle.notes.files import iter_org_files
from arcology_oracle.answers.search import search
from arcology_oracle.index.service import OracleIndex
from tests.corpus_tools import db_bytes
from tests.runners import wait_until

pytestmark = pytest.mark.timeout(120)

GLOBS = ("attic/**", "drafts")
EXCLUDED_WORDS = ("atticoldwombat", "draftsecretquokka", "atticnestednumbat")


def note(word: str) -> str:
    return f"#+title: {word}\n* Heading about {word}\nBody text with {word}.\n"


@pytest.fixture
def vault(tmp_path):
    roam = tmp_path / "vault"
    for rel, word in {
        "attic/old.org": "atticoldwombat",
        "attic/deeper/nested.org": "atticnestednumbat",
        "drafts/d.org": "draftsecretquokka",
        "notes/real.org": "notesrealbilby",
    }.items():
        (roam / rel).parent.mkdir(parents=True, exist_ok=True)
        (roam / rel).write_text(note(word))
    links = {
        "notes/old-link.org": "../attic/old.org",  # the case
        "notes/attic-dir": "../attic",  # a directory link into an excluded directory
        "d-link.org": "drafts/d.org",  # a glob without "/" on the real path
        "deep-link.org": "attic/deeper/nested.org",
        "notes/alias.org": "real.org",  # a second path to a kept file
        "linkdir": "notes",  # a third
    }
    for rel, target in links.items():
        os.symlink(target, roam / rel)
    return roam


LINK_PATHS = ["notes/old-link.org", "notes/attic-dir/old.org", "notes/attic-dir/deeper/nested.org", "d-link.org",
              "deep-link.org", "notes/alias.org", "linkdir/real.org", "linkdir/old-link.org"]  # fmt: skip


async def indexed_files(index: OracleIndex) -> set[str]:
    return set(await index.read(lambda s: s.file_states()))


def test_the_walker_checks_the_real_path_too(vault):
    assert [rel for rel, _ in iter_org_files(vault, GLOBS)] == ["notes/real.org"]
    # Without globs every real file is found once, under its real path.
    assert [rel for rel, _ in iter_org_files(vault)] == [
        "attic/deeper/nested.org", "attic/old.org", "drafts/d.org", "notes/real.org"]  # fmt: skip


async def test_reconcile_watcher_path_and_doctor_agree(vault, make_settings):
    settings = make_settings(roam_dir=vault, exclude_globs=list(GLOBS))
    index = OracleIndex(settings)
    await index.start()
    try:
        report = await asyncio.wait_for(index.reconcile(), 30)
        assert report.failed == {}
        assert await indexed_files(index) == {"notes/real.org"}
        report = await asyncio.wait_for(index.index_paths(LINK_PATHS), 30)
        assert report.failed == {}
        assert await indexed_files(index) == {"notes/real.org"}
        for word in EXCLUDED_WORDS:
            assert (await search(index, word, 5))[1] == [], word
        _, results = await search(index, "notesrealbilby", 5)
        assert {r.file for r in results} == {"notes/real.org"}
        d = await index.read(lambda store: diagnose(settings, store))
        assert (d.missing_files, d.new_files, d.changed_files) == ([], [], [])
    finally:
        await index.close()
    raw = db_bytes(settings.db_path)
    for word in EXCLUDED_WORDS:
        assert word.encode() not in raw
    assert b"notesrealbilby" in raw


async def test_live_watcher_keeps_links_into_excluded_places_out(vault, make_settings, make_client, fake_ollama):
    settings = make_settings(roam_dir=vault, exclude_globs=list(GLOBS), ollama_host=fake_ollama.url)
    client = await make_client(settings, watch=True)
    # The excluded target is edited, and new links to excluded files appear.
    (vault / "attic" / "old.org").write_text(note("atticoldwombat atticeditedemu"))
    os.symlink("../drafts/d.org", vault / "notes" / "new-link.org")
    os.symlink("attic", vault / "attic-link")
    (vault / "notes" / "sentinel.org").write_text(note("sentinelgalah"))

    async def indexed(word: str, file: str) -> bool:
        resp = await client.get("/search", params={"q": word})
        return any(r["file"] == file for r in (await resp.json())["results"])

    await wait_until(lambda: indexed("sentinelgalah", "notes/sentinel.org"), timeout=20)
    assert await indexed_files(client.index) == {"notes/real.org", "notes/sentinel.org"}
    for word in (*EXCLUDED_WORDS, "atticeditedemu"):
        resp = await client.get("/search", params={"q": word})
        assert (await resp.json())["results"] == [], word
    # A full reconcile (what doctor and a restart compare against) agrees with the watcher.
    await client.index.reconcile()
    assert await indexed_files(client.index) == {"notes/real.org", "notes/sentinel.org"}


async def test_a_file_indexed_under_a_link_follows_edits_of_its_real_file(tmp_path, make_settings, make_client, fake_ollama):
    """A file whose real path is never walked (a hidden directory, a name without .org)
    is indexed under the link's path; the watcher re-indexes it when the real file is
    edited, so doctor finds no drift."""
    roam = tmp_path / "vault"
    (roam / ".store").mkdir(parents=True)
    (roam / ".store" / "kept.org").write_text(note("storedkeptlyrebird"))
    (roam / "plain.txt").write_text(note("plaintextdingo"))
    os.symlink(".store", roam / "linked-store")
    os.symlink("plain.txt", roam / "plain-link.org")
    settings = make_settings(roam_dir=roam, ollama_host=fake_ollama.url)
    client = await make_client(settings, watch=True)
    assert await indexed_files(client.index) == {"linked-store/kept.org", "plain-link.org"}

    async def indexed(word: str, file: str) -> bool:
        resp = await client.get("/search", params={"q": word})
        return any(r["file"] == file for r in (await resp.json())["results"])

    (roam / ".store" / "kept.org").write_text(note("storededitedpossum"))
    (roam / "plain.txt").write_text(note("plaineditedwombat"))
    await wait_until(lambda: indexed("storededitedpossum", "linked-store/kept.org"), timeout=20)
    await wait_until(lambda: indexed("plaineditedwombat", "plain-link.org"), timeout=20)
    d = await client.index.read(lambda store: diagnose(settings, store))
    assert (d.missing_files, d.new_files, d.changed_files) == ([], [], [])
