"""The oracle's own words among the indexed headings, in SQL: the one rule that /similar,
/suggest-links, /search's ``role``, /ask's evidence and summaries all apply.

A heading is the oracle's when

* its ``:ROLE:`` names the assistant (:data:`~arcology_oracle.notes.conversations.ORACLE_ROLES`,
  any letter case, blanks around it ignored), as the daemon writes its answers and the
  words ``/memorize`` keeps with ``role: oracle``;
* the conversation reader (:mod:`arcology_oracle.notes.chats`) made it the start of an
  ``Oracle`` turn: in a conversation, an answer marked only by the ``:oracle:`` tag or an
  ``Oracle...`` title is the oracle's as much as one with ``:ROLE: oracle``;
* it is below such a heading, the file included (a ``:ROLE: oracle`` in the file's
  drawer): "headings below a turn belong to it", as the conversation reader reads them.

A turn is the oracle's (:func:`oracle_turn_sql`) when that reader named its speaker
``Oracle`` or a grounded model spoke it (a gptel chat with ``llama3.2+notes``), or when
it starts at a heading with an assistant ``:ROLE:``.
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


def _own_sql(alias: str) -> str:
    """SQL true for a heading the oracle wrote itself (first two points of the module
    docstring)."""
    return (
        f"({oracle_sql(alias)} OR EXISTS (SELECT 1 FROM headings r{alias} JOIN turns t{alias} ON t{alias}.heading = r{alias}.id"
        f" WHERE r{alias}.file = {alias}.file AND r{alias}.id <> {alias}.id AND t{alias}.start_line = {alias}.start_line"
        f" AND t{alias}.speaker = '{ORACLE}'))"
    )


def words_sql(alias: str) -> str:
    """SQL true for a heading row (of table ``alias``) that is the oracle's words (see the
    module docstring): its own, or one below a heading of the oracle's."""
    a, b = f"{alias}_up", f"{alias}_between"
    return (
        f"({_own_sql(alias)} OR EXISTS (SELECT 1 FROM headings {a} WHERE {a}.file = {alias}.file"
        f" AND {a}.start_line < {alias}.start_line AND {a}.level < {alias}.level AND {_own_sql(a)}"
        f" AND NOT EXISTS (SELECT 1 FROM headings {b} WHERE {b}.file = {a}.file AND {b}.start_line > {a}.start_line"
        f" AND {b}.start_line < {alias}.start_line AND {b}.level <= {a}.level)))"
    )


def answer_sql(alias: str) -> str:
    """SQL true for a heading row (of table ``alias``) that /similar and /suggest-links
    leave out: the oracle's words (:func:`words_sql`), or a conversation's root whose turns
    (its scenes: notes/chats.py) hold some of the oracle's."""
    return (
        f"({words_sql(alias)} OR EXISTS (SELECT 1 FROM turns t LEFT JOIN headings o"
        f" ON o.file = {alias}.file AND o.start_line = t.start_line"
        f" WHERE t.heading = {alias}.id AND {oracle_turn_sql('t', 'o')}))"
    )
