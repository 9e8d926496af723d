"""How many headings hold each word (store/word_counts.py): counted by FTS5 on a real
index, exact words not stems, remembered for the process and bounded."""

from __future__ import annotations

import pytest

from arcology_oracle.index.service import OracleIndex
from arcology_oracle.store.word_counts import WordCounts, shared_counts

NOTES = {
    "a.org": "#+title: Poolish\n* Mixing\nA poolish is a wet preferment.\n"
    "* Timing\nMake the poolish the night before.\n",
    "b.org": "#+title: Autolyse\nRest flour and water; then add the poolish.\n",
    "c.org": "#+title: Tomatoes\nWater at the base.\n",
}


@pytest.fixture
async def idx(tmp_path, make_settings):
    """An index of NOTES alone, reconciled."""
    roam = tmp_path / "word-roam"
    roam.mkdir()
    for name, text in NOTES.items():
        (roam / name).write_text(text, encoding="utf-8")
    index = OracleIndex(make_settings(roam_dir=roam))
    await index.start()
    await index.reconcile()
    yield index
    await index.close()


async def test_counts_are_headings_holding_the_exact_word(idx):
    counts = await idx.read(lambda s: s.word_counts(["poolish", "water", "preferment", "waters", "brioche"], 10))
    # "poolish": all three of a.org's rows (the file's own and its two headings, whose
    # context holds the title) and b.org's one.
    assert counts == {"poolish": 4, "water": 2, "preferment": 1, "waters": 0, "brioche": 0}
    # Remembered for every store of the database (the reader pool's threads each have
    # their own): asked again, only the new word is read from the index.
    again = await idx.read(lambda s: shared_counts(s._shared_key()).lookup(["poolish", "brioche", "crumb"]))
    assert again == ({"poolish": 4, "brioche": 0}, ["crumb"])


async def test_counts_stop_at_the_cap_and_a_word_of_two_terms_counts_none(idx):
    """Only which words are rare matters: a count is read no further than ``at_most``.
    A word the index holds as two terms ("wet_preferment": "wet", "preferment", side by
    side in a.org) counts 0, as in FTS5's vocabulary, not as the phrase it would match."""
    counts = await idx.read(lambda s: s.word_counts(["poolish", "water", "wet_preferment", "preferment"], 2))
    assert counts == {"poolish": 2, "water": 2, "wet_preferment": 0, "preferment": 1}


async def test_a_word_the_tokenizer_folds_counts_none(idx):
    """Only plain lower-case ASCII words skip the vocabulary (store/word_counts.py,
    ``surely_one_term``): a search for "préferment" or "Water" would find "preferment" and
    "water" (the tokenizer drops accents and folds case), but neither is a term as
    written, so each counts 0, as in the vocabulary."""
    counts = await idx.read(lambda s: s.word_counts(["préferment", "Water", "water2", "2"], 10))
    assert counts == {"préferment": 0, "Water": 0, "water2": 0, "2": 0}


def test_the_least_recently_used_words_go_first():
    cache = WordCounts(max_words=2)
    cache.remember({"a": 1, "b": 2})
    assert cache.lookup(["a"]) == ({"a": 1}, [])  # "a" is now the most recent
    cache.remember({"c": 3})
    assert cache.lookup(["a", "b", "c"]) == ({"a": 1, "c": 3}, ["b"])
