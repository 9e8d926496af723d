"""Conversations as memory: chunking a conversation by turn instead of by size.

A turn is a question with its answer. Two shapes of org conversation are known:

* the ``/converse`` format (:mod:`.conversations`): the oracle's answer is a heading
  whose ``:ROLE:`` names the assistant, right after the user's heading at the same level.
  The answer's chunks each hold the question too, so a turn is found as a whole;
* a gptel chat saved as org (file properties ``GPTEL_*``): each heading is the user's
  prompt with the model's response as its body, already one turn; an ellama session
  (:mod:`.ellama`) is read as one too, each ``** User:``/``** Ellama:`` heading a turn;
* an org-ai chat (a ``#+begin_ai`` block): the heading holding it holds its turns.

Both are dialogue too (:mod:`.chats`): the conversation's root (a gptel chat's file
record) holds all its turns, with speakers and dates, and its chunks are their scenes
and the turns alone (:func:`scene_chunks`), so that ``/recall`` and ``/ask`` give
windows of the conversation (:mod:`arcology_oracle.answers.windows`); the turn headings
keep their own chunks, for ``/search`` and (the user's turns only) ``/similar``.

Every chunk of a turn starts with the outline path and the turn's date (``(2024-03-01)``),
so a turn can be found by when it happened. A turn longer than ``TURN_CHARS_FACTOR``
times the chunk size is still cut into windows (embedding models read a bounded text),
each carrying the question.
"""

from __future__ import annotations

from dataclasses import replace

from . import chats, dialogue, ellama
from .chunking import chunk_heading, path_line, split_windows
from .conversations import is_oracle_answer
from .records import Chunk, Heading, ParsedFile, Turn, sha256_hex

TURN_CHARS_FACTOR = 3
QUESTION_CHARS = 600


def _conversations(headings: list[Heading]) -> dict[int, list[Heading]]:
    """``{index of a conversation's root: the headings below it}`` (see :mod:`.chats`)."""
    out: dict[int, list[Heading]] = {}
    for i, root in enumerate(headings):
        j = i + 1
        while j < len(headings) and headings[j].level > root.level:
            j += 1
        below = headings[i + 1 : j]
        level = min((h.level for h in below), default=0)
        if any(h.level == level and chats.is_conversation_turn(h) for h in below):
            out[i] = below
    return out


def chunk_file(parsed: ParsedFile, max_chars: int, overlap: int) -> list[list[Chunk]]:
    """The chunks of every heading of ``parsed``: by turn for conversation headings,
    by :func:`.chunking.chunk_heading` for the rest. A conversation (a ``/converse``
    subtree, a gptel chat: :mod:`.chats`, an ellama session: :mod:`.ellama`) is also a
    dialogue: its root (the first record of a gptel chat or ellama session) holds its
    turns and its chunks are their scenes."""
    chat = chats.is_gptel_chat(parsed) or parsed.ellama is not None
    first = parsed.headings[0] if parsed.headings else None
    imported = first is not None and first.level == 0 and "IMPORTED_FROM" in first.properties
    roots = {} if chat else _conversations(parsed.headings)
    out: list[list[Chunk]] = []
    # The last heading seen at each level under each outline path: an answer's question
    # is its previous sibling. Entries deeper than the current heading are stale.
    previous_at: dict[tuple[int, tuple[str, ...]], Heading] = {}
    last_level = 0
    for i, heading in enumerate(parsed.headings):
        key = (heading.level, heading.olp)
        if heading.level < last_level:
            previous_at = {k: v for k, v in previous_at.items() if k[0] <= heading.level}
        last_level = heading.level
        question = previous_at.get(key)
        previous_at[key] = heading
        talk = None
        if chat and i == 0:
            talk = ellama.session_turns(parsed) if parsed.ellama is not None else chats.gptel_turns(parsed)
        if i in roots:
            talk = chats.conversation_turns(heading, roots[i])
        elif not chat:
            talk = chats.org_ai_turns(heading) or None
        if talk and len(talk) >= 2:
            out.append(scene_chunks(heading, parsed.title, talk))
        elif heading.level > 0 and is_oracle_answer(heading.properties) and chats.is_conversation_turn(heading):
            asked = question if question is not None and not is_oracle_answer(question.properties) else None
            out.append(chunk_turn(heading, parsed.title, asked, max_chars))
        elif heading.level > 0 and (chat or "ROLE" in heading.properties):
            out.append(chunk_turn(heading, parsed.title, None, max_chars))
        else:
            out.append(chunk_dialogue(heading, parsed.title, imported) or chunk_heading(heading, parsed.title, max_chars, overlap))
    return out


def chunk_dialogue(heading: Heading, file_title: str, imported: bool = False) -> list[Chunk]:
    """The scenes of a heading whose body is a dialogue (:mod:`.dialogue`), one chunk
    each (see :func:`scene_chunks`); ``[]`` when the body is no dialogue."""
    turns = dialogue.read_turns(heading.body, heading.date, known=imported)
    if not turns:
        return []
    # The body is the heading's last lines (drawer and planning come first).
    offset = heading.end_line - len(heading.body.split("\n"))
    turns = [replace(t, start_line=t.start_line + offset, end_line=t.end_line + offset) for t in turns]
    return scene_chunks(heading, file_title, turns)


def scene_chunks(heading: Heading, file_title: str, turns: list[Turn]) -> list[Chunk]:
    """The chunks of a dialogue (``turns``, lines counted in the file), each starting
    with the path line and the heading's date: its scenes, one chunk each (a turn longer
    than a scene's maximum is cut into several), then each turn that shares a scene
    with others, alone (``first_turn == last_turn``; its first ``SCENE_MAX_CHARS``).
    A scene's vector says which part of a conversation matches, a turn's which turn
    (see :mod:`arcology_oracle.answers.windows`). The first chunk carries the turns,
    for the store."""
    head = path_line(heading, file_title) + (f" ({heading.date})" if heading.date else "")
    chunks: list[Chunk] = []
    shared: set[int] = set()
    for first, last in dialogue.scenes(turns):
        body = "\n\n".join(t.text for t in turns[first : last + 1])
        for window in split_windows(body, dialogue.SCENE_MAX_CHARS, 0):
            text = head + "\n\n" + window
            chunks.append(Chunk(len(chunks), text, sha256_hex(text), first, last))
        if last > first:
            shared.update(range(first, last + 1))
    for t in turns:
        if t.ordinal in shared:
            text = head + "\n\n" + t.text[: dialogue.SCENE_MAX_CHARS]
            chunks.append(Chunk(len(chunks), text, sha256_hex(text), t.ordinal, t.ordinal))
    chunks[0] = replace(chunks[0], dialogue=tuple(turns))
    return chunks


def chunk_turn(answer: Heading, file_title: str, question: Heading | None, max_chars: int) -> list[Chunk]:
    """The chunks of one turn: path line with the date, the question (when the answer is
    a heading of its own), then the answer's text, whole up to ``TURN_CHARS_FACTOR *
    max_chars`` characters."""
    head = path_line(answer, file_title) + (f" ({answer.date})" if answer.date else "")
    asked = ""
    if question is not None:
        asked = "Question: " + " ".join([question.title, question.text]).strip()[:QUESTION_CHARS] + "\n\nAnswer:"
    body = answer.text.strip()
    windows = split_windows(body, max_chars * TURN_CHARS_FACTOR, 0) if body else [""]
    texts = ["\n\n".join(part for part in (head, asked, window) if part) for window in windows]
    return [Chunk(ordinal=i, text=t, hash=sha256_hex(t)) for i, t in enumerate(texts)]
