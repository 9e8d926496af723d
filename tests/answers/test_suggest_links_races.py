"""/suggest-links for a heading reads the heading's ids on one reader and, in a later read,
their vectors for the query (answers/links.py): the note may be indexed again in between."""

from __future__ import annotations

import asyncio

import pytest

from arcology_oracle.answers import links, retrieval
from arcology_oracle.errors import Conflict


async def test_a_note_indexed_again_between_the_two_reads_lends_no_other_headings_vector(index, settings, monkeypatch):
    """A heading is added at the top of the note the asked heading is in (the note with
    the highest ids) and embedded between the two reads. The ids read first then named
    the added heading (ids were given out again: store/writes.py), and the suggestions
    were ranked by its vector, a note about zebra crossings; now they name none, and the
    heading's words rank the suggestions."""
    path, line, title = await index.read(lambda s: s.conn.execute(
        "SELECT f.path, h.start_line, h.title FROM headings h JOIN files f ON f.id = h.file"
        " WHERE h.level > 0 AND h.node_id IS NOT NULL"
        " AND f.id = (SELECT file FROM headings ORDER BY id DESC LIMIT 1) ORDER BY h.start_line LIMIT 1"
    ).fetchone())  # fmt: skip
    note = settings.roam_dir / path
    text = note.read_text()
    first = text.index("\n*") + 1
    note.write_text(text[:first] + "* Zebra crossings at dusk\nStriped zebra crossings on roads at dusk.\n" + text[first:])
    loop = asyncio.get_running_loop()
    heading_query, stored_vector = links._heading_query, retrieval.stored_vector
    asked: list[list[int]] = []
    lent: list[str] = []

    def then_written(*args, **kwargs):  # on the reader thread, after the first read
        found = heading_query(*args, **kwargs)
        asked.append(found["heading_ids"])
        for step in (index.index_paths([path]), index.embed_pending()):
            asyncio.run_coroutine_threadsafe(step, loop).result(30)
        return found

    def watched(store, heading_ids):
        if heading_ids == asked[0]:
            lent.extend(r[0] for r in store.conn.execute(
                "SELECT title FROM headings WHERE id IN (SELECT value FROM json_each(?))", (str(list(heading_ids)),)
            ))  # fmt: skip
        return stored_vector(store, heading_ids)

    monkeypatch.setattr(links, "_heading_query", then_written)
    monkeypatch.setattr(retrieval, "stored_vector", watched)
    found = await links.suggest_links(index, path=path, line=line, k=5)
    assert asked and found["suggestions"]
    assert set(lent) <= {title}  # was {'Zebra crossings at dusk'}


SHAPING = "* Shaping and scoring"


def then_the_file_changes(monkeypatch, note, change):
    """``change`` (old text -> new) written to ``note`` right after the first read found
    the heading's line in the index: the user saves between the two reads."""
    heading_query = links._heading_query

    def then_saved(*args, **kwargs):
        found = heading_query(*args, **kwargs)
        note.write_text(change(note.read_text()))
        return found

    monkeypatch.setattr(links, "_heading_query", then_saved)


async def test_a_line_typed_above_the_heading_between_the_two_reads_moves_no_suggestion(index, settings, monkeypatch):
    """The heading's line was read from the index, then the note was read from disk at
    that line: with a line typed above the heading meanwhile, that line was the heading
    above's, and the suggestions were placed in its paragraphs ('Bulk fermentation').
    The heading is found again in the file as it is now (its ID, else its title and
    outline path), and the lines given are the file's now."""
    note = settings.roam_dir / "sourdough-baking.org"
    line = note.read_text().splitlines().index(SHAPING) + 1
    then_the_file_changes(monkeypatch, note, lambda text: text.replace(SHAPING, "A line typed above.\n" + SHAPING))
    found = await links.suggest_links(index, path="sourdough-baking.org", line=line, k=5)
    assert found["suggestions"]
    for s in found["suggestions"]:
        assert (s["heading"]["heading"], s["heading"]["line"]) == ("Shaping and scoring", line + 1), s["heading"]
        assert line + 2 <= s["paragraph"]["start_line"] <= s["paragraph"]["end_line"] <= line + 4, s["paragraph"]


async def test_a_heading_renamed_between_the_two_reads_is_a_409_that_changes_nothing(make_client, settings, monkeypatch):
    """The heading the index had at the line is no longer in the file (renamed, at the
    same line): no heading can be told to be the one asked about, and the answer says so
    (a 409: ask again once it is indexed)."""
    client = await make_client(settings)
    note = settings.roam_dir / "sourdough-baking.org"
    line = note.read_text().splitlines().index(SHAPING) + 1
    then_the_file_changes(monkeypatch, note, lambda text: text.replace(SHAPING, "* Shaping, scoring and proofing"))
    rejections = await client.index.read(lambda s: s.link_rejections(None, None))
    before = {p: p.read_bytes() for p in settings.roam_dir.rglob("*") if p.is_file()}
    resp = await client.get("/suggest-links", params={"file": "sourdough-baking.org", "line": str(line)})
    body = await resp.json()
    assert resp.status == 409, body
    assert f"sourdough-baking.org:{line}" in body["error"] and "ask again" in body["error"], body
    before[note] = before[note].replace(SHAPING.encode(), b"* Shaping, scoring and proofing")  # the user's save
    assert {p: p.read_bytes() for p in settings.roam_dir.rglob("*") if p.is_file()} == before
    assert await client.index.read(lambda s: s.link_rejections(None, None)) == rejections


async def test_of_two_headings_alike_the_one_asked_about_is_found_by_its_text(index, settings, monkeypatch):
    """Two headings of one title and outline path: the one asked about is the one whose
    text is as indexed, wherever a line typed above moved it."""
    note = settings.roam_dir / "two-notes.org"
    note.write_text(":PROPERTIES:\n:ID:       2222aaaa-0000-4000-8000-000000000001\n:END:\n#+title: Two notes\n\n"
                    "* Notes\nThe levain rose in five hours.\n\n* Notes\nThe dough was shaped into a batard.\n")  # fmt: skip
    await index.index_paths(["two-notes.org"])
    await index.embed_pending()
    then_the_file_changes(monkeypatch, note, lambda text: text.replace("* Notes\nThe dough", "Typed.\n* Notes\nThe dough"))
    found = await links.suggest_links(index, path="two-notes.org", line=9, k=5)
    assert found["suggestions"]
    for s in found["suggestions"]:
        assert (s["heading"]["line"], s["paragraph"]["text"]) == (10, "The dough was shaped into a batard."), s


TWO_ALIKE = (":PROPERTIES:\n:ID:       2222aaaa-0000-4000-8000-000000000002\n:END:\n#+title: Two alike\n\n"
             "* Notes\nThe levain rose in five hours.\n\n* Notes\nThe dough was shaped into a batard.\n")  # fmt: skip


@pytest.mark.parametrize("change", [
    lambda text: text.replace("* Notes\nThe levain", "* Notes on the levain\nThe levain"),
    lambda text: text.replace("* Notes\nThe levain rose in five hours.\n\n", ""),
], ids=["renamed", "deleted"])  # fmt: skip
async def test_of_two_headings_alike_one_renamed_or_deleted_between_the_two_reads_lends_the_other_nothing(
    index, settings, monkeypatch, change
):
    """Two headings of one title and outline path; the one asked about is renamed (or
    deleted) between the two reads. The other, the only one left with that title, is not
    the one asked about: its text is not the one indexed for the heading at that line,
    and the index held two alike. A 409, never suggestions placed in the other's
    paragraphs (were: 'The dough was shaped into a batard.')."""
    note = settings.roam_dir / "two-alike.org"
    note.write_text(TWO_ALIKE)
    await index.index_paths(["two-alike.org"])
    await index.embed_pending()
    then_the_file_changes(monkeypatch, note, change)
    with pytest.raises(Conflict, match="two-alike.org:6"):
        await links.suggest_links(index, path="two-alike.org", line=6, k=5)
