"""What ``/search`` does while the query is being embedded: with Ollama on another machine
the embedding is most of a search's wait, so the keyword half is looked up meanwhile."""

from __future__ import annotations

import asyncio

from arcology_oracle.answers import search_ranking
from arcology_oracle.answers.search import search


async def test_the_words_are_looked_up_while_the_query_is_embedded(index, fake_ollama, monkeypatch):
    """The embedder hangs until the test lets it go; the keyword half must have run by
    then (before the change it ran only once the vector had come back), and the search
    still fuses both halves."""
    looked_up = asyncio.Event()
    loop = asyncio.get_running_loop()
    keyword_ranking = search_ranking.keyword_ranking

    def watched(*args, **kwargs):
        found = keyword_ranking(*args, **kwargs)
        loop.call_soon_threadsafe(looked_up.set)
        return found

    monkeypatch.setattr(search_ranking, "keyword_ranking", watched)
    fake_ollama.state.configure({"hang": True})
    task = asyncio.create_task(search(index, "reviving a sluggish sourdough starter", 10))
    try:
        await asyncio.wait_for(fake_ollama.state.hanging.wait(), 10)
        await asyncio.wait_for(looked_up.wait(), 10)  # times out without the overlap
        assert not task.done()
    finally:
        fake_ollama.state.release()
    mode, results = await task
    assert mode == "hybrid"
    assert ("sourdough-baking.org", "Reviving a sluggish starter") in [(r.file, r.heading) for r in results]


async def test_a_keyword_hit_deleted_before_the_vector_half_is_left_out(index):
    """The two halves read on two reader threads: a heading the first found that is
    gone by the second (same write generation here, as within one read) is skipped."""
    query = "sluggish starter"
    half = await index.read(lambda s: search_ranking.keyword_half(s, query, 10))
    assert half.hits
    vector = await index.query_vector(query)
    gone = max(h for h, _ in half.hits) + 1_000_000  # no such heading
    stale = search_ranking.KeywordHalf([(gone, 99.0), *half.hits], half.match, half.generation)
    with_gone = await index.read(lambda s: search_ranking.fused(s, stale, query, 10, vector))
    without = await index.read(lambda s: search_ranking.fused(s, half, query, 10, vector))
    assert with_gone[0] == "hybrid" and with_gone[1]
    assert [r.as_dict() for r in with_gone[1]] == [r.as_dict() for r in without[1]]


async def last_notes_first_heading(index) -> tuple[str, str]:
    """``(file, title)`` of the first heading of the note indexed last: the one whose
    heading ids were given out again when it was indexed anew."""
    return await index.read(lambda s: s.conn.execute(
        "SELECT f.path, h.title FROM headings h JOIN files f ON f.id = h.file WHERE h.level > 0"
        " AND f.id = (SELECT file FROM headings ORDER BY id DESC LIMIT 1) ORDER BY h.start_line LIMIT 1"
    ).fetchone())  # fmt: skip


def add_a_heading_at_the_top(note) -> None:
    text = note.read_text()
    first = text.index("\n*") + 1
    note.write_text(text[:first] + "* Zebra crossings at dusk\nStriped, unrelated.\n" + text[first:])


async def test_a_write_between_the_two_halves_has_the_words_looked_up_again(index, settings):
    """A note indexed again gets new ids for its headings: a keyword hit found before a
    heading was added at its top names none of them after (it named the added heading
    while ids were given out again). The second half sees the write and looks the words
    up again, so the answer is the one a search after the write gives."""
    path, title = await last_notes_first_heading(index)
    half = await index.read(lambda s: search_ranking.keyword_half(s, title, 10))
    assert half.hits
    add_a_heading_at_the_top(settings.roam_dir / path)
    await index.index_paths([path])
    vector = await index.query_vector(title)
    after_write = await index.read(lambda s: search_ranking.fused(s, half, title, 10, vector))
    fresh = await index.read(lambda s: search_ranking.search(s, title, 10, vector))
    assert [r.as_dict() for r in after_write[1]] == [r.as_dict() for r in fresh[1]]
    assert "Zebra crossings at dusk" not in [r.heading for r in after_write[1]]


async def test_a_write_while_the_results_are_read_shows_no_heading_the_words_did_not_find(index, settings, monkeypatch):
    """The same write lands later: after the second half saw no write (its check of the
    write generation passed) and before it reads its results' rows. The keyword hit's id
    is then a heading's of the note before the write; it named the heading added at the
    note's top (ids were given out again: store/writes.py), which the search showed first
    with the hit's score and none of the words looked up."""
    path, title = await last_notes_first_heading(index)
    vector = await index.query_vector(title)
    half = await index.read(lambda s: search_ranking.keyword_half(s, title, 10))
    assert half.hits
    add_a_heading_at_the_top(settings.roam_dir / path)
    loop = asyncio.get_running_loop()
    vector_hits = search_ranking.retrieval.vector_hits

    def written_meanwhile(*args, **kwargs):  # on the reader thread, between two statements
        monkeypatch.setattr(search_ranking.retrieval, "vector_hits", vector_hits)
        asyncio.run_coroutine_threadsafe(index.index_paths([path]), loop).result(30)
        return vector_hits(*args, **kwargs)

    monkeypatch.setattr(search_ranking.retrieval, "vector_hits", written_meanwhile)
    mode, results = await index.read(lambda s: search_ranking.fused(s, half, title, 10, vector))
    assert mode == "hybrid" and results
    assert "Zebra crossings at dusk" not in [r.heading for r in results]
    assert results[0].heading == title  # its vector hit names it by its new id
