"""Dialogue turns in the store (m011): kept per turn with their scenes, searchable by
word, and gone with their file, text and keyword index alike."""

from __future__ import annotations

from arcology_oracle.index.service import OracleIndex

CHAT = "#+title: Ana\n* [2024-03-02 Sat 19:00] Catching up\n" + "\n".join(
    f"{who}: {text}\n"
    for who, text in [("Me", "Hello there."), ("Ana", "We adopted a whippet."), ("Me", "Lovely!"), ("Ana", "Her name is Pepper.")]
)


async def test_turns_are_stored_searched_and_deleted_with_their_file(tmp_path, make_settings):
    roam = tmp_path / "turn-roam"
    roam.mkdir()
    (roam / "ana.org").write_text(CHAT, encoding="utf-8")
    idx = OracleIndex(make_settings(roam_dir=roam))
    await idx.start()
    try:
        await idx.reconcile()
        hits = await idx.read(lambda s: s.turn_search('"whippet"', 5))
        assert [(o, speaker) for _, o, speaker, _ in hits] == [(1, "Ana")]
        rows = await idx.read(lambda s: s.turns_between([(hits[0][0], 0, 9)]))
        assert [r["date"] for r in rows.values()] == ["2024-03-02"] * 4 and rows[(hits[0][0], 3)]["start_line"] == 9
        assert await idx.read(lambda s: s.known_speakers(["ana", "Bob"])) == {"Ana"}
        (roam / "ana.org").unlink()
        await idx.reconcile()
        assert await idx.read(lambda s: s.turn_search('"whippet"', 5)) == []
        left = await idx.read(lambda s: s.conn.execute("SELECT count(*) FROM turns").fetchone()[0])
        assert left == 0 and (await idx.read(lambda s: s.check_integrity())).fts == "ok"
    finally:
        await idx.close()
