"""Dialogue turns in the store (m011): kept per turn with their scenes, searchable by
word (in Japanese by its bigrams, m015), and gone with their file, text and keyword index
alike."""

from __future__ import annotations

from arcology_oracle.store import Store

from arcology_oracle.answers import retrieval
from arcology_oracle.index.service import OracleIndex

CHAT = "#+title: Ana\n* [2024-03-02 Sat 19:00] Catching up\n" + "\n".join(
    f"{who}: {text}\n"
    for who, text in [("Me", "Hello there."), ("Ana", "We adopted a whippet."), ("Me", "Lovely!"), ("Ana", "Her name is Pepper.")]
)


JAPANESE_CHAT = "#+title: 料理の会話\n* [2024-09-01 Sun 10:00] 夕食\n" + "\n".join(
    f"{who}: {text}\n"
    for who, text in [("Me", "今日は何を作るの？"), ("Ana", "昆布と鰹節で出汁を取って、味噌汁を作るつもり。"),
                      ("Me", "いいね、豆腐も入れて。"), ("Ana", "明日は雨が降るらしい。")]
)  # fmt: skip
# A turn in Japanese is one unicode61 token a clause long: it is found by its CJK bigrams
# (m015), which a Japanese question's words are searched as.
MISO = retrieval.fts_query("味噌汁の作り方", any_term=True, bigram_columns="cjk_text")


async def test_turns_are_stored_searched_and_deleted_with_their_file(tmp_path, make_settings):
    roam = tmp_path / "turn-roam"
    roam.mkdir()
    (roam / "ana.org").write_text(CHAT, encoding="utf-8")
    (roam / "ryouri.org").write_text(JAPANESE_CHAT, encoding="utf-8")
    idx = OracleIndex(make_settings(roam_dir=roam))
    await idx.start()
    try:
        await idx.reconcile()
        hits = await idx.read(lambda s: s.turn_search('"whippet"', 5))
        assert [(o, speaker) for _, o, speaker, _ in hits] == [(1, "Ana")]
        rows = await idx.read(lambda s: s.turns_between([(hits[0][0], 0, 9)]))
        assert [r["date"] for r in rows.values()] == ["2024-03-02"] * 4 and rows[(hits[0][0], 3)]["start_line"] == 9
        assert await idx.read(lambda s: s.known_speakers(["ana", "Bob"])) == {"Ana"}
        miso = await idx.read(lambda s: s.turn_search(MISO, 5))
        assert [(o, speaker) for _, o, speaker, _ in miso][:1] == [(1, "Ana")]
        (roam / "ana.org").unlink()
        (roam / "ryouri.org").unlink()
        await idx.reconcile()
        assert await idx.read(lambda s: s.turn_search('"whippet"', 5)) == []
        assert await idx.read(lambda s: s.turn_search(MISO, 5)) == []
        left = await idx.read(lambda s: s.conn.execute("SELECT count(*) FROM turns").fetchone()[0])
        assert left == 0 and (await idx.read(lambda s: s.check_integrity())).fts == "ok"
    finally:
        await idx.close()


async def test_an_index_made_before_the_turns_bigrams_gets_them(tmp_path, make_settings):
    """m015 on an index whose turns have no bigram column: the turns stay searchable by
    word meanwhile, and the next reconcile fills the bigrams; notes holding 々 (CJK
    since m015: 人々) are read again too, and no other."""
    from arcology_oracle.store import migrate, migrations
    from arcology_oracle.store.db import connect

    roam = tmp_path / "turn-roam"
    roam.mkdir()
    (roam / "ana.org").write_text(CHAT, encoding="utf-8")
    (roam / "ryouri.org").write_text(JAPANESE_CHAT, encoding="utf-8")
    (roam / "hitobito.org").write_text("#+title: 町の記録\n\n町の人々の暮らし。\n", encoding="utf-8")
    (roam / "plain.org").write_text("#+title: Plain\n\nNothing to read again.\n", encoding="utf-8")
    settings = make_settings(roam_dir=roam)
    idx = OracleIndex(settings)
    await idx.start()
    await idx.reconcile()
    await idx.close()
    people = '"人々"'  # the bigram the notes' CJK columns hold since m015
    # The index as m014 left it: turns_fts over the text alone.
    conn = connect(settings.db_path)
    conn.executescript(
        "DROP TRIGGER turns_ad; DROP TABLE turns_fts; ALTER TABLE turns DROP COLUMN cjk_text;"
        f"CREATE VIRTUAL TABLE turns_fts USING fts5(text, content='turns', content_rowid='id', tokenize='{migrations.FTS_TOKENIZE}');"
        "INSERT INTO turns_fts(turns_fts) VALUES ('rebuild');"
        "CREATE TRIGGER turns_ad AFTER DELETE ON turns BEGIN"
        " INSERT INTO turns_fts(turns_fts, rowid, text) VALUES ('delete', old.id, old.text); END;"
        "DELETE FROM _migrations WHERE name = 'm015_turn_bigrams';"
        # 人々 as the code before m015 split it: 人, then 々 alone.
        "UPDATE headings SET cjk_text = '人 々 の暮 暮ら らし' WHERE text LIKE '%人々%';"
    )
    assert conn.execute("SELECT count(*) FROM headings_fts WHERE headings_fts MATCH ?", (people,)).fetchone()[0] == 0
    assert migrate.migrate(conn) == ["m015_turn_bigrams"]
    assert conn.execute("SELECT count(*) FROM turns_fts WHERE turns_fts MATCH '\"whippet\"'").fetchone()[0] == 1
    again = {r[0] for r in conn.execute("SELECT path FROM files WHERE mtime_ns = 0")}
    assert again == {"ana.org", "ryouri.org", "hitobito.org"}
    conn.close()
    idx = OracleIndex(settings)
    await idx.start()
    try:
        await idx.reconcile()
        assert [o for _, o, _, _ in await idx.read(lambda s: s.turn_search(MISO, 5))][:1] == [1]
        found = await idx.read(
            lambda s: s.conn.execute("SELECT count(*) FROM headings_fts WHERE headings_fts MATCH ?", (people,)).fetchone()[0]
        )
        assert found == 1 and (await idx.read(lambda s: s.check_integrity())).fts == "ok"
    finally:
        await idx.close()


def test_the_turns_of_a_date_range_are_read_by_their_index(tmp_path):
    # A question naming a time reads the turns of its range: through m017's index, not
    # every turn of every chat log.
    store = Store.open(tmp_path / "index.sqlite3")
    try:
        plan = " ".join(str(row[-1]) for row in store.conn.execute(
            "EXPLAIN QUERY PLAN SELECT heading, ordinal FROM turns WHERE date >= ? AND date < ?"
            " ORDER BY date, heading, ordinal LIMIT ?", ("2024-03-01", "2024-03-07~", 10)))  # fmt: skip
        assert "turns_date" in plan, plan
    finally:
        store.close()
