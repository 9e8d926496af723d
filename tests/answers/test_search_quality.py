"""A small deterministic quality check of /search's fusion (the fake embedder's vectors).

The measured quality runs live in bench/quality.py; this guards what they found against
regressions: the fused ranking must not lose to either of its halves on known items, the
rule of answers/fusion.py holds on made-up rankings, and the keyword half ranks by the
words as written, stop words and all, without letting one English word lead a Japanese
query (notes written for the tests).
"""

from __future__ import annotations

import pytest

from arcology_oracle.answers import fusion, retrieval, search_ranking
from arcology_oracle.answers.search import search
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.notes import cjk

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
        keyword.append(reciprocal_rank(await index.read(lambda s: search_ranking.search(s, query, 10, None)[1]), expected))
        hits = await index.read(lambda s: retrieval.to_results(s, retrieval.vector_hits(s, qv, 50), 10))
        vector.append(reciprocal_rank(hits, expected))
    mrr = {name: sum(v) / len(v) for name, v in (("fused", fused), ("keyword", keyword), ("vector", vector))}
    assert mrr["fused"] >= max(mrr["keyword"], mrr["vector"]), mrr
    assert mrr["fused"] >= 0.85, mrr


def test_keyword_hits_keep_their_order_whatever_the_vectors_say():
    """The words lead: a heading the keywords rank first stays first even when the
    vectors put it last (the sum of standardised scores, before, put 3 first here)."""
    keyword = [(1, 20.0), (2, 3.0), (3, 2.9), (4, 2.8)]
    vector = [(3, 0.95), (5, 0.9), (2, 0.3), (4, 0.29), (1, 0.1)]
    ranked = [h for h, _ in fusion.fuse(keyword, vector)]
    assert ranked == [1, 2, 3, 4, 5]


def test_vectors_order_keyword_ties_and_add_what_the_words_missed():
    keyword = [(1, 5.0), (2, 5.0), (3, 5.0), (4, 1.0)]  # 1-3: the same keyword score
    vector = [(6, 0.9), (3, 0.8), (2, 0.5)]
    fused = fusion.fuse(keyword, vector)
    assert [h for h, _ in fused] == [3, 2, 1, 4, 6]
    assert [s for _, s in fused] == sorted((s for _, s in fused), reverse=True)


def test_no_keyword_hits_is_the_vector_ranking():
    vector = [(7, 0.8), (8, 0.6)]
    assert fusion.fuse([], vector) == vector


# Notes written for the tests below (a keyword index; the fake embedder plays no part).
NOTES = {
    "sorting.org": """#+title: Sorting

* Sorting algorithms
Merge sort and quicksort are the usual choices; sorting a linked list favours merge sort.
""",
    "sorted-sets.org": """#+title: Sorted sets

* Sorted containers
Sorted set, sorted map, sorted array: sorted on insert.
""",
    "capabilities.org": """#+title: Capabilities

* What
A capability is an unforgeable token that names an object.
""",
    "capability-systems.org": """#+title: Capability systems

* Capability systems
Systems built on capability tokens.
""",
    "faq.org": """#+title: FAQ

* Is it so
It is what it is.
""",
    "starter.org": """#+title: Rye starter

* Related
Bread.

* Overview
Feed the rye starter flour and water every day.
""",
    "word-motion.org": """#+title: ワード移動を可視化する

* 概要
日本語のワード移動をハイライト表示するパッケージ。
""",
}
# Notes that share one English word and one Japanese word with the query below.
NOTES.update(
    {
        f"editor-{i}.org": f"#+title: Editor {i}\n\n* Emacs {i}\nEmacs の{word}の設定。\n"
        for i, word in enumerate(["移動", "表示", "日本", "パッケージ"])
    }
)


@pytest.fixture
async def notes_index(make_settings, tmp_path):
    roam = tmp_path / "notes"
    roam.mkdir()
    for name, text in NOTES.items():
        (roam / name).write_text(text, encoding="utf-8")
    idx = OracleIndex(make_settings(roam_dir=roam))  # Ollama unreachable: keyword mode
    await idx.start()
    await idx.reconcile()
    yield idx
    await idx.close()


async def first(idx, query) -> tuple[str, str]:
    mode, results = await search(idx, query, 5)
    assert mode == "keyword" and results, query
    return results[0].file, results[0].heading


async def test_a_word_as_written_outranks_one_sharing_its_stem(notes_index):
    """Stemmed alone, "sorting" is "sort", and the heading saying "sorted" five times
    wins; the unstemmed index (m008) puts the heading that says "sorting" first."""
    assert (await first(notes_index, "sorting"))[0] == "sorting.org"
    assert (await first(notes_index, "sorted"))[0] == "sorted-sets.org"


async def test_stop_words_count_in_search(notes_index):
    """"what" is a stop word to most search engines, and the title of many a heading;
    BM25 weighs it by how rare it is (dropping it ranked "Capability systems" first)."""
    assert await first(notes_index, "what is a capability") == ("capabilities.org", "What")  # every word
    assert await first(notes_index, "what a capability means") == ("capabilities.org", "What")  # some


async def test_a_headings_own_words_outweigh_its_notes_title(notes_index):
    """Every heading of a note shares its title (the context column); the heading that
    also says "rye starter" itself ranks above a short one that only inherits it."""
    _, results = await search(notes_index, "rye starter", 5)
    order = [r.heading for r in results if r.file == "starter.org"]
    assert order.index("Overview") < order.index("Related"), order


async def test_a_japanese_query_is_not_led_by_its_one_english_word(notes_index):
    """The heading holding the query's Japanese but not "Emacs" beats the headings
    holding "Emacs" and one Japanese word (with "every word" first, they came first)."""
    query = "日本語のワード移動をハイライト表示するEmacsパッケージ"
    assert await first(notes_index, query) == ("word-motion.org", "概要")


def test_search_terms_keep_stop_words_and_particles_apart():
    words, bigrams, little = search_ranking.search_terms("What is the 移動をする")
    assert (words, bigrams, little) == ([], ["移動", "動を"], ["what", "is", "the", "をす", "する"])
    # a query of little words only is searched by them
    assert search_ranking.search_terms("what is it") == (["what", "is", "it"], [], [])


async def test_little_words_score_like_one_or_over_every_word(notes_index):
    """``key AND little`` plus ``key NOT little`` give the headings holding a key word
    with the scores of one OR query over every word."""
    query = "what is a capability or a sorting"

    def both(store):
        words, _, little = search_ranking.search_terms(query)
        split, key = search_ranking.keyword_ranking(store, query, 50)
        whole = dict(store.fts_scores([" OR ".join(retrieval.quoted(words + little))], 200))
        keyed = {h for h, _ in store.fts_scores([key], 200)}
        return dict(split), whole, keyed

    split, whole, keyed = await notes_index.read(both)
    assert split and set(split) == set(whole) & keyed != set(whole)
    assert all(abs(split[h] - whole[h]) < 1e-9 for h in split)


async def test_an_index_from_before_the_exact_words_table_is_filled_by_its_migration(make_settings, tmp_path):
    """m008 on an index written before it: headings_exact is built from the rows at
    once (nothing re-read), /search ranks by it, and both FTS indexes check out."""
    from arcology_oracle.store import Store

    roam = tmp_path / "notes"
    roam.mkdir()
    for name in ("sorting.org", "sorted-sets.org"):
        (roam / name).write_text(NOTES[name], encoding="utf-8")
    settings = make_settings(roam_dir=roam)
    idx = OracleIndex(settings)
    await idx.start()
    await idx.reconcile()
    await idx.close()
    store = Store.open(settings.db_path)
    with store.transaction():
        for trigger in ("headings_exact_ad", "headings_exact_au"):
            store.conn.execute(f"DROP TRIGGER {trigger}")
        store.conn.execute("DROP TABLE headings_exact")
        store.conn.execute("DELETE FROM _migrations WHERE name = 'm008_fts_exact_words'")
    store.close()
    store = Store.open(settings.db_path)  # migrates again
    try:
        hits, _ = search_ranking.keyword_ranking(store, "sorting", 10)
        assert store.headings([hits[0][0]])[hits[0][0]]["file"] == "sorting.org"
        assert store.check_integrity().fts == "ok"
    finally:
        store.close()


# A note holding a question's words throughout, another whose one heading matches them a
# little better, and unrelated notes (so that word statistics are those of many notes;
# "firing" is in some of them).
SPREAD = {
    "glaze-firing.org": "#+title: Glaze firing\n\n* Firing the kiln\nGlaze firing: load the kiln, fire to temperature, cool slowly.\n",
    "celadon.org": """#+title: Celadon

* Recipe
Celadon: a glaze of iron in feldspar.

* Kiln
A reduction firing turns the iron green.

* Tiles
Test tiles of celadon, one per firing.
""",
}
SPREAD.update(
    {
        f"{word}.org": f"#+title: {word.title()}\n\n* About {word}\nNotes on {word}: what I learnt, what to try next.\n"
        + (f"\n* Firing up the {word}\nStarting with {word} again.\n" if i % 3 == 0 else "")
        for i, word in enumerate(
            ("bread", "garden", "rust", "sqlite", "coffee", "tomato", "bicycle", "violin", "chess", "python", "hiking", "camera")
        )
    }
)


async def test_a_note_holding_the_words_throughout_comes_first_by_its_best_heading(make_settings, tmp_path):
    """"celadon glaze firing": the note on celadon holds all three words across its
    headings, the note on glaze firing two of them in one heading, which BM25 over
    headings alone ranks first. The whole note's words move the celadon note's best
    heading above it; its headings that hold the words less well stay below."""
    roam = tmp_path / "notes"
    roam.mkdir()
    for name, text in SPREAD.items():
        (roam / name).write_text(text, encoding="utf-8")
    idx = OracleIndex(make_settings(roam_dir=roam))
    await idx.start()
    await idx.reconcile()
    try:
        mode, results = await search(idx, "celadon glaze firing", 10)
    finally:
        await idx.close()
    order = [(r.file, r.heading) for r in results]
    assert mode == "keyword" and order[0][0] == "celadon.org", order
    assert order.index(("glaze-firing.org", "Glaze firing")) < order.index(("celadon.org", "Tiles")), order
    # the scores are still each heading's own keyword match, never rising down the list
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)


# A long note two of whose headings hold a question's words about as well (its whole text,
# mostly about other things, scores below the other notes'), beside short notes on them.
DIARY = {
    "kiln-diary.org": "#+title: Kiln diary\n\n* Monday\nGlaze firing, cone six.\n\n"
    "* Tuesday\nGlaze firing again, cone five.\n\n* Studio\n"
    + " ".join(f"Swept the floor, mended shelf {i}, sorted clay bags and wedged {i} kilos." for i in range(40))
    + "\n",
    "glaze-recipes.org": "#+title: Glaze recipes\n\n* Glaze firing schedule\nGlaze firing schedule for each glaze.\n",
    "firing.org": "#+title: Firing\n\n* Firing by cone\nFiring by cone, glaze or bisque firing.\n",
    "raku.org": "#+title: Raku\n\n* Raku glaze firing\nRaku glaze firing outdoors.\n",
    "salt.org": "#+title: Salt glaze\n\n* Salt glaze firing\nSalt glaze firing in the old kiln.\n",
    "wood.org": "#+title: Wood firing\n\n* Ash glaze\nWood firing leaves an ash glaze.\n",
}
DIARY.update({name: text for name, text in SPREAD.items() if name not in ("celadon.org", "glaze-firing.org")})


async def test_a_notes_headings_keep_their_order_whatever_its_whole_text_says(make_settings, tmp_path):
    """"glaze firing": the diary's "Monday" holds the words a little better than its
    "Tuesday" (a shorter text), and the diary's whole text (mostly about sweeping and
    shelves) scores below the short notes'. The note's words move all its headings
    alike, so "Monday" stays above "Tuesday"; moving only the note's best heading put
    it below its own weaker sibling."""
    roam = tmp_path / "notes"
    roam.mkdir()
    for name, text in DIARY.items():
        (roam / name).write_text(text, encoding="utf-8")
    idx = OracleIndex(make_settings(roam_dir=roam))
    await idx.start()
    await idx.reconcile()
    try:
        mode, results = await search(idx, "glaze firing", 10)
    finally:
        await idx.close()
    order = [(r.file, r.heading) for r in results]
    assert mode == "keyword"
    assert order.index(("kiln-diary.org", "Monday")) < order.index(("kiln-diary.org", "Tuesday")), order
