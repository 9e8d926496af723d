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
    """The two halves read on two reader threads: a heading the first found and a write
    removed before the second read is skipped, not an error."""
    query = "sluggish starter"
    keyword, match = await index.read(lambda s: search_ranking.keyword_ranking(s, query, search_ranking.pool_size(10)))
    assert keyword
    vector = await index.query_vector(query)
    gone = max(h for h, _ in keyword) + 1_000_000  # no such heading
    with_gone = await index.read(lambda s: search_ranking.fused(s, ([(gone, 99.0), *keyword], match), 10, vector))
    without = await index.read(lambda s: search_ranking.fused(s, (keyword, match), 10, vector))
    assert with_gone[0] == "hybrid" and with_gone[1]
    assert [r.as_dict() for r in with_gone[1]] == [r.as_dict() for r in without[1]]
