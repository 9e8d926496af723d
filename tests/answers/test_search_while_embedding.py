"""/search reads its keyword half while the query is being embedded, and answers as if
it had read everything at once."""

from __future__ import annotations

import asyncio
import threading

from arcology_oracle.answers import relevance, search_ranking
from arcology_oracle.answers.search import search


async def test_the_keyword_half_is_read_while_the_embedder_works(index, fake_ollama, monkeypatch):
    query = "levain feeding schedule"
    read = threading.Event()
    keyword_ranking = search_ranking.keyword_ranking

    def recorded(store, text, k):
        read.set()
        return keyword_ranking(store, text, k)

    monkeypatch.setattr(search_ranking, "keyword_ranking", recorded)
    fake_ollama.state.hang = True
    fake_ollama.state.fault_paths = {"/api/embed"}
    asked = asyncio.ensure_future(search(index, query, 10))
    await asyncio.wait_for(fake_ollama.state.hanging.wait(), 10)
    # The embedder has the query and holds it: the keyword half is read meanwhile.
    assert await asyncio.to_thread(read.wait, 10), "the keyword half waited for the embedder"
    fake_ollama.state.hang = False
    fake_ollama.state.release()
    mode, results = await asyncio.wait_for(asked, 10)
    assert mode == "hybrid" and results
    # The same answer as both halves read in one go.
    vector = await index.query_vector(query)  # cached: the fake is not asked again
    floor = index.settings.min_search_similarity

    def one_go(store):
        one_mode, ranked = search_ranking.search(store, query, 10, vector, min_similarity=floor)
        return one_mode, relevance.rescore(store, ranked, relevance.Signals(vector))

    assert await index.read(one_go) == (mode, results)
