"""Which headings of a file are the oracle's words, not the user's notes: the one rule
that ``/similar``, ``/suggest-links``, ``/search``'s ``role``, ``/ask``'s evidence and
summaries all apply, decided once when the file is read (the store keeps it as
``headings.oracle``).

A heading is the oracle's when

* its ``:ROLE:`` names the assistant (:data:`~.conversations.ORACLE_ROLES`, any letter
  case, blanks around it ignored), as the daemon writes its answers and the words
  ``/memorize`` keeps with ``role: oracle``;
* the conversation reader (:mod:`.chats`) made it the start of an ``Oracle`` turn: in a
  conversation, an answer marked only by the ``:oracle:`` tag or an ``Oracle...`` title
  is the oracle's as much as one with ``:ROLE: oracle``;
* it is below such a heading, the file's own record included (a ``:ROLE: oracle`` in
  the file's drawer): "headings below a turn belong to it", as the conversation reader
  reads them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .chats import ORACLE
from .conversations import is_oracle_answer
from .records import Heading, Turn


def oracle_headings(headings: Sequence[Heading], dialogues: Iterable[tuple[int, Sequence[Turn]]]) -> set[int]:
    """The positions in ``headings`` (one file's, in file order, the file's record first
    when there is one) of the oracle's words (module docstring). ``dialogues``: ``(position
    of the heading holding them, turns)`` for the file's dialogue turns (lines counted in
    the file)."""
    answers_at = {t.start_line: at for at, turns in dialogues for t in turns if t.speaker == ORACLE}
    found: set[int] = set()
    open_: list[tuple[int, bool]] = []  # (level, the oracle's) of the headings enclosing the next
    for i, h in enumerate(headings):
        while open_ and open_[-1][0] >= h.level:
            open_.pop()
        # A turn held by another heading (a conversation's root) that starts here.
        own = is_oracle_answer(h.properties) or answers_at.get(h.start_line, i) != i
        oracle = own or (bool(open_) and open_[-1][1])
        if oracle:
            found.add(i)
        open_.append((h.level, oracle))
    return found
