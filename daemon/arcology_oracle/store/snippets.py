"""The snippet of a keyword hit: FTS5's ``snippet()`` of a heading's text, or for a very
long text a window found here.

FTS5's ``snippet()`` costs about the square of the matches a text holds: in a 5.7 MB
heading holding "rye" 50,000 times it took 39 s, a search of two words 150 s, during
which the search held one of the daemon's readers. Past :data:`SNIPPET_MAX_CHARS` the
statement leaves the snippet NULL (``CASE`` evaluates one branch) and
:func:`with_long_snippets` finds the window around the first phrase matched.
"""

from __future__ import annotations

import json
import re

from .db import sqlite

# snippet() of the body column: no highlight marks, an ellipsis, about 16 tokens.
SNIPPET_ARGS = "2, '', '', ' … ', 16"
SNIPPET_MAX_CHARS = 100_000
SNIPPET_SQL = f"CASE WHEN length(text) > {SNIPPET_MAX_CHARS} THEN NULL ELSE snippet(headings_fts, {SNIPPET_ARGS}) END"
_PHRASE = re.compile(r'"((?:[^"]|"")+)"')


def with_long_snippets(conn: sqlite.Connection, match: str, snippets: dict[int, str | None]) -> dict[int, str | None]:
    """``snippets`` (heading id -> :data:`SNIPPET_SQL`'s value), those a long text left
    NULL made by :func:`long_snippet`."""
    long = [i for i, snippet in snippets.items() if snippet is None]
    if long:
        for heading_id, text in conn.execute(
            "SELECT id, text FROM headings WHERE id IN (SELECT value FROM json_each(?))"
            f" AND length(text) > {SNIPPET_MAX_CHARS}",
            (json.dumps(long),),
        ):
            snippets[heading_id] = long_snippet(text, match)
    return snippets


def long_snippet(text: str, match: str, before: int = 60, after: int = 100) -> str | None:
    """A window of ``text`` around the first place it holds a phrase of the FTS5
    ``match`` (quoted, as ``retrieval.fts_query`` writes it), in any letter case, shaped
    as snippet() shapes one (" … " where it does not reach an end); None when it holds
    none as written (a stemmed form only: the text's start stands in)."""
    first = None
    for phrase in _PHRASE.findall(match):
        found = re.search(re.escape(phrase.replace('""', '"')), text, re.IGNORECASE)
        if found and (first is None or found.start() < first):
            first = found.start()
    if first is None:
        return None
    start, end = max(0, first - before), min(len(text), first + after)
    return (" … " if start > 0 else "") + text[start:end] + (" … " if end < len(text) else "")
