"""A conversation as an org file: the dialogue format that the importers write.

One file per conversation::

    :PROPERTIES:
    :ID:       0b6f...            (uuid5 of the conversation's format and key)
    :IMPORTED_FROM: chatgpt
    :IMPORT_HASH: 5c1e...          (sha256 of the file without this line)
    :END:
    #+title: Sourdough starter
    #+filetags: :private:          (only with --tag)

    * [2023-05-08 Mon 13:56] Sourdough starter
    :PROPERTIES:
    :ID:       93d2...            (uuid5 of the conversation and its first message)
    :END:
    Me: My starter smells of acetone.

    ChatGPT: It is hungry. Feed it twice a day:
    ,
    - equal weights of flour and water
    ,* a line that Org would read as a heading, escaped

One level-1 heading per session, titled with its first message's time as an inactive
timestamp (local time) and the conversation's title; a session ends where more than
``session_gap`` passes between two messages. Each turn is one Org paragraph that starts
at column 0 with ``Name: `` (:data:`SPEAKER_LINE`: a name of at most four words of
letters, digits and ``.'’-``, starting with a letter); turns are separated by one blank
line. A turn's further lines follow it verbatim, except:

* a blank line inside a turn is written as a lone ``,`` (so the turn stays one paragraph,
  and a reader that counts paragraphs counts turns);
* a line gets one leading comma, as Org escapes lines in blocks (:func:`escape_line`),
  when Org would read it as structure: a heading (``*`` at column 0), a keyword or block
  line (``#+``), a drawer line (``:NAME:``), a footnote definition (``[fn:1]`` at column
  0, which Org reads on over the turns after it), a horizontal rule (five dashes), a
  LaTeX environment (``\\begin{``); when a dialogue reader would read it as a turn or
  a scene marker: ``Name: `` (up to five words before the colon), a line starting with
  a bracket and a digit (``[13:56] Name: ``, a timestamp alone); and when it starts
  with a comma;
* every line, the first too, and the title are inert as a capture's text is
  (:func:`~arcology_oracle.notes.org_escape.inert`): a zero-width space goes into each
  ``Local Variables:`` and ``-*-`` (a chat explaining file variables set the note's mode
  and coding in Emacs), between two ``<`` (no ``<<target>>`` takes the note's links) and
  into each labelled inline footnote; control characters but tab and line breaks become
  U+FFFD (a NUL made Emacs open the note as binary); a speaker's name ending in ``Local
  Variables`` is written ``Local-Variables``, one named ``Clock`` ``Clock.``
  (:func:`speaker_name`);
* every line and the title are the chat's words, not the user's: no link in them runs
  code when clicked, no timestamp lands on the agenda (it is written inactive), no LaTeX
  command reads, writes or runs on export
  (:func:`~arcology_oracle.notes.model_text.quiet`); a heading without a time before its
  title (a chat whose export dates nothing) is no TODO, priority or ``COMMENT`` heading
  (:func:`~arcology_oracle.notes.model_text.quiet_heading`).

So a reader finds the turns as the lines matching :data:`SPEAKER_LINE`, and gets each
turn's text back by dropping the first comma of every other line that starts with one
(a lone ``,`` becomes the blank line it stands for), and the zero-width spaces if it
wants the text to the byte (an active timestamp it gets back inactive). Comment lines (``# text``) stay as they are: Org leaves
them out of exports only.
"""

from __future__ import annotations

import datetime
import hashlib
import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ..notes.capture import inactive_timestamp
from ..notes.capture_title import TRAILING_BLANKS
from ..notes.model_text import quiet, quiet_heading, read_as_quieted
from ..notes.org_escape import ZWSP, inert, without_controls
from ..notes.org_syntax import TIMESTAMP_RE, split_heading_tags
from ..notes.privacy import file_tags
from .model import Conversation, Message

NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "arcology-oracle:import")
IMPORTED_FROM = "IMPORTED_FROM"
IMPORT_HASH = "IMPORT_HASH"
DEFAULT_SESSION_GAP = datetime.timedelta(minutes=30)
# A speaker's name: a letter, then up to four words of letters, digits and .'’-
SPEAKER_NAME = r"[^\W\d_][\w.'’-]*(?: [\w.'’-]+){0,3}"
# The first line of a turn; the name is group 1.
SPEAKER_LINE = re.compile(rf"^({SPEAKER_NAME}): ")
UNKNOWN_SPEAKER = "Unknown"
BLANK = ","  # a blank line inside a turn

_NEEDS_COMMA = re.compile(
    rf"""^(?:
        ,                         # an escaped line, or one that looks escaped
      | \*+(?:[ \t]|$)            # a heading
      | [ \t]*\#\+                # a keyword or a block's begin/end line
      | [ \t]*:[\w-]+:[ \t]*$     # a drawer's first line, or :END:
      | [ \t]*-{{5,}}[ \t]*$        # a horizontal rule
      | [ \t]*\\begin\{{          # a LaTeX environment
      | \[(?i:fn):[^]\[:\ \t\n\r\f\v]+\]  # a footnote definition (any letter case, as Org's labels): it would hold the turns after it
      | [ \t]*\[\d                # a time: "[13:56] Name: text", or a timestamp alone
      | \w[\w.'’&@()-]*(?:[ \t]+[\w.'’&@()-]+){{0,4}}:[ \t]  # what would read as another turn
    )""",
    re.X,
)
_NOT_SPEAKER = re.compile(r"[^\w .'’-]+")
# A name Emacs reads, with the ": " after it, as the start of a Local Variables block
# (hack-local-variables searches for "Local Variables:" in any letter case), and one Org
# reads as a clock line (org-clock-line-re, any letter case).
_LOCAL_VARIABLES_NAME = re.compile(r"(?<=local) (?=variables\Z)", re.IGNORECASE)
_CLOCK_NAME = re.compile(r"\Aclock\Z", re.IGNORECASE)
_SPACES = re.compile(r"\s+")
# What ends a line that Emacs's delete-trailing-whitespace (a common hook on save) would
# delete: Python's blanks, and U+200B, which Python does not count as one.
_TRAILING = re.compile(rf"[\s{TRAILING_BLANKS}]+\Z")
_HASH_LINE = re.compile(rf"^:{IMPORT_HASH}:.*\n", re.M)
_HEADING = re.compile(r"^\*+(?:[ \t]|$)")
_FILETAGS = re.compile(r"^[ \t]*#\+filetags:(.*)$", re.I)
_FILE_ID = re.compile(r"\A(?:[ \t]*\n)*[ \t]*:PROPERTIES:[ \t]*\n(?:[ \t]*:(?!END:).*\n)*?[ \t]*:ID:[ \t]+(\S+)", re.I)


@dataclass(frozen=True, slots=True)
class RenderedFile:
    """An org file to write: its file-level ID, a file name for it (used when no file of
    that ID exists yet) and its whole text."""

    id: str
    filename: str
    text: str
    sessions: int
    turns: int


def stable_id(*parts: str) -> str:
    """A UUID derived from ``parts`` alone: the same conversation gives the same IDs."""
    return str(uuid.uuid5(NAMESPACE, "\x1f".join(parts)))


def speaker_name(raw: str | None) -> str:
    """A speaker's name as :data:`SPEAKER_LINE` reads it: at most four words of letters,
    digits and ``.'’-``, starting with a letter, at most 40 characters. A name ending in
    ``Local Variables`` (any letter case) gets a hyphen for its last space: its turn's
    line, ``Local Variables: ...``, would start a block of file variables that the next
    lines of a chat (``mode :fundamental``, ``End:``) fill, setting the note's mode. The
    name ``Clock`` (any letter case) gets a full stop: ``CLOCK: [...]--[...] => 8:00``
    would be a clock line, its hours in the user's clock tables."""
    name = _SPACES.sub(" ", _NOT_SPEAKER.sub(" ", raw or "")).strip()
    name = re.sub(r"^[\W\d_]+", "", name)
    name = " ".join(name.split(" ")[:4])[:40].strip()
    return _CLOCK_NAME.sub(lambda m: m[0] + ".", _LOCAL_VARIABLES_NAME.sub("-", name)) or UNKNOWN_SPEAKER


def escape_line(line: str) -> str:
    """``line`` made inert as a capture's text is (:func:`~arcology_oracle.notes.org_escape.inert`),
    then with one comma in front when Org (or a dialogue reader) would read it as
    structure; see the module docstring."""
    line = inert(line)
    return "," + line if _NEEDS_COMMA.match(line) else line


def has_text(text: str) -> bool:
    """Whether a message's ``text`` holds more than blanks (zero-width spaces included)."""
    return bool(_TRAILING.sub("", text))


def clean_title(title: str | None) -> str:
    """One line of title that Org reads back the same (no trailing ``:tags:``), inert as
    a turn's lines are, without control characters, ending in nothing Emacs's
    delete-trailing-whitespace would delete (else a file merely saved would no longer be
    as imported, and never be updated again), with a zero-width space between two ``]``
    as Org's ``org-link-make-string`` puts in a description: org-publish's sitemap makes
    ``[[file:NOTE][TITLE]]`` of it with ``format``, where ``x]] [[Brining`` ended the link
    and made one within the sitemap to a heading it lacks (its export, the publishing, failed)."""
    text = _TRAILING.sub("", _SPACES.sub(" ", inert(quiet(without_controls(title or "")))).strip()) or "Untitled conversation"
    text = text.replace("]]", "]" + ZWSP + "]").replace("]]", "]" + ZWSP + "]")  # (twice: "]]]" overlaps)
    if split_heading_tags(text)[1]:
        text = text[:-1] + ": -"
    return text


def sessions(messages: Sequence[Message], gap: datetime.timedelta) -> list[list[Message]]:
    """``messages`` cut where more than ``gap`` passes between two timed messages."""
    out: list[list[Message]] = []
    last: datetime.datetime | None = None
    for message in messages:
        if out and not (message.time and last and _comparable(message.time) - _comparable(last) > gap):
            out[-1].append(message)
        else:
            out.append([message])
        last = message.time or last
    return out


def render(conversation: Conversation, *, tags: Iterable[str] = (), gap: datetime.timedelta = DEFAULT_SESSION_GAP) -> RenderedFile:
    """The org file of ``conversation`` (its messages with text; at least one)."""
    messages = [m for m in conversation.messages if has_text(m.text)]
    title = clean_title(conversation.title)
    file_id = stable_id(conversation.format, conversation.key)
    head = [":PROPERTIES:", f":ID:       {file_id}", f":{IMPORTED_FROM}: {conversation.format}", ":END:", f"#+title: {title}"]
    lines = [*head, *_filetags_line(tags), ""]
    fallback = conversation.time
    groups = sessions(messages, gap)
    keys = unique_keys([m.key for m in messages])
    first_of_group = 0
    for group in groups:
        when = next((m.time for m in group if m.time), None) or fallback
        fallback = when
        stamp = _stamp(_local(when), conversation.timed) + " " if when else ""
        heading_id = stable_id(conversation.format, conversation.key, keys[first_of_group])
        first_of_group += len(group)
        heading = stamp + title if stamp else quiet_heading(title)
        lines += [f"* {heading}", ":PROPERTIES:", f":ID:       {heading_id}", ":END:"]
        for i, message in enumerate(group):
            if i:
                lines.append("")
            lines += turn_lines(message.speaker, message.text)
        lines.append("")
    body = "\n".join(lines)
    text = _with_hash(body)
    first = next((m.time for m in messages if m.time), None) or conversation.time
    date = f"{_local(first):%Y-%m-%d}-" if first else ""
    name = slug(title)
    if date and date[:-1] in name:
        date = ""  # "2024-03-05-standup", not "2024-03-05-2024-03-05-standup"
    return RenderedFile(file_id, f"{date}{name}-{file_id[:8]}.org", text, len(groups), len(messages))


def unique_keys(keys: Sequence[str]) -> list[str]:
    """``keys`` made unique: a key seen before gets its position (from 0) appended, so a
    conversation whose export repeats a message id still gets one heading ID per session,
    and the first message of a key keeps the ID earlier imports gave it."""
    seen: set[str] = set()
    out = []
    for n, key in enumerate(keys):
        unique = key if key not in seen else f"{key}\x1f{n}"
        seen.update((key, unique))
        out.append(unique)
    return out


def with_tags(rendered: RenderedFile, tags: Iterable[str]) -> RenderedFile:
    """``rendered`` with ``tags`` first in its ``#+filetags`` (then its own tags), the
    hash made again: an update keeps every tag the file had (a ``private`` above all)."""
    body = _HASH_LINE.sub("", rendered.text, count=1)
    head, rest = body.split("\n\n", 1)  # the file's head ends at its first blank line
    own = list(file_tags(head.split("\n")))
    merged = list(dict.fromkeys([*tags, *own]))
    if merged == own:
        return rendered
    lines = [line for line in head.split("\n") if not _FILETAGS.match(line)]
    text = _with_hash("\n".join([*lines, *_filetags_line(merged)]) + "\n\n" + rest)
    return replace(rendered, text=text)


def dialogue(text: str) -> tuple[str, list[str]]:
    """The timestamp of the first heading and the turns (each its lines, joined) of an
    org file as :func:`render` writes it."""
    stamp: str | None = None
    turns: list[str] = []
    turn: list[str] = []
    in_drawer = False
    for line in text.split("\n"):
        heading = _HEADING.match(line)
        if stamp is None:
            if heading:
                stamp = m[1] if (m := re.match(r"\*+[ \t]+(\[[^]\n]*\])", line)) else ""
            continue
        if in_drawer:
            in_drawer = line.strip().upper() != ":END:"
        elif heading or not line:
            turns += ["\n".join(turn)] if turn else []
            turn = []
        elif line.strip().upper() == ":PROPERTIES:" and not turn:
            in_drawer = True
        else:
            turn.append(line)
    turns += ["\n".join(turn)] if turn else []
    return stamp or "", turns


def continues(old: str, new: str) -> bool:
    """Whether the org file ``new`` is the conversation of ``old`` going on: the same date
    on the first heading, and every turn of ``old`` in ``new``, in order (the last one
    possibly longer), read as text (:func:`_read_back`). Writing ``new`` over ``old``
    then loses no turn."""
    (old_stamp, old_turns), (new_stamp, new_turns) = _read_back(old), _read_back(new)
    if old_stamp != new_stamp or len(new_turns) < len(old_turns):
        return False
    if not old_turns:
        return True
    last = len(old_turns) - 1
    return old_turns[:last] == new_turns[:last] and new_turns[last].startswith(old_turns[last])


def begins_alike(old: str, new: str) -> bool:
    """Whether the org files ``old`` and ``new`` have the same date on their first heading
    and the same first turn (read as text, :func:`_read_back`)."""
    (old_stamp, old_turns), (new_stamp, new_turns) = _read_back(old), _read_back(new)
    return old_stamp == new_stamp and old_turns[:1] == new_turns[:1]


def _read_back(text: str) -> tuple[str, list[str]]:
    """:func:`dialogue` with each turn's text as the format gives it back: one leading
    comma dropped from every line and the zero-width spaces taken out, its speaker's name
    as :func:`speaker_name` writes it now. So a file written before an escape was added
    (a ``[fn:1]`` line's comma, ``Local Variables`` made inert, an active timestamp
    written inactive, a speaker ``Local Variables`` or ``Clock`` renamed) still reads as
    the same conversation when imported again, not as another."""
    stamp, turns = dialogue(text)
    return stamp, [
        SPEAKER_LINE.sub(lambda m: speaker_name(m[1]) + ": ", "\n".join(
            line.removeprefix(",") for line in read_as_quieted(turn.replace(ZWSP, "")).split("\n")), count=1)
        for turn in turns
    ]  # fmt: skip


def turn_lines(speaker: str, text: str) -> list[str]:
    """A turn's lines: ``Name: first line``, then the other lines escaped; surrounding
    blank lines and trailing blanks dropped (those Emacs's delete-trailing-whitespace
    deletes too, see :func:`clean_title`), a run of blank lines inside as one ``,``."""
    raw = [_TRAILING.sub("", line) for line in without_controls(text).replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while raw and not raw[0]:
        raw.pop(0)
    while raw and not raw[-1]:
        raw.pop()
    raw = quiet("\n".join(raw)).split("\n")  # whole: Org reads a bracket link over lines
    out = [f"{speaker_name(speaker)}: {inert(raw[0].lstrip()) if raw != [''] else ''}"]
    for line in raw[1:]:
        if line:
            out.append(escape_line(line))
        elif out[-1] != BLANK:
            out.append(BLANK)
    return out


def slug(title: str) -> str:
    """A file name part: the title's words, lower case, joined by ``-`` (at most 50)."""
    words = re.sub(r"[^\w]+", "-", title.casefold()).strip("-_")
    return words[:50].rstrip("-_") or "conversation"


def content_hash(text: str) -> str:
    """The hash stored in ``:IMPORT_HASH:``: of the file's text without that line."""
    return hashlib.sha256(_HASH_LINE.sub("", text, count=1).encode("utf-8", "surrogateescape")).hexdigest()


def unchanged_since_import(text: str) -> bool:
    """Whether ``text`` is still what an import wrote (its stored hash matches)."""
    m = re.search(rf"^:{IMPORT_HASH}:[ \t]*(\S+)[ \t]*$", text, re.M)
    return bool(m) and m.group(1) == content_hash(text)


def file_id_of(head: str) -> str | None:
    """The file-level ``:ID:`` in the property drawer that opens ``head``, if any."""
    m = _FILE_ID.match(head)
    return m.group(1) if m else None


def _with_hash(body: str) -> str:
    marker = ":END:\n"  # the file drawer's end: the hash goes just before it
    at = body.index(marker)
    digest = hashlib.sha256(body.encode("utf-8", "surrogateescape")).hexdigest()
    return body[:at] + f":{IMPORT_HASH}: {digest}\n" + body[at:]


def _filetags_line(tags: Iterable[str]) -> list[str]:
    tags = list(dict.fromkeys(tags))
    return [f"#+filetags: :{':'.join(tags)}:"] if tags else []


def _stamp(moment: datetime.datetime, timed: bool) -> str:
    return inactive_timestamp(moment) if timed else inactive_timestamp(moment)[:-7] + "]"


def stamp_moment(stamp: str) -> datetime.datetime | None:
    """The moment in ``stamp``, an inactive timestamp as :func:`_stamp` writes one (its
    time of day, or midnight); None for anything else."""
    m = TIMESTAMP_RE.match(stamp)
    if not (m and stamp[0] == "[" and stamp[m.end() :] == "]"):
        return None
    return datetime.datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4] or 0), int(m[5] or 0))


def _local(moment: datetime.datetime) -> datetime.datetime:
    return moment.astimezone() if moment.tzinfo else moment


def _comparable(moment: datetime.datetime) -> datetime.datetime:
    return moment.astimezone(datetime.UTC).replace(tzinfo=None) if moment.tzinfo else moment
