"""Who wrote a heading: the user's notes, a conversation with the oracle, or the oracle.

A result's ``role`` (``/search``, ``/similar``...) is ``"oracle"`` for the oracle's own
answers (``:ROLE: oracle`` or another assistant role, as
:func:`~arcology_oracle.notes.conversations.render_answer` writes), ``"conversation"``
for the other turns of a conversation (a heading whose ``:ROLE:`` names the user, or a
sibling of an oracle answer: the turns are the children of the conversation's root) and
for the root itself (its chunks are the conversation's scenes, answers included:
:mod:`arcology_oracle.notes.chats`; so is any dialogue's root holding the oracle's turns, a
grounded gptel chat's file record), None for a note. Clients mark the first two; /similar and /suggest-links never return
the oracle's answers.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..notes.conversations import ORACLE_ROLES, USER_ROLES
from ..store import Store

ORACLE = "oracle"
CONVERSATION = "conversation"


def roles_of(store: Store, rows: Iterable[dict]) -> dict[int, str | None]:
    """``{heading id: role}`` for the heading ``rows`` (see the module docstring): one
    query for their files, one more per file that holds a ``:ROLE:`` property. What is
    the oracle's is decided by :meth:`~arcology_oracle.store.Store.oracle_words`, as for
    every other route (an answer marked by its tag or title, headings below an answer)."""
    rows = list(rows)
    oracle = store.oracle_words(row["id"] for row in rows)
    # A dialogue's root whose turns hold some of the oracle's (a gptel chat's file record,
    # a heading of "Me:"/"Oracle:" paragraphs) has no :ROLE: to say so: its chunks do.
    holding = store.oracle_headings(row["id"] for row in rows) - oracle
    outlines = store.role_outlines(row["file"] for row in rows)
    by_file: dict[str, dict[int, str]] = {path: conversation_lines(outline) for path, outline in outlines.items()}
    return {
        row["id"]: ORACLE if row["id"] in oracle
        else by_file.get(row["file"], {}).get(row["start_line"]) or (CONVERSATION if row["id"] in holding else None)
        for row in rows
    }  # fmt: skip


def conversation_lines(outline: list[tuple[int, int, str, bool]]) -> dict[int, str]:
    """``{start line: role}`` of the headings of one file's ``(start line, level,
    role, kept)`` outline that are not the user's notes (see the module docstring). The
    oracle's words kept by ``/memorize`` are the oracle's, but in no conversation: the
    headings beside them in a daily note stay the user's."""
    parents: list[int | None] = []
    stack: list[tuple[int, int]] = []  # (level, index)
    for i, (_, level, _, _) in enumerate(outline):
        while stack and stack[-1][0] >= level:
            stack.pop()
        parents.append(stack[-1][1] if stack else None)
        stack.append((level, i))
    roots = {parents[i] for i, (_, _, role, kept) in enumerate(outline) if role in ORACLE_ROLES and not kept}
    out: dict[int, str] = {}
    for i, (line, _, role, _) in enumerate(outline):
        if role in ORACLE_ROLES:
            out[line] = ORACLE
        elif role in USER_ROLES or i in roots or (parents[i] in roots and parents[i] is not None):
            out[line] = CONVERSATION
    return out
