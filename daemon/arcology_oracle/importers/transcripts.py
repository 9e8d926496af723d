"""Transcripts: timestamped chat logs and meeting subtitles (WebVTT, SRT).

* ``transcript``: lines ``[HH:MM] Name: text`` (also ``[HH:MM:SS]`` and
  ``[YYYY-MM-DD HH:MM]``); a line without a timestamp continues the turn before it, and
  the first line that is not blank must be a turn. A time (without a date) more than
  three hours earlier than the one before it is on the next day (a reply the next
  morning); one a little earlier (clocks apart) on the same day.
* ``vtt`` (read by :mod:`webvtt`) and ``srt`` (read by :mod:`srt`): a cue's speaker is
  its voice span (``<v Name>text``, as Teams writes it) or a ``Name: `` at the start of
  its text (as Zoom writes it); a cue without either continues the speaker before it.
  Consecutive cues of one speaker are one turn, dated by its first cue.

These files carry no date (subtitles not even a time of day), so the day comes from
:func:`start_time`. A conversation's key is the file's name, a message's its position,
so importing a transcript that grew updates the same org file (the command imports a
file of that name holding another conversation beside it, never over it:
``cli_import._rendered``).
"""

from __future__ import annotations

import datetime
import os
import re
from pathlib import Path, PurePath

import srt
import webvtt
from webvtt.errors import MalformedCaptionError, MalformedFileError

from ..notes.dialogue import NEXT_DAY_AFTER
from .model import Conversation, MalformedExport, Message

_STAMPED = re.compile(
    r"^\[(?:(\d{4})-(\d{2})-(\d{2})[ T])?(\d{1,2}):(\d{2})(?::(\d{2}))?\][ \t]*([^:\n]{1,60}?):(?:[ \t]+(.*))?$"
)
_CUE_SPEAKER = re.compile(r"^(\w[\w .'’&@()-]{0,39}):[ \t]+(.*)$", re.S)
_VOICE = re.compile(r"^<v(?:\.[^ \t>]*)?[ \t]+([^>]+)>")
_TAG = re.compile(r"<[^>]*>")
_NAME_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?:[ T_.-]?(\d{2})[:.h-]?(\d{2})(?!\d))?")


def read_text(path: Path) -> str:
    """The file as text (UTF-8, a BOM dropped, line ends made ``\\n``); MalformedExport else."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MalformedExport(str(path), f"byte {exc.start}", "not UTF-8 text") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def file_name(path: Path) -> tuple[str, str]:
    """A file's name as a conversation's key, and its stem as its title: Unicode whatever
    bytes the name holds. A name written in another coding (Latin-1's ``caf\\xe9.txt``)
    keeps each byte that is not UTF-8 as ``\\xNN`` in the key (distinct, and the same at
    each import) and as U+FFFD in the title (no byte the org file could not hold)."""
    raw = os.fsencode(path.name)
    return raw.decode("utf-8", "backslashreplace"), PurePath(raw.decode("utf-8", "replace")).stem


def start_time(path: Path, date: datetime.datetime | None, duration: datetime.timedelta = datetime.timedelta()) -> tuple[datetime.datetime, bool]:
    """When a file's conversation began, and whether that includes a time of day:
    ``date`` (``--date``; midnight reads as a day alone), else a ``YYYY-MM-DD`` (optionally with ``HH:MM``) in the file's
    name, else the file's modification time less ``duration`` (a recording is saved
    when it ends: :func:`dated_by_copy`)."""
    if date is not None:
        return date, bool(date.hour or date.minute or date.second)
    if named := _name_date(path):
        return named
    return datetime.datetime.fromtimestamp(os.stat(path).st_mtime) - duration, True


def dated_by_copy(path: Path, date: datetime.datetime | None) -> bool:
    """Whether :func:`start_time` dates ``path`` by its modification time: a guess, which
    a copy of the file (or a line added to it another day) changes."""
    return date is None and _name_date(path) is None


def _name_date(path: Path) -> tuple[datetime.datetime, bool] | None:
    """The ``YYYY-MM-DD`` (with ``HH:MM``) in ``path``'s name, as :func:`start_time` gives it."""
    m = _NAME_DATE.search(path.name)
    if m:
        try:
            y, mo, d = int(m[1]), int(m[2]), int(m[3])
            if m[4]:
                return datetime.datetime(y, mo, d, int(m[4]), int(m[5])), True
            return datetime.datetime(y, mo, d), False
        except ValueError:
            pass
    return None


def read_transcript(path: Path, *, date: datetime.datetime | None = None) -> Conversation:
    """A ``[HH:MM] Name: text`` transcript; see the module docstring."""
    name = str(path)
    day = start_time(path, date)[0].date()
    conversation = Conversation("transcript", *file_name(path), guessed=dated_by_copy(path, date))
    last: datetime.datetime | None = None
    lines: list[str] = []
    for n, line in enumerate(read_text(path).split("\n"), 1):
        m = _STAMPED.match(line)
        if m is None:
            if not conversation.messages and line.strip():
                raise MalformedExport(name, f"line {n}", f"expected a turn '[HH:MM] Name: text', got {line[:60]!r}")
            if conversation.messages:
                lines.append(line)
            continue
        if conversation.messages:
            conversation.messages[-1].text = "\n".join(lines)
        try:
            if m[1]:
                day = datetime.date(int(m[1]), int(m[2]), int(m[3]))
            moment = datetime.datetime.combine(day, datetime.time(int(m[4]), int(m[5]), int(m[6] or 0)))
        except ValueError as exc:
            raise MalformedExport(name, f"line {n}", f"bad date or time ({exc})") from None
        if last is not None and last - moment > NEXT_DAY_AFTER and not m[1]:  # else clocks apart, not midnight
            day += datetime.timedelta(days=1)
            moment += datetime.timedelta(days=1)
        last = moment
        lines = [m[8] or ""]
        conversation.messages.append(Message(str(n), m[7].strip(), "", moment))
    if not conversation.messages:
        raise MalformedExport(name, "", "no turns '[HH:MM] Name: text' in the file")
    conversation.messages[-1].text = "\n".join(lines)
    conversation.time = conversation.messages[0].time
    return conversation


def read_vtt(path: Path, *, date: datetime.datetime | None = None) -> Conversation:
    """A WebVTT file's cues as turns; see the module docstring."""
    text = read_text(path)
    try:
        captions = webvtt.from_string(text, strict=True).captions
    except (MalformedFileError, MalformedCaptionError) as exc:
        raise MalformedExport(str(path), _where(text, str(exc)), f"not valid WebVTT ({exc})") from None
    cues = [(c.start_in_seconds, c.end_in_seconds, c.voice, c.text) for c in captions]
    return _cues(path, "vtt", [(s, e, v, t.replace("\n", " ")) for s, e, v, t in cues], date)


def read_srt(path: Path, *, date: datetime.datetime | None = None) -> Conversation:
    """An SRT file's cues as turns; see the module docstring."""
    text = read_text(path)
    try:
        subtitles = list(srt.parse(text))
    except srt.SRTParseError as exc:
        line = text.count("\n", 0, exc.expected_start) + 1
        raise MalformedExport(str(path), f"line {line}", f"not valid SRT: {exc.unmatched_content.strip()[:60]!r}") from None
    except ValueError as exc:
        raise MalformedExport(str(path), _where(text, str(exc)), f"not valid SRT ({exc})") from None
    cues = []
    for sub in subtitles:
        content = sub.content.strip()
        voice = _VOICE.match(content)
        cues.append((
            int(sub.start.total_seconds()), int(sub.end.total_seconds()),
            voice[1].strip() if voice else None, _TAG.sub("", content).replace("\n", " "),
        ))  # fmt: skip
    return _cues(path, "srt", cues, date)


def _cues(path: Path, fmt: str, cues: list[tuple[int, int, str | None, str]], date: datetime.datetime | None) -> Conversation:
    if not cues:
        raise MalformedExport(str(path), "", "no cues in the file")
    start, timed = start_time(path, date, datetime.timedelta(seconds=max(c[1] for c in cues)))
    conversation = Conversation(fmt, *file_name(path), time=start, timed=timed, guessed=dated_by_copy(path, date))
    speaker: str | None = None
    for n, (begin, _end, voice, text) in enumerate(cues, 1):
        text = " ".join(text.split())
        m = None if voice else _CUE_SPEAKER.match(text)
        said = voice.strip() if voice else m[1] if m else speaker or "Unknown"
        text = m[2] if m else text
        if not text:
            continue
        last = conversation.messages[-1] if conversation.messages else None
        if last is not None and said == speaker:
            last.text += " " + text
        else:
            conversation.messages.append(Message(str(n), said, text, start + datetime.timedelta(seconds=begin)))
        speaker = said
    return conversation


def _where(text: str, message: str) -> str:
    """The line of the first quoted value of an error message found in ``text``, else ``""``."""
    for value in re.findall(r"'([^'\n]+)'", message):
        at = text.find(value)
        if at >= 0:
            return f"line {text.count(chr(10), 0, at) + 1}"
    return ""
