"""Markdown chat files, as browser extensions and chat apps save them.

A turn starts at a line that names a speaker, in one of three shapes:

* a heading whose text is the name (``## User``, ``### Assistant:``), optionally after
  one emoji or other symbol (``## 👤 User``); the turn is the text below it;
* a bold label (``**User:** text``, ``**User**: text``, or ``**User**`` alone);
* a plain label (``User: text``, or ``User:`` alone).

A name counts only when it is one of :data:`SPEAKERS` (case-insensitive) or was passed
as ``speakers`` (``--speaker NAME``): answers are full of ``## Summary`` and ``**Note:**``
lines, which must stay text. Lines inside fenced code blocks never start a turn. Before
the first turn, a level-1 heading is the title (else the file name) and a ``YYYY-MM-DD``
date (with ``HH:MM`` if given) dates the conversation; the other lines there are left
out. A horizontal rule (``---``) that ends a turn is a separator and left out. A file
with no turn raises :class:`.MalformedExport`.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable
from pathlib import Path

from .model import Conversation, MalformedExport, Message
from .transcripts import dated_by_copy, file_name, read_text, start_time

SPEAKERS = frozenset(
    {"user", "assistant", "human", "ai", "me", "you", "chatgpt", "gpt", "claude", "gemini", "bard", "copilot",
     "model", "bot", "system", "llama", "mistral"}
)  # fmt: skip

_HEADING = re.compile(r"^#{1,6}[ \t]+(?:[^\w\s]+[ \t]*)?([\w .'’&@()-]{1,40}?)[ \t]*:?[ \t]*#*[ \t]*$")
_BOLD = re.compile(r"^\*\*[ \t]*([\w .'’&@()-]{1,40}?)[ \t]*(?::\*\*|\*\*[ \t]*:|\*\*[ \t]*$)[ \t]*(.*)$")
_PLAIN = re.compile(r"^([\w .'’&@()-]{1,40}?):(?:[ \t]+(.*))?$")
_TITLE = re.compile(r"^#[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_RULE = re.compile(r"^[ \t]*(?:-{3,}|\*{3,}|_{3,})[ \t]*$")
_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}))?")


def read_markdown(path: Path, *, date: datetime.datetime | None = None, speakers: Iterable[str] = ()) -> Conversation:
    """A markdown chat file's turns; see the module docstring."""
    names = SPEAKERS | {s.casefold() for s in speakers}
    title: str | None = None
    found_date: datetime.datetime | None = None
    messages: list[Message] = []
    body: list[str] = []
    fence: str | None = None
    for n, line in enumerate(read_text(path).split("\n"), 1):
        if fence is None:
            turn = _turn_start(line, names)
            if turn is not None:
                if messages:
                    messages[-1].text = _finish(body)
                messages.append(Message(str(n), turn[0], ""))
                body = [turn[1]] if turn[1] else []
                continue
        opened = _FENCE.match(line)
        if opened:
            fence = None if fence == opened[1] else fence or opened[1]
        if messages:
            body.append(line)
        elif title is None and (m := _TITLE.match(line)):
            title = m[1]
        elif found_date is None and (m := _DATE.search(line)):
            found_date = _parse_date(m)
    if not messages:
        raise MalformedExport(str(path), "", "no turns: expected '## User', '**User:** text' or 'User: text' lines (see --speaker)")
    messages[-1].text = _finish(body)
    start, timed = start_time(path, date or found_date)
    for message in messages:
        message.time = start
    key, stem = file_name(path)
    return Conversation("markdown", key, title or stem, messages, start, timed, dated_by_copy(path, date or found_date))


def _turn_start(line: str, names: frozenset[str]) -> tuple[str, str] | None:
    """``(speaker, text on the same line)`` when ``line`` opens a turn."""
    for pattern in (_HEADING, _BOLD, _PLAIN):
        m = pattern.match(line)
        if m and m[1].strip().casefold() in names:
            return m[1].strip(), ((m[2] or "").strip() if m.re.groups > 1 else "")
    return None


def _finish(lines: list[str]) -> str:
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and (not lines[-1].strip() or _RULE.match(lines[-1])):
        lines.pop()
    return "\n".join(lines)


def _parse_date(m: re.Match[str]) -> datetime.datetime | None:
    try:
        return datetime.datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4] or 0), int(m[5] or 0))
    except ValueError:
        return None
