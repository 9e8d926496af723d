"""The candidates' BM25 of ``/similar`` (:func:`arcology_oracle.store.search.bm25_scores`)
runs on a contentless scratch table: its scores and order must be, to the last bit,
those of an FTS5 table that keeps the text (what it was before), for phrases of one and
of several tokens, stems, repeated words, CJK bigrams and an empty text."""

from __future__ import annotations

import random

from arcology_oracle.store.db import sqlite
from arcology_oracle.store.migration_registry import FTS_TOKENIZE
from arcology_oracle.store.search import bm25_order, bm25_scores

WORDS = ("option options optional begin_src src begin emacs org-roam roam note notes linking links "
         "café cafe naïve 東京 東京都 猫 ねこ 2024 x86_64 the a of").split()  # fmt: skip


def with_text(texts: list[str], match: str) -> dict[int, float]:
    """The scores an FTS5 table keeping its text gives (the scratch table as it was)."""
    conn = sqlite.connect(":memory:", isolation_level=None)
    conn.execute(f"CREATE VIRTUAL TABLE notes USING fts5(text, tokenize='{FTS_TOKENIZE}')")
    conn.executemany("INSERT INTO notes (rowid, text) VALUES (?, ?)", [(i + 1, t) for i, t in enumerate(texts)])
    rows = conn.execute("SELECT rowid, bm25(notes) FROM notes WHERE notes MATCH ?", (match,)).fetchall()
    conn.close()
    return {r - 1: -score for r, score in rows}


def test_contentless_scores_are_those_of_a_table_with_the_text() -> None:
    rng = random.Random(7)
    for _ in range(40):
        texts = [" ".join(rng.choices(WORDS, k=rng.randint(0, 300))) for _ in range(rng.randint(2, 31))]
        match = " OR ".join(f'"{w}"' for w in rng.sample(WORDS, rng.randint(1, 12)))
        want = with_text(texts, match)
        got = bm25_scores(texts, match)
        assert got == want and all(repr(got[i]) == repr(want[i]) for i in want)
        assert bm25_order(texts, match) == sorted(want, key=lambda i: (-want[i], i))
