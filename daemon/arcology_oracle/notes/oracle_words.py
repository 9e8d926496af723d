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
* in a gptel chat (or an org-ai block, ``#+begin_ai :model llama3.2+notes``, or an
  ellama session) whose model is one of the daemon's grounded ones (``llama3.2+notes``:
  its replies cited the user's notes), some of its own lines (its title line and its
  body, not its sub-headings') are the model's reply, as the chat reader reads it
  (:func:`.chats.gptel_turns`: by ``GPTEL_BOUNDS``; saved without them, gptel saved no
  reply and none is. :func:`.ellama.session_turns`: the lines under a ``** Ellama:``
  heading, in a file whose ``.NAME.session.el`` beside it is an ellama session's naming
  the grounded model; the file alone, its ``Sources:`` blocks included, is no evidence).
  An ellama reply's heading (``** Ellama:``, its title no one's words) is so the
  oracle's, and so are the headings the reply holds (its markdown headings, made org);
  a ``** User:`` heading stays the user's note.
  A heading that holds a prompt as its title and the reply as its body is the oracle's:
  its text comes back whole (a /similar result, a summary's note), so it cannot be the
  user's without the reply; it is a turn heading holding the question it answers, as a
  ``/converse`` answer is. The prompt stays the user's words as the chat's ``user``
  turn (``/recall``, ``/ask``'s windows), and a heading that holds only prompt lines
  (a prompt not answered under it) stays a note. This mark is not passed to the
  headings below: the chat reader reads by lines, not by outline.

  A heading holding such a reply and lines of the user's besides is the user's, read
  without the replies (:func:`without_replies`): its stored text, its chunks and what
  keyword search knows of it leave out the replies' lines, so their words never come
  back as the user's note; nor do the notes they name move up as named in the user's
  words (answers/mentions.py: the stored heading read without the replies its file's
  turns hold, :func:`held_replies`). The user's lines are those of a turn (:mod:`.chats`) that
  is neither a grounded reply nor the prompt one answers in the heading (the user turns
  since the last reply): a paragraph beside an org-ai block, text typed under a gptel
  reply, a prompt left unanswered. Lines in no turn (an org-ai heading's title, a
  block's ``#+begin_ai`` line, the file's keywords) are no one's; a heading whose title
  line is a reply's stays the oracle's (its title is the model's).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from .chats import ORACLE
from .chunking import chunk_heading
from .conversations import is_grounded_speaker, is_oracle_answer
from .org_syntax import KEYWORD_LINE_RE, id_links
from .reader import heading_text
from .records import Chunk, Heading, ParsedFile, Turn
from .turns import chunk_file, chunk_turn

Spans = tuple[tuple[int, int], ...]  # (first, last) file lines


def oracle_headings(headings: Sequence[Heading], dialogues: Iterable[tuple[int, Sequence[Turn]]]) -> set[int]:
    """The positions in ``headings`` (one file's, in file order, the file's record first
    when there is one) of the oracle's words (module docstring). ``dialogues``: ``(position
    of the heading holding them, turns)`` for the file's dialogue turns (lines counted in
    the file)."""
    return oracle_words(headings, dialogues)[0]


def oracle_words(
    headings: Sequence[Heading], dialogues: Iterable[tuple[int, Sequence[Turn]]]
) -> tuple[set[int], dict[int, Spans]]:
    """``(oracle_headings(headings, dialogues), replies)``: ``replies`` gives, by position,
    the grounded replies (their first and last file lines) held by each heading that is
    the user's all the same, to be read without them (module docstring)."""
    dialogues = list(dialogues)
    answers_at = {t.start_line: at for at, turns in dialogues for t in turns if t.speaker == ORACLE}
    replies = sorted((t.start_line, t.end_line) for _, turns in dialogues for t in turns if is_grounded_speaker(t.speaker))
    found: set[int] = set()
    users: dict[int, Spans] = {}
    open_: list[tuple[int, bool]] = []  # (level, the oracle's) of the headings enclosing the next
    for i, h in enumerate(headings):
        while open_ and open_[-1][0] >= h.level:
            open_.pop()
        # A turn held by another heading (a conversation's root) that starts here.
        own = is_oracle_answer(h.properties) or answers_at.get(h.start_line, i) != i
        oracle = own or (bool(open_) and open_[-1][1])
        lines = _own_lines(h.level, h.title, h.start_line, h.end_line, h.body) if replies and not oracle else []
        held = _held(lines, replies)
        if held and not (h.level and _in(h.start_line, held)) and _users_lines(set(lines), held, dialogues):
            users[i] = held
        elif oracle or held:
            found.add(i)
        open_.append((h.level, oracle))
    return found, users


def dialogues_of(chunks: Sequence[Sequence[Chunk]]) -> list[tuple[int, Sequence[Turn]]]:
    """The ``dialogues`` argument of :func:`oracle_headings` from a file's chunks
    (``chunks[i]`` those of its ``i``-th heading, as :func:`.turns.chunk_file` gives
    them): a dialogue heading's turns ride on its first chunk."""
    return [(i, cs[0].dialogue) for i, cs in enumerate(chunks) if cs and cs[0].dialogue]


def oracle_words_of(parsed: ParsedFile, max_chars: int, overlap: int) -> tuple[set[int], dict[int, Spans]]:
    """:func:`oracle_words` of ``parsed`` as the indexer decides it (its dialogues read
    by :func:`.turns.chunk_file` with the chunk size ``max_chars`` and ``overlap``), for a
    file read now rather than as the index holds it (``/suggest-links`` places links in
    the file as it is on disk)."""
    return oracle_words(parsed.headings, dialogues_of(chunk_file(parsed, max_chars, overlap)))


def without_replies(parsed: ParsedFile, max_chars: int, overlap: int) -> tuple[ParsedFile, list[list[Chunk]]]:
    """``parsed`` and its chunks (:func:`.turns.chunk_file`) as the index keeps them: each
    heading that is the user's though it holds a grounded reply (:func:`oracle_words`)
    with its ``text`` and chunks made without the reply's lines. Such a heading holding a
    dialogue keeps its scenes (for ``/recall``'s windows) after the chunks of its own text,
    the first of which carries the turns: the store finds the heading by those chunks,
    never by its scenes (:func:`arcology_oracle.store.oracle_words.own_text_sql`)."""
    chunks = chunk_file(parsed, max_chars, overlap)
    users = oracle_words(parsed.headings, dialogues_of(chunks))[1]
    if not users:
        return parsed, chunks
    headings = list(parsed.headings)
    for i, spans in users.items():
        h = headings[i] = _without_lines(headings[i], spans)
        scenes = chunks[i] if chunks[i] and chunks[i][0].dialogue else []
        if scenes:
            own = chunk_heading(h, parsed.title, max_chars, overlap)
            own[0] = replace(own[0], dialogue=scenes[0].dialogue)
            chunks[i] = own + [replace(c, ordinal=len(own) + k, dialogue=()) for k, c in enumerate(scenes)]
        else:  # a gptel chat's heading, a turn of its own
            chunks[i] = chunk_turn(h, parsed.title, None, max_chars)
    return replace(parsed, headings=headings), chunks


def held_replies(
    replies: Sequence[tuple[int, int]], *, level: int, title: str, start_line: int, end_line: int, body: str
) -> Spans:
    """The spans of ``replies`` (a file's grounded replies, first and last file lines)
    holding some of a heading's own lines (its ``level``, ``title``, ``start_line``,
    ``end_line`` and raw ``body``, as :class:`~.records.Heading` and the store keep them),
    each cut to the body's lines. For a heading that is not the oracle's words, these are
    the replies it is read without (:func:`oracle_words`): what the index leaves out of
    its text, and what ``/similar``'s names (answers/mentions.py) and ``/nodes/ID`` (its
    marked replies) find again from the stored heading and turns."""
    first = body_first_line(body, end_line)
    held = _held(_own_lines(level, title, start_line, end_line, body), replies)
    return tuple((max(a, first), min(b, end_line)) for a, b in held)


def body_first_line(body: str, end_line: int) -> int:
    """The file line of the first line of a heading's raw ``body`` (it ends at the
    heading's ``end_line``; its title and drawer lines come before it)."""
    return end_line - body.count("\n")


def own_body(body: str, end_line: int, spans: Spans) -> str:
    """A heading's raw ``body`` (ending at file line ``end_line``) without its lines in
    ``spans``: the user's own words of a heading holding grounded replies
    (:func:`held_replies`), its text as the index keeps it (:func:`without_replies`)."""
    if not spans:
        return body
    first = body_first_line(body, end_line)
    return "\n".join(line for k, line in enumerate(body.split("\n")) if not _in(first + k, spans))


def _held(lines: Sequence[int], replies: Sequence[tuple[int, int]]) -> Spans:
    return tuple(span for span in replies if any(span[0] <= n <= span[1] for n in lines))


def _own_lines(level: int, title: str, start_line: int, end_line: int, body: str) -> list[int]:
    """The file lines of a heading's own non-blank lines: its heading line, its ``body``
    (the last lines it ends with, up to ``end_line``), not its sub-headings'; of the
    file's record (``level`` 0), not its keywords (``#+title:``, ``#+filetags:``: no
    one's lines, though the org-ai reader puts them in the turn of the text outside its
    blocks)."""
    first = body_first_line(body, end_line)
    keyword = KEYWORD_LINE_RE.match if not level else lambda line: None
    lines = [first + k for k, line in enumerate(body.split("\n")) if line.strip() and not keyword(line)]
    if level and title.strip():
        lines.append(start_line)
    return lines


def _without_lines(heading: Heading, spans: Spans) -> Heading:
    """``heading`` with its ``text`` made from its body without the lines in ``spans``
    (its ``body`` stays as written: the note's org text), and without the ``id:`` links
    only those lines hold (the model's citations, as a ``Sources:`` list's: no link of
    the user's note)."""
    own = own_body(heading.body, heading.end_line, spans)
    first = body_first_line(heading.body, heading.end_line)
    replies = "\n".join(line for k, line in enumerate(heading.body.split("\n")) if _in(first + k, spans))
    theirs = set(id_links(replies)) - set(id_links(own + "\n" + heading.title + "\n" + "\n".join(heading.properties.values())))
    links = tuple(link for link in heading.links if link not in theirs)
    return replace(heading, text=heading_text(own, heading.level), links=links)


def _in(line: int, spans: Spans) -> bool:
    return any(first <= line <= last for first, last in spans)


def _users_lines(lines: set[int], held: Spans, dialogues: Sequence[tuple[int, Sequence[Turn]]]) -> bool:
    """Whether some of a heading's ``lines`` are the user's own, in the dialogue holding
    its replies ``held``: in a turn that is neither a grounded reply nor the prompt a
    reply in those lines answers (the turns with a speaker since the last reply; the text
    outside an org-ai block, speaker "", is no prompt)."""
    for _, turns in dialogues:
        if not any((t.start_line, t.end_line) in held for t in turns if is_grounded_speaker(t.speaker)):
            continue
        pending: set[int] = set()  # the heading's lines in the turns since the last reply
        for t in turns:
            inside = {n for n in lines if t.start_line <= n <= t.end_line}
            if is_grounded_speaker(t.speaker):
                if pending and not inside:
                    return True  # a prompt answered elsewhere: the user's here
                pending = set()
            elif not t.speaker and (inside or pending):
                return True  # a prompt left unanswered at the end of its block
            elif t.speaker:
                pending |= inside
        if pending:
            return True  # a prompt no reply answers
    return False
