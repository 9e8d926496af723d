"""Keyword terms for Chinese, Japanese and Korean text, which has no spaces between words.

FTS5's ``unicode61`` tokenizer makes a whole run of kanji and kana one token, so a
Japanese keyword matched nothing unless it was that whole run (often a clause). The
index therefore also keeps, for every heading holding CJK characters, the overlapping
character bigrams of each CJK run (a run of one character stays one term), separated by
spaces: most Japanese and Chinese words are one or two characters, and a longer word's
bigrams all occur wherever it does, so a query's bigrams, ranked by BM25, find the
headings that share its words -- the standard dictionary-free approach (Lucene's
CJKBigramFilter), language-independent, no model and no dictionary to ship.

Used on both sides: :func:`bigrams` for what is stored, :func:`query_bigrams` for what is
searched. Both are deterministic and cheap (a regex over the text, nothing at all for
text without CJK characters).
"""

from __future__ import annotations

import re
from collections import Counter

# The iteration and ideographic marks (々 in 人々, 〆, 〇); hiragana; katakana with the
# phonetic extensions and half-width forms (its middle dot ・ apart: a separator); CJK
# ideographs (unified, extension A, compatibility); Hangul syllables.
_MARKS = "\u3005-\u3007"
_HIRAGANA = "\u3040-\u309f"
_KATAKANA = "\u30a0-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_MIDDLE_DOT = "\u30fb"
_IDEOGRAPHS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HANGUL = "\uac00-\ud7af"
_KANA_KANJI_RANGES = _MARKS + _HIRAGANA + _KATAKANA + _MIDDLE_DOT + _IDEOGRAPHS
_RANGES = _KANA_KANJI_RANGES + _HANGUL
_RUN = re.compile(f"[{_RANGES}]+")
# Each term of a run as _run_terms gives it, in order: a bigram at every place two CJK
# characters start (a look-ahead, so they overlap), or a character standing alone.
_TERM = re.compile(f"(?=([{_RANGES}]{{2}}))|(?<![{_RANGES}])([{_RANGES}])(?![{_RANGES}])")
_ANY = re.compile(f"[{_RANGES}]")
_TOKEN = re.compile(r"\w+")
_SPLIT = re.compile(f"[{_RANGES}]+|[^{_RANGES}]+")
_LETTER_EDGE = re.compile(f"(?<=[A-Za-z])(?=[{_RANGES}])|(?<=[{_RANGES}])(?=[A-Za-z])")
_KANA_KANJI = re.compile(f"[{_KANA_KANJI_RANGES}]+")
_KANA = re.compile(f"[{_HIRAGANA}{_KATAKANA}]")


def has_cjk(text: str) -> bool:
    # isascii() reads a flag of the string (no scan): most notes' text is ASCII, and the
    # regex scanned every character of ~30 whole notes per /similar.
    return not text.isascii() and _ANY.search(text) is not None


def _run_terms(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def bigrams(text: str) -> str:
    """What the index keeps for the CJK in ``text``, space-separated, in order ('' if
    there is none): the bigrams of every CJK run, and the other words written against
    CJK characters (``Goでスライス``: ``go``), which unicode61 would glue to the run."""
    if not has_cjk(text):
        return ""
    out: list[str] = []
    for token in _TOKEN.findall(text):
        if _ANY.search(token) is None:
            continue
        for part in _SPLIT.findall(token):
            out.extend(_run_terms(part) if _ANY.match(part) else [part])
    return " ".join(out)


def with_bigrams(text: str) -> str:
    """``text`` followed by a newline and its :func:`bigrams` (``text`` alone when it has
    no CJK): what FTS5 should read of a text whose Japanese or Chinese words must count,
    as the index's columns give them."""
    terms = bigrams(text)
    return text + "\n" + terms if terms else text


def followed_by_bigrams(text: str, pieces: list[tuple[str, str | None]], limit: int) -> str:
    """``text`` (the ``pieces`` joined by newlines, cut at ``limit``) followed by a
    newline and its :func:`bigrams`, as :func:`with_bigrams` gives it. No CJK term spans a
    newline, so those are the bigrams of each piece in turn: the piece's own stored ones
    (the second of its pair, None for none) where given and the whole piece is kept."""
    found: list[str] = []
    start = 0
    for piece, stored in pieces:
        if start >= limit:
            break
        kept = piece if start + len(piece) <= limit else piece[: limit - start]
        terms = stored if stored is not None and kept is piece else bigrams(kept)
        if terms:
            found.append(terms)
        start += len(piece) + 1
    return text + "\n" + " ".join(found) if found else text


_HIRAGANA_ONLY = re.compile("[\u3040-\u309f]+")


def only_hiragana(term: str) -> bool:
    """Whether ``term`` is hiragana alone (in Japanese mostly particles and endings)."""
    return _HIRAGANA_ONLY.fullmatch(term) is not None


def content_bigrams(text: str) -> list[str]:
    """Every bigram of the CJK runs of ``text`` but those of hiragana alone, with
    repeats, in order (see :func:`query_bigrams` for why hiragana is left out)."""
    if not has_cjk(text):
        return []
    return [t for run in _RUN.findall(text) for t in _run_terms(run) if not _HIRAGANA_ONLY.fullmatch(t)]


def count_content_bigrams(counts: Counter[str], text: str) -> None:
    """Add :func:`content_bigrams` of ``text`` to ``counts`` (new ones in order of first
    appearance), found and counted in C and each distinct bigram tested for hiragana
    once: whole notes of Japanese hold tens of thousands of bigrams, mostly repeats."""
    if not has_cjk(text):
        return
    new = Counter(map("".join, _TERM.findall(text)))
    for term in [t for t in new if _HIRAGANA_ONLY.fullmatch(t)]:
        del new[term]
    counts.update(new)


# Kanji and katakana (not its middle dot): what Japanese writes its nouns and stems in,
# and all of Chinese. Hangul is not here: Korean writes spaces between its words.
_NOUN_RUN = re.compile(f"[{_MARKS}{_KATAKANA}{_IDEOGRAPHS}]+")


def noun_terms(text: str) -> set[str]:
    """The bigrams of each run of kanji and katakana in ``text`` (a run of one character is
    itself a term): Japanese writes its particles and endings in hiragana, which splits
    such runs, so these are its nouns and stems ("猫の餌": 猫, 餌) and not the pairs that
    span an ending that changes with the sentence ("作り方" and "作る" share only 作).
    What two texts in Japanese or Chinese must share to be on one subject."""
    if not has_cjk(text):
        return set()
    return {t for run in _NOUN_RUN.findall(text) for t in _run_terms(run)}


def has_kana(text: str) -> bool:
    """Whether ``text`` holds hiragana or katakana: Japanese, not Chinese."""
    return not text.isascii() and _KANA.search(text) is not None


def strip_nouns(text: str) -> str:
    """``text`` with its kana and kanji (what :func:`noun_terms` reads) replaced by spaces."""
    return text if text.isascii() else _KANA_KANJI.sub(" ", text)


def query_bigrams(text: str, limit: int = 64, *, content_only: bool = True) -> list[str]:
    """The distinct bigrams of the CJK runs of a query, in order, at most ``limit``.

    With ``content_only``, bigrams of hiragana alone are left out when there are others:
    in Japanese they are mostly particles and verb endings (``の``, ``ている``), which
    every note holds, while content words are written in kanji and katakana (a query of
    nothing but hiragana keeps them all). That keeps long OR queries (similar notes)
    short; ``/search`` keeps them, since BM25 weighs them by rarity anyway.
    """
    terms: dict[str, None] = {}
    for run in _RUN.findall(text):
        for term in _run_terms(run):
            terms.setdefault(term, None)
    content = [t for t in terms if not _HIRAGANA_ONLY.fullmatch(t)] if content_only else []
    return (content or list(terms))[:limit]


def set_apart(text: str) -> str:
    """``text`` with a space between each Latin letter and a CJK character written against
    it ("last weekに"), so that the letters are a word to a pattern that looks for its
    edges. Digits stay against it: "2000年問題" is no year 2000."""
    return text if text.isascii() else _LETTER_EDGE.sub(" ", text)


def strip_cjk(text: str) -> str:
    """``text`` with its CJK runs replaced by spaces (what the word tokenizer should see)."""
    return text if text.isascii() else _RUN.sub(" ", text)
