"""The oracle's own words among the indexed headings, in SQL. Which headings are is
decided when a file is read (:mod:`arcology_oracle.notes.oracle_words`: the one rule of
every route) and kept in ``headings.oracle``; a turn is the oracle's
(:func:`oracle_turn_sql`) when the conversation reader named its speaker ``Oracle`` or a
grounded model spoke it (a gptel chat with ``llama3.2+notes``), or when it starts at a
heading with an assistant ``:ROLE:``.

The tests that hold subqueries are CASEs, not ORs and ANDs: SQLite computes both sides of
an OR or an AND whose value is a result column, so their correlated subqueries ran for
every row (each of /similar's ~100 nearest headings, each chunk of its candidate notes'
mean vectors), though almost no heading is a dialogue's. A CASE stops at its first true
WHEN (BENCHMARKS.md, issue 30, twenty-second round).
"""

from __future__ import annotations

from ..notes.chats import ORACLE
from ..notes.conversations import GROUNDED_SUFFIX, ORACLE_ROLES


def oracle_sql(alias: str = "") -> str:
    """SQL true for a heading row (of table ``alias``) whose own ``:ROLE:`` names the
    assistant."""
    column = f"{alias}.properties" if alias else "properties"
    roles = ", ".join(f"'{role}'" for role in sorted(ORACLE_ROLES))
    return f"lower(trim(json_extract({column}, '$.ROLE'), ' ' || char(9))) IN ({roles})"


def oracle_turn_sql(turn: str, at: str) -> str:
    """SQL true for a row of ``turns`` (alias ``turn``) that is the oracle's; ``at`` is
    the alias of the heading starting at the turn's first line (LEFT JOINed: may be NULL)."""
    return (
        f"(({at}.id IS NOT NULL AND {oracle_sql(at)}) OR {turn}.speaker = '{ORACLE}'"
        f" OR {turn}.speaker LIKE '%{GROUNDED_SUFFIX}' OR {turn}.speaker LIKE '%{GROUNDED_SUFFIX}:%')"
    )


def words_sql(alias: str) -> str:
    """SQL true for a heading row (of table ``alias``) that is the oracle's words."""
    return f"{alias}.oracle = 1"


def answer_sql(alias: str) -> str:
    """SQL true for a heading row (of table ``alias``) that /similar and /suggest-links
    leave out: the oracle's words (:func:`words_sql`), or a conversation's root whose turns
    (its scenes: notes/chats.py) hold some of the oracle's and whose chunks are all scenes:
    one that is the user's note too has its own text's chunks (:func:`own_text_sql`).
    0 or 1, never NULL; its subqueries run only for a heading that needs them (see the
    module docstring)."""
    return (
        f"(CASE WHEN {words_sql(alias)} THEN 1 WHEN EXISTS (SELECT 1 FROM turns t LEFT JOIN headings o"
        f" ON o.file = {alias}.file AND o.start_line = t.start_line"
        f" WHERE t.heading = {alias}.id AND {oracle_turn_sql('t', 'o')}) THEN NOT {own_text_sql(f'{alias}.id')}"
        " ELSE 0 END)"
    )


def users_chunk_sql(chunk: str, heading: str) -> str:
    """SQL true for a row of ``chunks`` (alias ``chunk``, of the heading row ``heading``)
    that is the user's words: not of a heading that is the oracle's words, and not a
    dialogue's scene holding a turn of the oracle's (a scene of a heading with text of its
    own besides, :func:`own_text_sql`, holds a grounded model's reply: none is). 0 or 1,
    never NULL; its subqueries run only for a scene (see the module docstring)."""
    return (
        f"(CASE WHEN {words_sql(heading)} THEN 0 WHEN {chunk}.first_turn IS NULL THEN 1"
        f" WHEN {own_text_sql(f'{chunk}.heading')} THEN 0"
        f" ELSE NOT EXISTS (SELECT 1 FROM turns t LEFT JOIN headings o ON o.file = {heading}.file"
        f" AND o.start_line = t.start_line WHERE t.heading = {chunk}.heading"
        f" AND t.ordinal BETWEEN {chunk}.first_turn AND {chunk}.last_turn AND {oracle_turn_sql('t', 'o')}) END)"
    )


def own_text_sql(heading: str) -> str:
    """SQL true when the heading of id ``heading`` (an SQL expression) has chunks of its
    own text, not only a dialogue's scenes: its first chunk is no scene. Every heading but
    a dialogue's root has, and a root that is the user's note holding a grounded reply
    (:func:`arcology_oracle.notes.oracle_words.without_replies`: its text's chunks first)."""
    return f"(SELECT o.first_turn FROM chunks o WHERE o.heading = {heading} ORDER BY o.id LIMIT 1) IS NULL"
