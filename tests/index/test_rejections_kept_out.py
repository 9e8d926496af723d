"""A rejected link suggestion (``link_rejections``) naming a node the privacy rule now
keeps out is forgotten: its file made private or excluded, its own heading made private.
A node merely gone (its note deleted) keeps its rejections, which hold again when it
comes back, as does one left out for another reason. An index made before forgets
those it kept once upgraded (m033, m034), as the next reconcile reads the notes again. Real org files and SQLite; the database's every
byte is searched."""

from __future__ import annotations

import sqlite3
from contextlib import asynccontextmanager

from arcology_oracle.index.service import OracleIndex
from tests.corpus_tools import db_bytes
from tests.http.test_suggest_links import A, A2, B, C, D, E, F, kelp_notes


async def rejections(index) -> list[tuple[str, str]]:
    return sorted((r["from"], r["to"]) for r in await index.read(lambda s: s.link_rejections()))


async def reject(index, *pairs) -> None:
    for src, dst in pairs:
        await index.write(lambda s, src=src, dst=dst: s.reject_link(src, dst))


@asynccontextmanager
async def started(settings):
    """An index of ``settings`` started and reconciled, closed at the end."""
    index = OracleIndex(settings)
    await index.start()
    try:
        await index.reconcile()
        yield index
    finally:
        await index.close()


def make_private(path, heading: str | None = None) -> None:
    """Tag the file ``path`` private, or only its ``heading`` (a ``* `` line)."""
    text = path.read_text()
    if heading is None:
        path.write_text(text.replace("#+title:", "#+filetags: :private:\n#+title:", 1))
    else:
        path.write_text(text.replace(f"* {heading}\n", f"* {heading} :private:\n", 1))


async def test_a_rejection_goes_when_its_node_is_made_private_or_excluded(tmp_path, roam_dir, make_settings):
    kelp_notes(roam_dir)
    settings = make_settings()
    async with started(settings) as index:
        await reject(index, (A, D), (F, A2), (C, E), (B, F))
        make_private(roam_dir / "kelp-d.org")  # a file node made private by its file tags
        make_private(roam_dir / "kelp-a.org", heading="Nested kelp log")  # a heading node made private
        await index.index_paths(["kelp-d.org", "kelp-a.org"])  # as the watcher does
        assert await rejections(index) == [(B, F), (C, E)]
        (roam_dir / "kelp-f.org").rename(tmp_path / "kelp-f.org")  # deleted: kept, it may come back
        await index.index_paths(["kelp-f.org"])
        assert await rejections(index) == [(B, F), (C, E)]
        (tmp_path / "kelp-f.org").rename(roam_dir / "kelp-f.org")
        await index.reconcile()
    raw = db_bytes(settings.db_path)
    assert D.encode() not in raw and A2.encode() not in raw

    async with started(make_settings(exclude_globs=["kelp-e.org"])) as index:  # a glob now excludes E's file
        assert await rejections(index) == [(B, F)]
    assert E.encode() not in db_bytes(settings.db_path)


async def test_an_index_made_before_forgets_the_rejections_of_nodes_made_private_on_upgrade(roam_dir, make_settings):
    """Before, a heading node made private kept its rejections, and its note, unchanged
    since, is not read again: m033 and m034 have every note parsed again when a
    rejection names a node the index does not hold. One of a note deleted stays."""
    kelp_notes(roam_dir)
    settings = make_settings()
    index = OracleIndex(settings)
    await index.start()
    await index.reconcile()
    await index.close()
    make_private(roam_dir / "kelp-a.org", heading="Nested kelp log")
    index = OracleIndex(settings)
    await index.start()
    await index.reconcile()
    await index.close()
    gone = "2222bbbb-0000-4000-8000-000000000009"  # a deleted note's: written nowhere
    with sqlite3.connect(settings.db_path) as conn:  # as the index kept them before m033
        conn.executemany(
            "INSERT INTO link_rejections (src_node, dst_node, created_at) VALUES (?, ?, 0)", [(F, A2), (C, gone), (A, D)]
        )
        conn.execute("DELETE FROM _migrations WHERE name LIKE 'm03__re%_for_rejections_of_private_nodes'")
    conn.close()
    assert A2.encode() in db_bytes(settings.db_path)

    index = OracleIndex(settings)
    await index.start()  # migrates
    try:
        report = await index.reconcile()
        assert report.indexed + report.private == report.seen and report.failed == {}  # every note parsed again
        assert await rejections(index) == [(A, D), (C, gone)]
    finally:
        await index.close()
    assert A2.encode() not in db_bytes(settings.db_path)


async def test_a_node_left_out_for_no_privacy_reason_keeps_its_rejections(roam_dir, make_settings):
    """A heading that is no node for Org (a line typed between it and its drawer, as while
    editing) is not private: its ID, still written in the note, keeps its rejections, which
    hold again once the drawer is back in place. Before, the :ID: line alone decided."""
    kelp_notes(roam_dir)
    settings = make_settings()
    async with started(settings) as index:
        await reject(index, (F, A2), (A2, B), (C, E))
        note = roam_dir / "kelp-a.org"
        text = note.read_text()
        note.write_text(text.replace("* Nested kelp log\n", "* Nested kelp log\ntyped here for a moment\n", 1))
        await index.index_paths(["kelp-a.org"])
        held = await index.read(lambda s: [r[0] for r in s.conn.execute("SELECT own_id FROM headings WHERE own_id = ?", (A2,))])
        assert held == []  # no node now: the drawer is text
        assert await rejections(index) == sorted([(F, A2), (A2, B), (C, E)])
        note.write_text(text)
        await index.reconcile()
        assert await rejections(index) == sorted([(F, A2), (A2, B), (C, E)])


async def test_a_note_moved_where_a_glob_excludes_it_forgets_its_rejections(roam_dir, make_settings):
    """The watcher gives both paths of a move: the old one is gone (which alone keeps the
    rejections: a deleted note may come back) and the new one excluded. Its :ID: lines
    are read there. A note moved to a hidden folder (a trash) is deleted and keeps them."""
    kelp_notes(roam_dir)
    settings = make_settings(exclude_globs=["vault/*"])
    async with started(settings) as index:
        await reject(index, (A, D), (B, F), (C, E))
        (roam_dir / "vault").mkdir()
        (roam_dir / "kelp-d.org").rename(roam_dir / "vault" / "kelp-d.org")
        await index.index_paths(["kelp-d.org", "vault/kelp-d.org"])  # as the watcher does
        assert await rejections(index) == sorted([(B, F), (C, E)])
        (roam_dir / ".trash").mkdir()
        (roam_dir / "kelp-f.org").rename(roam_dir / ".trash" / "kelp-f.org")
        await index.index_paths(["kelp-f.org", ".trash/kelp-f.org"])
        assert await rejections(index) == sorted([(B, F), (C, E)])
    assert D.encode() not in db_bytes(settings.db_path)
