"""What every importer yields: conversations of dated messages, and the one error a bad
export raises.

A :class:`Conversation` is what becomes one org file. Its ``key`` is stable across exports
of the same conversation (the export's conversation id, or the file name for formats
without one); each :class:`Message` has a ``key`` stable within its conversation (the
export's message id, or its position). The org IDs are derived from these keys, so a
re-import finds and updates the same files and headings.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field


class MalformedExport(Exception):
    """The export cannot be read: ``where`` says where in ``path`` (a line, a byte offset,
    a conversation), ``message`` what is wrong."""

    def __init__(self, path: str, where: str, message: str):
        super().__init__(f"{path}: {where}: {message}" if where else f"{path}: {message}")
        self.path = path
        self.where = where
        self.message = message


@dataclass(slots=True)
class Message:
    """One turn: who spoke, what they said (plain text, any number of lines) and when
    (aware, or naive for local time; None when the export does not say)."""

    key: str
    speaker: str
    text: str
    time: datetime.datetime | None = None


@dataclass(slots=True)
class Conversation:
    """One conversation: ``format`` names the importer, ``key`` the conversation within
    it; ``time`` dates it when its messages carry no times; ``timed`` is False when the
    times hold a day but no time of day (their clock reads midnight); ``guessed`` when
    its day is its file's modification time (no date given or found): a copy of the file
    dates it anew."""

    format: str
    key: str
    title: str
    messages: list[Message] = field(default_factory=list)
    time: datetime.datetime | None = None
    timed: bool = True
    guessed: bool = False
