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
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from ..notes import cjk
from .retrieval import STOPWORDS, WORD

# BM25's term-frequency saturation (k1), as the index's FTS5 ranks.
K1 = 1.2


def words_of(text: str) -> Counter[str]:
    """``text``'s words as the re-ranking reads them (:func:`.similarity.frequent_words`,
    every one): lower-case words of three letters or more but stopwords, and CJK bigrams."""
    counts = Counter(w for w in WORD.findall(cjk.strip_cjk(text).lower()) if len(w) > 2 and w not in STOPWORDS)
    cjk.count_content_bigrams(counts, text)
    return counts


def held_shares(query: str, texts: Sequence[str]) -> list[float]:
    """For each of ``texts`` (the candidate notes'), the rarity-weighted share of its
    words that ``query`` holds (see the module docstring): 0 for a text sharing no word."""
    asked = words_of(query)
    bags = [words_of(text) for text in texts]
    held_by: Counter[str] = Counter(asked.keys())
    for bag in bags:
        held_by.update(bag.keys())
    n = len(bags) + 1

    def weight(word: str) -> float:
        rarity = math.log(1 + (n - held_by[word] + 0.5) / (held_by[word] + 0.5))
        return rarity * asked[word] * (K1 + 1) / (asked[word] + K1)

    out = []
    for bag in bags:
        total = sum(bag.values())
        out.append(sum(count * weight(w) for w, count in bag.items() if w in asked) / total if total else 0.0)
    return out
