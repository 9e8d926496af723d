"""Keyword search in Japanese (no spaces between words) and by a heading's context.

The notes are written for these tests: Japanese headings whose words sit inside longer
runs of kanji and kana, which FTS5's unicode61 tokenizer alone keeps as one token.
"""

from __future__ import annotations

import pytest

from arcology_oracle.notes import cjk
from arcology_oracle.answers.search import search
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.store import migrate, migrations

NOTES = {
    "ryouri.org": """:PROPERTIES:
:ID: 0a6f3e0c-1111-4d7e-9c1a-000000000001
:END:
#+title: 料理の記録

* 味噌汁の作り方
昆布と鰹節で出汁を取ってから、火を止めて味噌を溶かし入れる。豆腐とわかめを加える。

* 炊飯器で玄米を炊く
玄米は一晩水に浸けておくと柔らかく炊き上がる。
""",
    "tetsudou.org": """:PROPERTIES:
:ID: 0a6f3e0c-1111-4d7e-9c1a-000000000002
:END:
#+title: 鉄道の旅

* 概要
新宿駅で中央線の快速に乗り換えて、終点の高尾まで行った。

* 切符
交通系ICカードで改札を通った。
""",
    "sourdough.org": """:PROPERTIES:
:ID: 0a6f3e0c-1111-4d7e-9c1a-000000000003
:END:
#+title: Sourdough baking

* Overview
Feed the starter twice a day and keep the dough warm.

* Shaping
Fold the dough gently before the final proof.
""",
}


@pytest.fixture
def notes_dir(tmp_path):
    roam = tmp_path / "notes"
    roam.mkdir()
    for name, text in NOTES.items():
        (roam / name).write_text(text, encoding="utf-8")
    return roam


async def keyword_index(make_settings, roam) -> OracleIndex:
    idx = OracleIndex(make_settings(roam_dir=roam))  # Ollama unreachable: keyword mode
    await idx.start()
    await idx.reconcile()
    return idx


@pytest.mark.parametrize(
    "query,expected",
    [
        ("味噌", ("ryouri.org", "味噌汁の作り方")),  # a word inside a longer run
        ("出汁の取り方", ("ryouri.org", "味噌汁の作り方")),  # a question, particles and all
        ("玄米", ("ryouri.org", "炊飯器で玄米を炊く")),
        ("中央線に乗り換える", ("tetsudou.org", "概要")),
        ("ICカード", ("tetsudou.org", "切符")),  # Latin letters and katakana in one word
        ("駅", ("tetsudou.org", "概要")),  # a word of one kanji, before its particle
        ("米", ("ryouri.org", "炊飯器で玄米を炊く")),  # one kanji ending a word: 玄米は
    ],
)
async def test_japanese_words_inside_a_run_are_found(make_settings, notes_dir, query, expected):
    idx = await keyword_index(make_settings, notes_dir)
    try:
        mode, results = await search(idx, query, 5)
        assert mode == "keyword"
        assert results, query
        assert (results[0].file, results[0].heading) == expected, [(r.file, r.heading) for r in results]
    finally:
        await idx.close()


async def test_a_heading_is_found_by_its_notes_title(make_settings, notes_dir):
    """"Overview" says nothing by itself; its note's title says what it is about."""
    idx = await keyword_index(make_settings, notes_dir)
    try:
        _, results = await search(idx, "sourdough overview", 5)
        assert (results[0].file, results[0].heading) == ("sourdough.org", "Overview")
        _, results = await search(idx, "鉄道 概要", 5)
        assert (results[0].file, results[0].heading) == ("tetsudou.org", "概要")
    finally:
        await idx.close()


async def test_an_index_made_before_the_cjk_columns_becomes_searchable(make_settings, notes_dir):
    """m005 on an index written by the code before it: the next reconcile re-reads every
    file and fills the new columns; the full-text index stays consistent throughout."""
    from arcology_oracle.store.db import connect

    settings = make_settings(roam_dir=notes_dir)
    settings.db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(settings.db_path)
    conn.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    names = [fn.__name__ for fn in migrations.MIGRATIONS]
    before = migrations.MIGRATIONS[: names.index("m005_fts_context_and_cjk")]
    for fn in before:  # the schema as it was, with one note in it
        migrate._run_in_transaction(conn, fn)
        conn.execute("INSERT INTO _migrations VALUES (?, 0)", (fn.__name__,))
    conn.execute("INSERT INTO files VALUES (1, 'ryouri.org', 1, 1, 'x', '料理の記録', NULL, '[]')")
    conn.execute(
        "INSERT INTO headings (id, file, level, title, olp, olp_text, tags, properties, body, text,"
        " start_line, end_line, node_title, hash) VALUES (1, 1, 1, '味噌汁の作り方', '[]', '', '[]', '{}',"
        " '味噌を溶かす', '味噌を溶かす', 6, 7, '料理の記録', 'h')"
    )
    conn.execute("INSERT INTO headings_fts (rowid, title, olp_text, text) SELECT id, title, olp_text, text FROM headings")
    conn.commit()
    assert conn.execute("SELECT count(*) FROM headings_fts WHERE headings_fts MATCH '\"味噌\"'").fetchone()[0] == 0
    conn.close()

    idx = OracleIndex(settings)
    await idx.start()
    try:
        report = await idx.reconcile()
        assert report.indexed == len(NOTES)
        _, results = await search(idx, "味噌", 5)
        assert results and (results[0].file, results[0].heading) == ("ryouri.org", "味噌汁の作り方")
    finally:
        await idx.close()
    conn = connect(settings.db_path)
    conn.execute("INSERT INTO headings_fts(headings_fts, rank) VALUES ('integrity-check', 1)")
    conn.close()


def test_bigrams_of_each_run_and_query_terms():
    assert cjk.bigrams("Go言語のslice") == "Go 言語 語の slice"  # words glued to a run too
    assert cjk.bigrams("GoとRust、mixed words") == "Go と Rust"
    assert cjk.bigrams("no CJK here") == ""
    assert cjk.bigrams("円 と 線") == "円 と 線"  # a run of one character is one term
    # Hiragana-only bigrams (particles, endings) are dropped from a query with others...
    assert cjk.query_bigrams("出汁の取り方") == ["出汁", "汁の", "の取", "取り", "り方"]
    assert "ている" not in cjk.query_bigrams("走っている犬")
    assert cjk.query_bigrams("走っている犬") == ["走っ", "る犬"]
    # ... and kept when there is nothing else.
    assert cjk.query_bigrams("ひらがな") == ["ひら", "らが", "がな"]


async def test_a_multilingual_model_of_another_dimension_works_unchanged(make_settings, notes_dir):
    """bge-m3 (1024-d, no task prefixes), as the README suggests for such notes: hybrid
    search on the Japanese notes, nothing configured but the model's name."""
    from tests.fakes.fake_ollama import FakeModel, FakeOllamaState, running_fake_ollama

    state = FakeOllamaState(models=[FakeModel("bge-m3", "embedding", 1024)])
    async with running_fake_ollama(state) as fake:
        idx = OracleIndex(make_settings(roam_dir=notes_dir, ollama_host=fake.url, embed_model="bge-m3"))
        await idx.start()
        try:
            await idx.reconcile()
            await idx.embed_pending()
            assert (await idx.status())["embedder"]["dims"] == 1024
            mode, results = await search(idx, "炊飯器で玄米を炊く", 5)
            assert mode == "hybrid"
            assert (results[0].file, results[0].heading) == ("ryouri.org", "炊飯器で玄米を炊く")
        finally:
            await idx.close()


async def test_a_notes_text_for_the_reranking_carries_the_bigrams_of_exactly_that_text(make_settings, notes_dir):
    """The whole-note re-ranking reads each note's text followed by its CJK bigrams, put
    together from the bigrams stored per heading: they must be those of the text as read,
    wherever the cap cuts it (inside a title, inside a heading's text, between two)."""
    idx = await keyword_index(make_settings, notes_dir)
    try:
        ids = await idx.read(lambda s: [r[0] for r in s.conn.execute("SELECT id FROM headings ORDER BY id")])
        full = await idx.read(lambda s: s.note_texts(ids, 10_000))
        longest = max(len(t) for t in full.values())
        checked = 0
        for limit in range(1, longest + 2):
            plain = await idx.read(lambda s: s.note_texts(ids, limit))
            with_bigrams = await idx.read(lambda s: s.note_texts(ids, limit, cjk_bigrams=True))
            for heading_id, text in plain.items():
                bigrams = cjk.bigrams(text)
                assert with_bigrams[heading_id] == (text + "\n" + bigrams if bigrams else text), (limit, text)
                checked += bool(bigrams)
        assert checked > longest  # the Japanese notes were among them, cut at every length
        english = [h for h, t in full.items() if t.startswith("Sourdough")]
        assert english and all(with_bigrams[h] == full[h] for h in english)  # nothing added without CJK
    finally:
        await idx.close()


async def test_a_japanese_question_passes_the_relevance_gate_by_its_words(make_settings, notes_dir):
    """With no vectors, a note is relevant to /ask when it holds enough of the question's
    words: for Japanese, the bigrams of its nouns and stems (a run of kana and kanji is no
    word, and was the question's only "word", so no Japanese note ever passed)."""
    from arcology_oracle.answers.context import gather_context

    idx = await keyword_index(make_settings, notes_dir)
    try:
        context = await gather_context(idx, "味噌汁の作り方を教えて")
        assert context.mode == "keyword" and context.used_notes
        assert "味噌汁の作り方" in [s.heading for s in context.sources]
        assert not (await gather_context(idx, "新幹線の時刻表を教えて")).used_notes  # nothing on that
    finally:
        await idx.close()


def test_the_gates_words_in_japanese_are_the_pieces_of_its_nouns():
    """Hiragana writes particles and endings: it splits the runs whose bigrams (a run of
    one character itself) are a Japanese text's words; Korean keeps its spaced words."""
    from arcology_oracle.answers.windows import terms

    assert terms("猫の餌") == {"猫", "餌"}
    assert terms("味噌汁の作り方") == {"味噌", "噌汁", "作", "方"}
    assert terms("味噌汁の作り方") & terms("味噌汁を作る") == {"味噌", "噌汁", "作"}
    assert terms("Emacs・Org") == {"emac", "org"}  # the middle dot is no word
    assert terms("한국어 공부") == {"한국어", "공부"}
    assert terms("sourdough starter") == {"sourdough", "starter"}


async def test_a_word_with_the_iteration_mark_is_one_word(make_settings, tmp_path):
    """々 repeats the kanji before it (人々, 様々): it belongs to the run, so "人々" is
    searched as 人々, and the note that says 人々 comes before one that only says 人."""
    roam = tmp_path / "notes"
    roam.mkdir()
    # 人 and 々 both, many times, but never 人々.
    (roam / "hito.org").write_text("#+title: 人の話\n\n人と会った。色々な人が多い。時々人の流れ。\n", encoding="utf-8")
    (roam / "hitobito.org").write_text("#+title: 町の記録\n\n町の人々の暮らし。\n", encoding="utf-8")
    idx = await keyword_index(make_settings, roam)
    try:
        _, results = await search(idx, "人々", 5)
        assert [r.file for r in results][:1] == ["hitobito.org"], [(r.file, r.heading) for r in results]
    finally:
        await idx.close()
