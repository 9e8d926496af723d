"""How many headings hold each word, remembered between queries.

``/similar`` lets notes that share the query's *rarest* words join its candidates
(``answers.similarity._keyword_candidates``), and needs each word's document count to know
which words are rare. FTS5 gives it (an ``fts5vocab`` table over ``headings_exact``), at
about 0.1 ms a word at 20k headings: 6 ms for a note's 64 words, more than the rest of
the query. Words come back (a note's vocabulary, the subjects one keeps returning to), so
:class:`WordCounts` remembers them, shared by every store of a database in the process.

Not invalidated by writes, unlike :mod:`.node_means`: a count only decides which of a
query's words are asked for (the rare ones first), never a score or a result, and an edit
moves a word's count by a few headings. A count that lags behind the notes costs at most
a slightly different choice of words. Bounded by :data:`MAX_WORDS` (least recently used
first out).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence

from .shared import PerDatabase

# ~100 bytes a word with the dict's overhead: ~10 MB at most.
MAX_WORDS = 100_000

# Lower-case ASCII letters and digits only: a word that headings_exact's tokenizer
# (unicode61, remove_diacritics 2) reads as exactly one term, itself.
_ONE_TERM = re.compile(r"[a-z0-9]+")


def surely_one_term(word: str) -> bool:
    """Whether ``word`` is, as the index's tokenizer reads it, one term equal to itself:
    then searching for it finds exactly the headings holding that term, and whether the
    vocabulary holds it need not be asked first (a lookup of ~20-35 µs a word at 100k
    headings, about half of what counting a query's new words cost). Any other word (an
    underscore splits it in two, a capital or an accent is folded) is asked of the
    vocabulary, where it counts only if it is a term as written."""
    return _ONE_TERM.fullmatch(word) is not None


class WordCounts:
    """Word -> number of headings holding it (0: none). Thread-safe."""

    def __init__(self, max_words: int = MAX_WORDS) -> None:
        self.max_words = max_words
        self._lock = threading.Lock()
        self._counts: OrderedDict[str, int] = OrderedDict()

    def lookup(self, words: Sequence[str]) -> tuple[dict[str, int], list[str]]:
        """``(counts found, words not cached)``."""
        found: dict[str, int] = {}
        missing: list[str] = []
        with self._lock:
            for word in words:
                count = self._counts.get(word)
                if count is None:
                    missing.append(word)
                else:
                    self._counts.move_to_end(word)
                    found[word] = count
        return found, missing

    def remember(self, counts: dict[str, int]) -> None:
        with self._lock:
            self._counts.update(counts)
            while len(self._counts) > self.max_words:
                self._counts.popitem(last=False)


_caches = PerDatabase(WordCounts)


def shared_counts(key: str) -> WordCounts:
    """The process's cache for database ``key`` (as ``vectors.shared_index``'s key)."""
    return _caches.get(key)
