"""/similar on whole notes: candidate notes are re-ranked by the words they share with the
query note (BM25 over each candidate's whole text and over the index's headings, fused
with the vector order), and notes sharing those words may join the candidates.

A small vault written here: real org files, real SQLite, the fake Ollama (its embeddings
are hashed bags of words, so a note repeating the subject's common words is the closest
vector). The note that shares the query's *distinctive* words must still come first.
"""

from __future__ import annotations

import uuid

import pytest
from arcology_oracle.answers import retrieval, similarity
from arcology_oracle.answers.search import similar_to_node
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.notes import cjk
from arcology_oracle.store.search import bm25_order

SUBJECT = "dough flour water oven crust bread loaf"


def node_id(title: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, title))


def note(title: str, body: str) -> str:
    return f":PROPERTIES:\n:ID:       {node_id(title)}\n:END:\n#+title: {title}\n\n{body}\n"


NOTES = {
    # The query: the subject's common words again and again, and two rare ones.
    "Weekend loaf": f"{SUBJECT}. {SUBJECT}. {SUBJECT}. Start with an autolyse and a poolish the night before.",
    # Closest by vector: the same common words, nothing specific.
    "Bread basics": f"{SUBJECT}. {SUBJECT}. {SUBJECT}. Knead, shape, bake.",
    # What the query's author would link: both rare words, less of the subject.
    "Autolyse and poolish": f"{SUBJECT}. An autolyse rests the flour in water before mixing; a poolish is a "
    "wet preferment.",
    "Cold retard": f"{SUBJECT}. Start the night before and keep it in a cold fridge.",
    "Baking schedule": f"{SUBJECT}. Start late at night, bake early in the morning.",
    "Tomato blight": "Brown leaves on the tomato plants; remove them and water at the base.",
}


@pytest.fixture
async def bread_index(tmp_path, make_settings, fake_ollama):
    roam = tmp_path / "bread-roam"
    roam.mkdir()
    for title, body in NOTES.items():
        (roam / (title.lower().replace(" ", "-") + ".org")).write_text(note(title, body), encoding="utf-8")
    idx = OracleIndex(make_settings(roam_dir=roam, ollama_host=fake_ollama.url))
    await idx.start()
    await idx.reconcile()
    await idx.embed_pending()
    yield idx
    await idx.close()


def vector_order(store, query: str) -> list[str]:
    """Titles of the candidate notes in their order by vectors alone (before re-ranking)."""
    vector = store.node_vectors([node_id(query)])[node_id(query)]
    hits = retrieval.vector_hits(store, vector, 100)
    hits = similarity._rescore_by_note(store, hits, vector, limit=30, exclude_nodes=frozenset({node_id(query)}))
    rows = store.headings([h for h, _ in hits])
    return [rows[h]["node_title"] for h, _ in hits]


async def test_similar_node_ranks_the_note_sharing_rare_words_first(bread_index):
    # The premise: by vectors alone, the note with only the subject's words is nearest.
    by_vector = await bread_index.read(lambda s: vector_order(s, "Weekend loaf"))
    assert by_vector[0] == "Bread basics", by_vector

    mode, results = await similar_to_node(bread_index, node_id("Weekend loaf"), k=5)
    assert mode == "vector"
    titles = [r.title for r in results]
    assert titles[0] == "Autolyse and poolish", titles
    assert titles.index("Bread basics") > titles.index("Autolyse and poolish")
    assert "Weekend loaf" not in titles and len(titles) == len(set(titles))


async def test_similar_node_scores_are_calibrated_not_scaled_to_the_first(bread_index):
    """Scores are each pair's own (answers/relevance.py), in (0, 1): the first result is
    not 1.0 by construction, and the order is the ranking's."""
    _, results = await similar_to_node(bread_index, node_id("Weekend loaf"), k=10)
    scores = [r.score for r in results]
    assert len(scores) == len(NOTES) - 1
    assert all(0 < s < 1 for s in scores)


async def test_a_huge_candidate_note_is_read_only_up_to_the_cap(bread_index):
    """A note far larger than the cap (a year of journal in one file) is cut, from the start."""
    roam = bread_index.settings.roam_dir
    day = "* Day\nWalked to the bakery; the sourdough was sold out again.\n"
    (roam / "journal.org").write_text(note("Journal", day * 2000), encoding="utf-8")
    await bread_index.reconcile()
    ids = await bread_index.read(lambda s: [s.node(node_id(t))["id"] for t in ("Journal", "Bread basics")])
    texts = await bread_index.read(lambda s: s.note_texts(ids, similarity.RERANK_NOTE_CHARS))
    journal, basics = texts[ids[0]], texts[ids[1]]
    assert len(journal) == similarity.RERANK_NOTE_CHARS and journal.startswith("Journal")
    assert "Knead, shape, bake" in basics and len(basics) < 1000


async def test_a_confident_word_ranking_outweighs_evenly_spread_vector_scores(bread_index):
    """Vector scores that separate the candidates no more than evenly, and one note far
    ahead by the rare words it shares: it comes first from third by vectors. Reciprocal
    ranks (what the re-ranking fused before) only see that it is third, and put the
    vectors' first (second by words) above it."""
    order = ["Cold retard", "Bread basics", "Autolyse and poolish", "Baking schedule", "Tomato blight"]

    def rerank(store):
        ids = [store.node(node_id(title))["id"] for title in order]
        hits = [(h, 0.80 - i * 0.001) for i, h in enumerate(ids)]
        text = " ".join(r["title"] + " " + r["text"] for r in store.node_headings(node_id("Weekend loaf")))
        words = similarity.frequent_words_query(text, similarity.MAX_QUERY_WORDS)
        lexical = bm25_order([store.note_texts([h], 10_000)[h] for h in ids], words)
        by_ranks = retrieval.reciprocal_rank_fusion(ids, [ids[i] for i in lexical])
        query = node_id("Weekend loaf")
        vector = store.node_vectors([query])[query]
        fused = similarity._rerank_by_words(store, hits, text, vector, frozenset({query}))
        return ids, fused, by_ranks

    ids, fused, by_ranks = await bread_index.read(rerank)
    assert fused[0][0] == ids[2], fused
    assert by_ranks[0][0] != ids[2]  # the premise: rank fusion would not put it first
    assert fused[0][1] == 1.0 and [s for _, s in fused] == sorted((s for _, s in fused), reverse=True)


async def test_notes_sharing_the_words_join_candidates_the_vectors_left_out(bread_index, monkeypatch):
    """The vectors choose the candidate notes; the words may add notes they left out (an
    embedding model that reads the notes poorly, e.g. an English-only one on Japanese
    text, leaves out exactly those). Here only the two nearest notes by vector are
    candidates, and the note sharing the query's rare words is not one of them."""
    roam = bread_index.settings.roam_dir
    for title in ("Bakery visit", "Oven temperatures"):  # more of the subject's words, nothing rare
        body = f"{SUBJECT}. {SUBJECT}. {SUBJECT}. {SUBJECT}. Nothing else."
        (roam / (title.lower().replace(" ", "-") + ".org")).write_text(note(title, body), encoding="utf-8")
    await bread_index.reconcile()
    await bread_index.embed_pending()
    monkeypatch.setattr(similarity, "RERANK_NOTES", 2)
    by_vector = await bread_index.read(lambda s: vector_order(s, "Weekend loaf"))
    assert "Autolyse and poolish" not in by_vector[:2], by_vector  # the premise

    _, results = await similar_to_node(bread_index, node_id("Weekend loaf"), k=5)
    titles = [r.title for r in results]
    assert titles[0] == "Autolyse and poolish", titles
    assert "Weekend loaf" not in titles and len(titles) == len(set(titles))


async def test_a_section_is_searched_with_its_notes_title(make_settings, tmp_path):
    """A heading like "Notes" says little by itself: /similar?file=&line= searches with its
    context too (file title, outline path, as its chunk is embedded), so a note on the
    same subject comes before one that merely has a "Notes" heading. Keyword mode here
    (no embedder), where the words alone decide."""
    from arcology_oracle.answers.search import similar_to_line

    files = {
        "starter.org": note("Sourdough starter", "* Notes\n- see below\n"),
        "feeding.org": note("Feeding", "A sourdough starter wants flour and water daily."),
        "tomatoes.org": note("Tomatoes", "* Notes\n- water at the base\n"),
    }
    # Many notes have a "Notes" heading: the word says little, the subject much.
    for subject in ("Cycling", "Chess openings", "Piano scales", "Tax returns", "Camping", "Knots"):
        files[subject.lower().replace(" ", "-") + ".org"] = note(subject, f"* Notes\n- {subject.lower()} basics\n")
    idx = await reconciled_index(tmp_path / "notes-roam", make_settings, files)
    await idx.start()
    try:
        mode, results = await similar_to_line(idx, "starter.org", 6, k=5)
    finally:
        await idx.close()
    assert mode == "keyword"
    assert [r.file for r in results][:1] == ["feeding.org"], results


async def test_text_of_an_unsaved_note_finds_what_its_saved_note_would(bread_index):
    """POST /similar (Emacs sends an unsaved buffer's text) ranks notes as ?node= does:
    the note sharing the text's rare words first, not the one nearest by vector alone.
    (The text's own note is in the index here, and found first: the text is its copy.)"""
    from arcology_oracle.answers.search import similar_to_node, similar_to_text

    text = note("Weekend loaf", NOTES["Weekend loaf"])
    mode, results = await similar_to_text(bread_index, text, k=6)
    assert mode == "vector"
    titles = [r.title for r in results if r.title != "Weekend loaf"]
    assert titles[0] == "Autolyse and poolish", titles
    assert len(titles) == len(set(titles))
    _, by_node = await similar_to_node(bread_index, node_id("Weekend loaf"), k=5)
    assert titles[:3] == [r.title for r in by_node][:3]


async def reconciled_index(roam, make_settings, files: dict[str, str]) -> OracleIndex:
    """An index of ``files`` (name -> org text) in ``roam``, reconciled, then closed."""
    roam.mkdir()
    for name, text in files.items():
        (roam / name).write_text(text, encoding="utf-8")
    idx = OracleIndex(make_settings(roam_dir=roam))
    await idx.start()
    try:
        await idx.reconcile()
    finally:
        await idx.close()
    return idx


async def test_the_words_of_a_japanese_text_bring_more_candidate_notes(make_settings, tmp_path, monkeypatch):
    """The more of a query's words are CJK bigrams, the more notes its rarest words may add
    to the vectors' candidates (an English embedding model reads Japanese poorly; the
    bigrams find the notes sharing its words): all CJK, as many as the vectors propose;
    no CJK, ``KEYWORD_NOTES``. Here six notes each share one rare word with the query."""
    from arcology_oracle.store import Store

    rare = ["羊羹", "最中", "求肥", "落雁", "金鍔", "外郎"]
    files = {"query.org": note("和菓子", "".join(f"{w}と" for w in rare) + "茶。")}
    files |= {f"n{i}.org": note(f"メモ{i}", f"{w}を買った。") for i, w in enumerate(rare)}
    idx = await reconciled_index(tmp_path / "ja-roam", make_settings, files)
    monkeypatch.setattr(similarity, "KEYWORD_NOTES", 2)
    monkeypatch.setattr(similarity, "RERANK_NOTES", 6)
    assert similarity.keyword_notes(["rust", "cargo"]) == 2
    assert similarity.keyword_notes(["rust", "羊羹"]) == 4
    store = Store.open(idx.settings.db_path)
    try:
        query = store.conn.execute("SELECT id FROM headings WHERE title = '和菓子'").fetchone()[0]
        text = " ".join(r["title"] + " " + r["text"] for r in store.node_headings(node_id("和菓子")))
        words = similarity.frequent_words(text, similarity.MAX_QUERY_WORDS)
        assert all(cjk.has_cjk(w) for w in words), words  # the premise: an all-CJK query
        _, joining = similarity._keyword_candidates(store, words, [(query, 0.5)], [0.0] * 8, frozenset(), {})
    finally:
        store.close()
    assert len(joining) == 6


async def test_a_copy_of_the_section_elsewhere_is_no_neighbour(make_settings, tmp_path, fake_ollama):
    """/similar?file=&line= leaves out the section's copies in other notes (the same title
    and text: a backup, a sync conflict) as it leaves out the section itself; the copy's
    note counts only by its other headings. Without that the copy matched itself by
    vector and by every word and came first."""
    from arcology_oracle.answers.search import similar_to_line, similar_to_text

    section = "* Winter pruning\nCut the rose canes back to three buds in late winter, above an outward bud.\n"
    roam = tmp_path / "roses-roam"
    roam.mkdir()
    files = {
        "roses.org": note("Roses", "Climbing and shrub roses in the front garden.\n\n" + section),
        "backup.org": note("Old laptop backup", "Kept from the old laptop: tax returns, chess openings, "
                           "piano scales, knots, camping lists.\n\n" + section),
        "buds.org": note("Rose buds", "A rose bud above an outward bud makes canes grow out; cut in late winter."),
        "tomatoes.org": note("Tomatoes", "Brown leaves on the tomato plants; water at the base."),
    }
    for name, text in files.items():
        (roam / name).write_text(text, encoding="utf-8")
    idx = OracleIndex(make_settings(roam_dir=roam, ollama_host=fake_ollama.url))
    await idx.start()
    try:
        await idx.reconcile()
        await idx.embed_pending()
        line = files["roses.org"].splitlines().index("* Winter pruning") + 1
        mode, results = await similar_to_line(idx, "roses.org", line, k=5, keep_all=True)
        # The same section in an unsaved buffer (POST /similar with its file and line).
        edited = section + "Seal the larger cuts.\n"
        text_mode, by_text = await similar_to_text(idx, edited, k=5, path="roses.org", line=line, keep_all=True)
    finally:
        await idx.close()
    for found in (results, by_text):
        assert mode == text_mode == "vector"
        files_found = [r.file for r in found]
        assert files_found[0] == "buds.org", found
        # The backup's note is still there, by its own words (not its copy of the section).
        backup = [r for r in found if r.file == "backup.org"]
        assert backup and backup[0].heading != "Winter pruning", found


async def test_the_words_of_a_whole_note_bring_more_candidate_notes_than_a_sections(
    make_settings, tmp_path, monkeypatch
):
    """A whole note (``?node=``) asks for every note it should link, in the words of all
    its sections: its rarest words may add half as many notes as the vectors propose; a
    section's (or a heading's text) ``KEYWORD_NOTES``. Here six notes each share one rare
    word with the query note; ``?node=`` and a whole note's text ask with ``note_query``."""
    from arcology_oracle.answers import search as search_module
    from arcology_oracle.store import Store

    rare = ["autolyse", "poolish", "banneton", "couche", "lame", "levain"]
    files = {"query.org": note("Bake day", " and ".join(rare) + " on the bench.")}
    files |= {f"n{i}.org": note(f"Memo {i}", f"Bought a {w} today.") for i, w in enumerate(rare)}
    idx = await reconciled_index(tmp_path / "en-roam", make_settings, files)
    monkeypatch.setattr(similarity, "KEYWORD_NOTES", 2)
    monkeypatch.setattr(similarity, "RERANK_NOTES", 8)
    assert similarity.keyword_notes(["rust", "cargo"]) == 2
    assert similarity.keyword_notes(["rust", "cargo"], note_query=True) == 4
    assert similarity.keyword_notes(["羊羹"], note_query=True) == 8
    store = Store.open(idx.settings.db_path)
    try:
        query = store.conn.execute("SELECT id FROM headings WHERE title = 'Bake day'").fetchone()[0]
        words = similarity.frequent_words("Bake day " + " ".join(rare), similarity.MAX_QUERY_WORDS)
        joined = {
            kind: similarity._keyword_candidates(
                store, words, [(query, 0.5)], [0.0] * 8, frozenset(), {}, note_query=kind == "note"
            )[1]
            for kind in ("section", "note")
        }
        # ?node= asks as a whole note.
        asked = []
        real = similarity.similar
        spy = lambda *a, **kw: asked.append(kw.get("note_query")) or real(*a, **kw)  # noqa: E731
        monkeypatch.setattr(similarity, "similar", spy)
        search_module.similar_node(store, idx.settings, node_id("Bake day"), 5)
    finally:
        store.close()
    # So does a whole note's text (POST /similar); a heading's text asks as a section.
    await idx.start()
    try:
        for posted in (files["query.org"], "* Bench\n" + " and ".join(rare)):
            await search_module.similar_to_text(idx, posted, 5)
    finally:
        await idx.close()
    assert (len(joined["section"]), len(joined["note"])) == (2, 4)
    assert asked == [True, True, False]


async def test_words_weigh_more_for_a_japanese_section_than_for_a_whole_note(make_settings, tmp_path):
    """In the word re-ranking the vector z-score weighs less as the query's CJK share grows
    (an English-trained model reads Japanese poorly), to half for an all-CJK section or
    text, but not for a whole note (the mean of its headings' vectors). Here the nearest
    note by vector shares no word with the query; the one sharing its word comes first
    for a section, not for a whole note."""
    from arcology_oracle.store import Store

    notes = {"query.org": ("和菓子", "羊羹と最中を買った。"), "a.org": ("天気", "今日は晴れ。"),
             "c.org": ("雨", "雨の日は家にいる。"), "b.org": ("羊羹", "羊羹の作り方。")}  # fmt: skip
    files = {name: note(title, body) for name, (title, body) in notes.items()}
    idx = await reconciled_index(tmp_path / "ja-weight-roam", make_settings, files)
    text = "和菓子 羊羹と最中を買った。"
    words = similarity.frequent_words(text, similarity.MAX_QUERY_WORDS)
    assert similarity.cjk_share(words) == 1.0  # the premise: an all-CJK query
    assert similarity.vector_weight(words) == 0.5
    assert similarity.vector_weight(words, note_query=True) == 1.0
    assert similarity.vector_weight(["rust", "cargo"]) == 1.0
    store = Store.open(idx.settings.db_path)
    try:
        heading = dict(store.conn.execute("SELECT title, id FROM headings").fetchall())
        # By vector: the weather note first, the rain note, then the one sharing 羊羹.
        hits = [(heading["天気"], 0.9), (heading["雨"], 0.7), (heading["羊羹"], 0.5)]
        order = {}
        for kind in ("section", "note"):
            ranked = similarity._rerank_by_words(
                store, list(hits), text, [0.0] * 8, frozenset({node_id("和菓子")}), note_query=kind == "note"
            )
            titles = {v: k for k, v in heading.items()}
            order[kind] = [titles[h] for h, _ in ranked]
    finally:
        store.close()
    assert order["section"][0] == "羊羹", order
    assert order["note"][0] == "天気", order


async def test_suggest_links_asks_for_a_whole_node_as_similar_node_does(bread_index, monkeypatch):
    """/suggest-links for a node ranks its candidates as ``?node=`` does (``note_query``:
    a whole note's keyword candidates and vector weight); for a heading, as a section."""
    from arcology_oracle.answers import links

    asked = []
    real = similarity.similar
    monkeypatch.setattr(similarity, "similar", lambda *a, **kw: asked.append(kw.get("note_query")) or real(*a, **kw))

    def both(store):
        links.link_candidates(store, bread_index.settings, node_id("Weekend loaf"), 5)
        heading = links._heading_query(store, "weekend-loaf.org", 5, bread_index.settings)
        links.link_candidates(store, bread_index.settings, node_id("Weekend loaf"), 5, heading_query=heading)

    await bread_index.read(both)
    assert asked == [True, False]
