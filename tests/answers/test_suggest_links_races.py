"""/suggest-links for a heading reads the heading's ids on one reader and, in a later read,
their vectors for the query (answers/links.py): the note may be indexed again in between."""

from __future__ import annotations

import asyncio

from arcology_oracle.answers import links, retrieval


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
