"""Notes the query names: org-roam's unlinked references, a signal of the order and the
score of /similar and /suggest-links.

A person who writes another note's title in a note, without linking it, is talking about
that note; org-roam shows such places as "unlinked references" for that reason. On real
notes with their links taken out (three collections, the top 50 of /similar by note and
by section), 33-67% of the results whose note the query's text named had been linked,
against 2-10% of all the results (BENCHMARKS.md, "Retrieval across granularities",
seventh round). The embedding model reads a title as a few words among many, and the
word re-ranking weighs each of its words apart, so neither sees that the words are a
name.

What counts is what the author wrote (:func:`own_words`): the query's headings' titles
and text with their links to notes taken out (not the oracle's words: its answers, a
grounded chat's replies, :func:`own_words_of`), and for a section the titles above it
(its note's, its outline path), but not its tags or aliases. A note the query links to is never named (a link is no unlinked
reference, and the measure above had none), nor are the query's own note and the notes
enclosing it, nor a note by a name that is one of theirs (another note titled as the
query's is not named by its title).

So a result whose note the query names moves up the order (:mod:`.moves`):
``SECTION_PLACES`` for a heading's text, ``NOTE_PLACES`` for a whole note's. A whole note
names many things in passing, and its order already has the note's every word, its days
and its links behind it: moving named notes as far as for a section cost MRR by note on
the notes measured, while the sections gained most. ``named`` is also a feature of a
result's calibrated score (:mod:`.relevance`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..notes import cjk
from ..notes.conversations import is_oracle_answer
from ..notes.oracle_words import own_body
from ..notes.org_syntax import without_note_links
from ..store import Store
from . import retrieval

# Places a named result moves up: for a section's text (?file=&line=, a heading's
# suggestions, POST /similar of a section), for a whole note's (?node=, a note's).
SECTION_PLACES = 20.0
NOTE_PLACES = 8.0
# Shorter names ("Go", "C") are words more often than they are names.
MIN_NAME_CHARS = 3
# Names are looked for in this much of the query's text: a name found inside longer
# words thousands of times costs a scan of it per result (~1 ms for 200,000 characters;
# a posted buffer may hold 1,000,000).
MAX_TEXT_CHARS = 200_000
# A name found this many times inside longer words is looked for no further: a word
# part, not a name (and each try is a scan of the rest of the text).
MAX_TRIES = 64
# Between the parts of the query's own words: no name runs from one into the next.
_APART = " | "


@dataclass(frozen=True, slots=True)
class Naming:
    """What decides which notes a query names (:func:`named`): its :func:`own_words`,
    its own note with the notes enclosing it (``own``), and the notes it links to
    (``linked``)."""

    words: str = ""
    own: frozenset[str] = frozenset()
    linked: frozenset[str] = frozenset()

    def named(self, store: Store, results: Sequence[retrieval.Result]) -> set[str]:
        """The node ids among ``results`` this query names (:func:`named`)."""
        return named(store, self.words, results, self.own, self.linked)


def own_words(headings: Iterable[tuple[str, str, dict[str, str]]], above: Sequence[str] = ()) -> str:
    """The words of ``headings``, each ``(title, raw body, properties)``, that can name a
    note: the titles and bodies with their links to notes and keyword lines taken out
    (:func:`~arcology_oracle.notes.org_syntax.without_note_links`), after the titles
    ``above`` them (a section's note and outline path), each kept apart. The oracle's own
    answers in a conversation (``:ROLE: oracle``) are left out: not the author's words,
    as their links are not the author's links."""
    parts = [*above]
    for title, body, properties in headings:
        if not is_oracle_answer(properties):
            parts += [title, without_note_links(body)]
    return _APART.join(parts)


def own_words_of(store: Store, rows: Sequence[dict], above: Sequence[str] = ()) -> str:
    """:func:`own_words` of stored heading ``rows`` (with ``id``, ``title``, ``body``,
    ``properties``, ``oracle`` and their lines): those the index keeps as the oracle's
    words (a grounded chat's reply, an answer and the headings below it: the one rule of
    :mod:`arcology_oracle.notes.oracle_words`) left out, whatever their properties say,
    and a heading of the user's holding a grounded reply read without the reply's lines,
    as the index keeps its text (:meth:`~arcology_oracle.store.Store.replies_held`). A
    reply names notes as the user's words do, but the user did not name them."""
    replies = store.replies_held(rows)
    return own_words(
        ((r["title"], own_body(r["body"], r["end_line"], replies.get(r["id"], ())), r["properties"])
         for r in rows if not r.get("oracle")),
        above=above,
    )  # fmt: skip


def titles_above(row: dict) -> list[str]:
    """The titles above heading ``row`` that are its author's words: its note's title and
    its outline path."""
    return [row["node_title"], *row["olp"]]


def named(
    store: Store, text: str, results: Sequence[retrieval.Result], own: Iterable[str | None] = (),
    linked: Iterable[str] = (),
) -> set[str]:
    """The node ids among ``results`` whose title or one of whose aliases the first
    ``MAX_TEXT_CHARS`` of ``text`` (the query's :func:`own_words`) hold as a phrase
    (:func:`holds`). ``own``: the query's node and the nodes enclosing it, never named,
    and whose names are no other note's: the text holds them (a title, an outline path).
    ``linked``: the notes the query links to, never named (a title in a heading is
    stored as its link's description)."""
    own = {node_id for node_id in own if node_id}
    node_ids = sorted({r.node_id for r in results if r.node_id} - own - set(linked))
    if not node_ids or not text:
        return set()
    names = store.node_names([*node_ids, *own])
    own_names = {fold(name) for node_id in own for name in names.pop(node_id, [])}
    folded = fold(text[:MAX_TEXT_CHARS])
    return {
        node_id
        for node_id, each in names.items()
        if any(holds(folded, name) for name in {fold(n) for n in each} - own_names)
    }


def places(names: set[str], note_query: bool) -> dict[str, float]:
    """How many places each named note moves up (the module docstring)."""
    by = NOTE_PLACES if note_query else SECTION_PLACES
    return dict.fromkeys(names, by)


def fold(text: str) -> str:
    """``text`` in Unicode's composed form (NFC: an accent typed apart or composed is the
    same), case-folded, each run of white space one space, trimmed."""
    return retrieval.collapsed(unicodedata.normalize("NFC", text).casefold())


def holds(folded_text: str, folded_name: str) -> bool:
    """Whether ``folded_text`` holds ``folded_name`` (both :func:`fold`-ed, the name at
    least ``MIN_NAME_CHARS`` long) not inside a longer word: where the name begins or
    ends with a letter or digit, the character beyond it is none. CJK characters have no
    such boundary (Japanese writes no spaces), so a name is found inside a run of them.
    After ``MAX_TRIES`` places inside longer words, no."""
    if len(folded_name) < MIN_NAME_CHARS:
        return False
    start = folded_text.find(folded_name)
    for _ in range(MAX_TRIES):
        if start < 0:
            return False
        end = start + len(folded_name)
        if not (_joins(folded_name[0], folded_text[start - 1] if start else "")
                or _joins(folded_name[-1], folded_text[end] if end < len(folded_text) else "")):  # fmt: skip
            return True
        start = folded_text.find(folded_name, start + 1)
    return False


def _joins(edge: str, beyond: str) -> bool:
    """Whether ``beyond``, next to a name's ``edge`` character, makes the two one word:
    both letters, digits or ``_``, and neither CJK (see :func:`holds`)."""
    return bool(beyond) and _wordy(edge) and _wordy(beyond) and not cjk.has_cjk(edge + beyond)


def _wordy(char: str) -> bool:
    return char.isalnum() or char == "_"
