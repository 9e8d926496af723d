"""/similar for a section: the notes whose own words the section holds rank above a long
note that merely holds the section's words somewhere (:mod:`arcology_oracle.answers.held_words`).

Real org files, real SQLite, the fake Ollama (hashed bags of words).
"""

from __future__ import annotations

import uuid
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from arcology_oracle.answers.held_words import held_shares, note_words, words_of
from arcology_oracle.answers.search import similar_to_line, similar_to_text
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.notes import cjk
from arcology_oracle.store.note_changes import digest


def note(title: str, body: str) -> str:
    node = uuid.uuid5(uuid.NAMESPACE_URL, title)
    return f":PROPERTIES:\n:ID:       {node}\n:END:\n#+title: {title}\n\n{body}\n"


SECTION = "* Black spot\nBlack spot on the rose leaves again: spray the copper fungicide in spring.\n"
# A journal of the whole garden: every word of the section somewhere, among many others.
JOURNAL = "\n".join(
    f"* {day}\n{entry}"
    for day, entry in [
        ("March", "Pruned the rose bushes; the leaves are coming. Spring feed on the lawn and the hedge."),
        ("April", "Black spot on the rose leaves again: spray in spring. Sowed tomatoes."),
        ("May", "Compost turned, beans staked, the pond pump cleaned, the shed painted green."),
        ("June", "Strawberries netted; the rose arch repaired; slugs on the lettuce after the rain."),
    ]
)
FILES = {
    "roses.org": note("Roses", "Climbing and shrub roses in the front garden.\n\n" + SECTION),
    "journal.org": note("Garden journal", JOURNAL),
    # What the section's author would link: a short note on what the section uses (its
    # title is not in the section, so that the section does not name it: see mentions).
    "copper.org": note("Sprays", "Copper fungicide: a copper fungicide, copper."),
    "tomatoes.org": note("Tomatoes", "Brown leaves on the tomato plants; water at the base."),
    "cycling.org": note("Cycling", "Chain oil, tyre pressure and a spare tube for the long rides."),
    "chess.org": note("Chess openings", "The Sicilian and the French defence, and when to castle."),
}


def test_held_shares_weigh_a_notes_own_words_not_its_length():
    """A short note all of whose words the query holds scores above a long one holding
    the same words among many others; a note sharing no word scores 0."""
    query = "black spot on the rose leaves: spray the copper fungicide"
    short, long_, other = held_shares(query, [words_of(text) for text in [
        "copper fungicide against black spot",
        "black spot rose leaves spray copper fungicide " + "compost beans pond pump shed lettuce " * 5,
        "tyre pressure chain oil",
    ]])  # fmt: skip
    assert short > long_ > other == 0.0


def test_a_notes_counts_last_one_write_generation():
    """A note's counts are kept for the write generation they were read in (the caller
    promises the same note's text is the same under one token) and counted anew under the
    next, as after an edit; texts of no note, and reads inside a transaction (no token),
    are never kept."""
    first = note_words(["copper fungicide, copper", "tyre pressure"], ["node-a", None], "gen-1")
    again = note_words(["(not read: remembered)", "chain oil"], ["node-a", None], "gen-1")
    assert again[0] is first[0] and first[0] == Counter({"copper": 2, "fungicide": 1})
    assert again[1] == Counter({"chain": 1, "oil": 1})  # a text of no note is counted each time
    edited = note_words(["tomato blight"], ["node-a"], "gen-2")
    assert edited[0] == Counter({"tomato": 1, "blight": 1})
    in_transaction = note_words(["spelt flour"], ["node-b"], None)
    assert note_words(["rye flour"], ["node-b"], None) != in_transaction


def test_a_notes_counts_outlive_a_write_of_other_notes():
    """Under a new generation of the headings, the counts of the notes the writes since
    did not change are served as they were (the first section query after a save
    counted every candidate again: BENCHMARKS.md, issue 29, eighteenth round); those of
    the note changed are counted anew, and all of them when the change is not known."""
    changes = {"gen-1": {digest("node-c")}, "gen-2": None}
    changed = changes.get
    first = note_words(["copper fungicide", "tyre pressure"], ["node-c", "node-d"], "gen-1")
    after = note_words(["tomato blight", "(not read: remembered)"], ["node-c", "node-d"], "gen-2", changed)
    assert after[1] is first[1] and after[0] == Counter({"tomato": 1, "blight": 1})
    unknown = note_words(["spelt flour"], ["node-d"], "gen-3", changed)
    assert unknown[0] == Counter({"spelt": 1, "flour": 1})


async def test_a_section_finds_the_note_on_what_it_treats_before_a_long_note_holding_its_words(
    make_settings, tmp_path, fake_ollama
):
    """By file and line and by its text, the section on black spot finds the short note on
    the copper fungicide it sprays first: the garden journal holds more of the section's
    words (one of its days almost all of them), but the section holds the other note's
    own words. Without held_words the journal came first on both routes."""
    roam = tmp_path / "garden-roam"
    roam.mkdir()
    for name, text in FILES.items():
        (roam / name).write_text(text, encoding="utf-8")
    idx = OracleIndex(make_settings(roam_dir=roam, ollama_host=fake_ollama.url))
    await idx.start()
    try:
        await idx.reconcile()
        await idx.embed_pending()
        line = FILES["roses.org"].splitlines().index("* Black spot") + 1
        _, by_line = await similar_to_line(idx, "roses.org", line, k=5, keep_all=True)
        _, by_text = await similar_to_text(idx, SECTION, k=5, path="roses.org", line=line, keep_all=True)
    finally:
        await idx.close()
    for found in (by_line, by_text):
        assert [r.file for r in found][:2] == ["copper.org", "journal.org"], found



def test_a_notes_bigrams_are_counted_as_content_bigrams_gives_them():
    # Whole notes of Japanese are counted in C (cjk.count_content_bigrams): the same
    # counts, in the same order of first appearance (most_common's ties), as
    # content_bigrams gives them one by one.
    texts = [
        "味噌汁の作り方\n昆布と鰹節で出汁を取ってから、火を止めて味噌を溶かし入れる。味噌汁",
        "Goでスライスを使う。スライスの長さと容量\nひらがなだけのぶんしょう。あ",
        "plain English only, words words",
        "混ざった text と English の words ア 一",
        "中文的句子没有空格，中文。한국어 문장도 있다",
        "",
    ]
    for text in texts:
        expected = Counter(cjk.content_bigrams(text))
        got = Counter({"first": 1})
        cjk.count_content_bigrams(got, text)
        assert got == expected + Counter({"first": 1}), text
        assert list(got) == ["first", *expected], text


@given(st.text(alphabet="味噌汁の作りアイ々一あいうゝ한국 ab,。・\n", max_size=40))
def test_any_text_s_bigrams_are_counted_as_content_bigrams_gives_them(text):
    got = Counter()
    cjk.count_content_bigrams(got, text)
    assert list(got.items()) == list(Counter(cjk.content_bigrams(text)).items())
