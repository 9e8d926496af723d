"""How much of each candidate note's own vocabulary a section holds: the third word
signal of the re-ranking of similar notes for a section or a text that is not a whole
note (:func:`.similarity._rerank_by_words`).

The re-ranking's whole-note BM25 asks whether the query's words are in the candidate. For
a section, a few lines, that favours long notes: a chapter or a journal holds any few
words somewhere. The reverse asks whether the section talks about what the candidate is
about, which is where a person writes a link: each of the candidate's words weighs its
share of the candidate's words (what the note is about, whatever its length), times its
rarity among the candidates and the query (a word every candidate holds says nothing
about which to prefer), times how often the section uses it (saturating as BM25's term
frequency does). Measured with MiniLM on three corpora (BENCHMARKS.md, Retrieval across
granularities, twelfth round), section link prediction recall@10 / MRR, by file and line
then by text: the Info manuals 0.666 / 0.420 -> 0.717 / 0.465 and 0.668 / 0.411 -> 0.718 /
0.459; English notes 0.532 / 0.470 -> 0.548 / 0.476 and 0.533 / 0.476 -> 0.551 / 0.484;
Japanese notes 0.536 / 0.372 -> 0.557 / 0.372 and 0.539 / 0.369 -> 0.560 / 0.369.
For whole notes it cost MRR on two corpora of three, so they keep the two BM25s alone.

Counting a candidate's words is most of the cost (~55 ms a section of Japanese notes, whose
candidates are read whole with their bigrams), and as point moves through a note the same
candidates come back: :func:`note_words` remembers each note's counts until a write
changes the note, as its text is remembered (:mod:`~arcology_oracle.store.note_text_cache`).
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Callable, Collection, Sequence

from ..notes import cjk
from ..store.generation_cache import GenerationCache
from .retrieval import STOPWORDS, WORD

# BM25's term-frequency saturation (k1), as the index's FTS5 ranks.
K1 = 1.2
# The word counts of ~120 sections' candidates of Japanese notes (a count takes ~100 bytes
# a distinct word with its string), as the note texts' cache holds ~120 queries' texts.
MAX_BYTES = 16 * 1024 * 1024


def words_of(text: str) -> Counter[str]:
    """``text``'s words as the re-ranking reads them (:func:`.similarity.frequent_words`,
    every one): lower-case words of three letters or more but stopwords, and CJK bigrams."""
    counts = Counter(w for w in WORD.findall(cjk.strip_cjk(text).lower()) if len(w) > 2 and w not in STOPWORDS)
    cjk.count_content_bigrams(counts, text)
    return counts


def _size(bag: Counter[str] | None) -> int:
    return 0 if bag is None else sys.getsizeof(bag) + 100 * len(bag)


_remembered: GenerationCache[str, Counter[str]] = GenerationCache(MAX_BYTES, _size, note_of=str)


def note_words(
    texts: Sequence[str],
    notes: Sequence[str | None],
    token: str | None,
    changed: Callable[[str | None], Collection[str] | None] | None = None,
) -> list[Counter[str]]:
    """:func:`words_of` each of ``texts``, the text of the note ``notes`` names at the same
    place (its ``retrieval.note_key``; None: a text of no note), as read after the
    generation of the headings ``token`` (the store's ``nodes_generation``; None: read
    inside a transaction, which may see its own writes). Counts of a note are remembered
    until a write changes it, as ``changed`` (the store's ``notes_changed_since``) tells,
    or every count at a new token without it
    (:class:`~arcology_oracle.store.generation_cache.GenerationCache`: one generation at a
    time, so two databases in one process take turns) and must not be changed by the
    caller."""
    if token is None:
        return [words_of(text) for text in texts]
    found, _ = _remembered.lookup(token, [note for note in notes if note is not None], changed)
    bags = [found.get(note) if note is not None else None for note in notes]
    new: dict[str, Counter[str]] = {}
    for i, (text, note) in enumerate(zip(texts, notes)):
        if bags[i] is None:
            bags[i] = words_of(text)
            if note is not None:
                new[note] = bags[i]
    if new:
        _remembered.remember(token, new)
    return bags  # type: ignore[return-value]


def held_shares(query: str, bags: Sequence[Counter[str]]) -> list[float]:
    """For each of ``bags`` (the candidate notes' :func:`words_of`), the rarity-weighted
    share of its words that ``query`` holds (see the module docstring): 0 for a note
    sharing no word. Reads only the query's words in each bag: what it costs beyond
    counting the bags grows with the query, not with the candidates' length."""
    asked = words_of(query)
    n = len(bags) + 1
    weights: dict[str, float] = {}
    for word, times in asked.items():
        held_by = 1 + sum(1 for bag in bags if word in bag)  # the query holds it too
        rarity = math.log(1 + (n - held_by + 0.5) / (held_by + 0.5))
        weights[word] = rarity * times * (K1 + 1) / (times + K1)
    out = []
    for bag in bags:
        total = bag.total()
        out.append(sum(bag[w] * weight for w, weight in weights.items() if w in bag) / total if total else 0.0)
    return out
