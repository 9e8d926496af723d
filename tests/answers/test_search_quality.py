"""A small deterministic quality check of /search's fusion (the fake embedder's vectors).

The measured quality runs live in bench/quality.py; this guards the rule of
answers/fusion.py against regressions: the fused ranking must not lose to either of its
halves on known items, and its two properties hold on made-up rankings.
"""

from __future__ import annotations

from arcology_oracle.answers import fusion, retrieval
from arcology_oracle.answers.search import search

# Known items in the example vault: what someone might type, and the heading that holds it.
QUESTIONS = {
    "sqlite covering index": ("sqlite-indexing.org", "Covering indexes"),
    "feeding the sourdough starter levain": ("sourdough-baking.org", "Starter maintenance"),
    "tomato late blight brown leaves": ("gardening-tomatoes.org", "Blight and diseases"),
    "door affordance signifier": ("design-of-everyday-things.org", "Affordances and signifiers"),
    "lifetime elision rules": ("rust-borrow-checker.org", "Lifetime elision"),
    "explain query plan": ("sqlite-indexing.org", "EXPLAIN QUERY PLAN"),
    "autolyse flour water rest": ("bread-hydration.org", "Autolyse"),
    "grinder settings": ("coffee-brewing.org", "Grinder settings"),
    "drop and raii": ("rust-ownership.org", "Drop and RAII"),
    "stretch and folds": ("bread-hydration.org", "Stretch and folds"),
    "how do I revive a sluggish starter": ("sourdough-baking.org", "Reviving a sluggish starter"),
    "which tomato varieties do I grow": ("gardening-tomatoes.org", "Varieties I grow"),
    "caramel top of the creme brulee": ("creme-brulee.org", "Caramel top"),
    "漢字": ("日本語ノート.org", "漢字"),
}


def reciprocal_rank(results, expected) -> float:
    keys = [(r.file, r.heading) for r in results]
    return 1.0 / (keys.index(expected) + 1) if expected in keys else 0.0


async def test_fused_search_does_not_lose_to_either_half(index):
    """Mean reciprocal rank over the questions: hybrid >= keyword only and >= vectors only."""
    fused, keyword, vector = [], [], []
    for query, expected in QUESTIONS.items():
        mode, results = await search(index, query, 10)
        assert mode == "hybrid"
        fused.append(reciprocal_rank(results, expected))
        qv = await index.query_vector(query)
        keyword.append(reciprocal_rank(await index.read(lambda s: retrieval.search(s, query, 10, None)[1]), expected))
        hits = await index.read(lambda s: retrieval.to_results(s, retrieval.vector_hits(s, qv, 50), 10))
        vector.append(reciprocal_rank(hits, expected))
    mrr = {name: sum(v) / len(v) for name, v in (("fused", fused), ("keyword", keyword), ("vector", vector))}
    assert mrr["fused"] >= max(mrr["keyword"], mrr["vector"]), mrr
    assert mrr["fused"] >= 0.85, mrr


def test_headings_holding_every_word_come_first_in_keyword_order():
    keyword = [(1, 9.0), (2, 8.0), (3, 2.0), (4, 1.0)]  # 1 and 2 hold every query word
    vector = [(4, 0.9), (3, 0.8), (2, 0.5), (1, 0.4), (5, 0.3)]
    ranked = [h for h, _ in fusion.fuse(keyword, 2, vector)]
    assert ranked[:2] == [1, 2]
    assert set(ranked) == {1, 2, 3, 4, 5}


def test_a_confident_ranking_outweighs_a_flat_one():
    """Keyword scores with a clear winner beat a vector ranking that barely prefers
    another heading; plain reciprocal rank fusion picks the other one."""
    keyword = [(1, 20.0), (2, 3.0), (3, 2.9), (4, 2.8)]
    vector = [(2, 0.52), (3, 0.51), (1, 0.50), (4, 0.49)]
    assert fusion.fuse(keyword, 0, vector)[0][0] == 1
    assert retrieval.reciprocal_rank_fusion([h for h, _ in keyword], [h for h, _ in vector])[0][0] == 2
    # ... and the other way round: a flat keyword ranking yields to a confident vector one.
    keyword = [(2, 3.0), (3, 2.9), (1, 2.8), (4, 2.7)]
    vector = [(1, 0.9), (2, 0.3), (3, 0.29), (4, 0.28)]
    assert fusion.fuse(keyword, 0, vector)[0][0] == 1
