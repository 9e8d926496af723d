"""Which headings of a file are the oracle's words, not the user's notes: the one rule
that ``/similar``, ``/suggest-links``, ``/search``'s ``role``, ``/ask``'s evidence and
summaries all apply, decided once when the file is read (the store keeps it as
``headings.oracle``).

A heading is the oracle's when

* its ``:ROLE:`` names the assistant (:data:`~.conversations.ORACLE_ROLES`, any letter
  case, blanks around it ignored), as the daemon writes its answers and the words
  ``/memorize`` keeps with ``role: oracle``;
* the conversation reader (:mod:`.chats`) made it the start of an ``Oracle`` turn: in a
  conversation, an answer marked only by the ``:oracle:`` tag or an ``Oracle`` title
  is the oracle's as much as one with ``:ROLE: oracle``;
* it is below such a heading, the file's own record included (a ``:ROLE: oracle`` in
  the file's drawer): "headings below a turn belong to it", as the conversation reader
  reads them;
* in a gptel chat (or an org-ai block, ``#+begin_ai :model llama3.2+notes``) whose model
  is one of the daemon's grounded ones (``llama3.2+notes``: its replies cited the user's
  notes), some of its own lines (its title line and its
  body, not its sub-headings') are the model's reply, as the chat reader reads it
  (:func:`.chats.gptel_turns`: by ``GPTEL_BOUNDS``; saved without them, gptel saved no
  reply and none is).
  A heading that holds a prompt as its title and the reply as its body is the oracle's:
  its text comes back whole (a /similar result, a summary's note), so it cannot be the
  user's without the reply; it is a turn heading holding the question it answers, as a
  ``/converse`` answer is. The prompt stays the user's words as the chat's ``user``
  turn (``/recall``, ``/ask``'s windows), and a heading that holds only prompt lines
  (a prompt not answered under it) stays a note. This mark is not passed to the
  headings below: the chat reader reads by lines, not by outline.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .chats import ORACLE
from .conversations import GROUNDED_SUFFIX, is_oracle_answer
from .records import Chunk, Heading, ParsedFile, Turn
from .turns import chunk_file


def oracle_headings(headings: Sequence[Heading], dialogues: Iterable[tuple[int, Sequence[Turn]]]) -> set[int]:
    """The positions in ``headings`` (one file's, in file order, the file's record first
    when there is one) of the oracle's words (module docstring). ``dialogues``: ``(position
    of the heading holding them, turns)`` for the file's dialogue turns (lines counted in
    the file)."""
    dialogues = list(dialogues)
    answers_at = {t.start_line: at for at, turns in dialogues for t in turns if t.speaker == ORACLE}
    replies = sorted((t.start_line, t.end_line) for _, turns in dialogues for t in turns if is_grounded_speaker(t.speaker))
    found: set[int] = set()
    open_: list[tuple[int, bool]] = []  # (level, the oracle's) of the headings enclosing the next
    for i, h in enumerate(headings):
        while open_ and open_[-1][0] >= h.level:
            open_.pop()
        # A turn held by another heading (a conversation's root) that starts here.
        own = is_oracle_answer(h.properties) or answers_at.get(h.start_line, i) != i
        oracle = own or (bool(open_) and open_[-1][1])
        if oracle or (replies and _holds_reply(h, replies)):
            found.add(i)
        open_.append((h.level, oracle))
    return found


def dialogues_of(chunks: Sequence[Sequence[Chunk]]) -> list[tuple[int, Sequence[Turn]]]:
    """The ``dialogues`` argument of :func:`oracle_headings` from a file's chunks
    (``chunks[i]`` those of its ``i``-th heading, as :func:`.turns.chunk_file` gives
    them): a dialogue heading's turns ride on its first chunk."""
    return [(i, cs[0].dialogue) for i, cs in enumerate(chunks) if cs and cs[0].dialogue]


def oracle_headings_of(parsed: ParsedFile, max_chars: int, overlap: int) -> set[int]:
    """:func:`oracle_headings` of ``parsed`` as the indexer decides it (its dialogues read
    by :func:`.turns.chunk_file` with the chunk size ``max_chars`` and ``overlap``), for a
    file read now rather than as the index holds it (``/suggest-links`` places links in
    the file as it is on disk)."""
    return oracle_headings(parsed.headings, dialogues_of(chunk_file(parsed, max_chars, overlap)))


def is_grounded_speaker(speaker: str) -> bool:
    """Whether a dialogue turn's ``speaker`` is one of the daemon's grounded models
    (``llama3.2+notes``, ``qwen2.5+notes:7b``; any letter case, as SQL's ``LIKE`` in
    :func:`arcology_oracle.store.oracle_words.oracle_turn_sql`)."""
    name = speaker.strip().lower()
    return name.endswith(GROUNDED_SUFFIX) or GROUNDED_SUFFIX + ":" in name


def _holds_reply(heading: Heading, replies: Sequence[tuple[int, int]]) -> bool:
    """Whether a non-blank line of ``heading``'s own (its heading line, its body: the
    last lines it ends with) lies in one of the ``replies`` (first, last file line)."""
    body = heading.body.split("\n")
    offset = heading.end_line - len(body)
    lines = [offset + 1 + k for k, line in enumerate(body) if line.strip()]
    if heading.level and heading.title.strip():
        lines.append(heading.start_line)
    return any(first <= n <= last for n in lines for first, last in replies)
