"""Pure org text edits for memory: the heading a capture appends, the head of a new
daily note, and removing a captured heading again.

Nothing here touches the disk; :mod:`arcology_oracle.index.memory` reads and writes the files.
A captured heading looks like this (its property marks it as written by the daemon, which
is what lets ``/forget`` delete it and nothing else)::

    * Title :tag:
    :PROPERTIES:
    :ID:       6f0c...
    :CREATED:  [2026-12-03 Thu 07:30]
    :CAPTURED_BY: arcology-oracle
    :END:
    The text.
"""

from __future__ import annotations

import datetime
import re
import uuid
from dataclasses import dataclass

from ..errors import BadRequest

CAPTURED_BY = "CAPTURED_BY"
CAPTURED_BY_VALUE = "arcology-oracle"
TITLE_CHARS = 60
_TAG_RE = re.compile(r"^[\w@#%]+$", re.UNICODE)
_HEADING_RE = re.compile(r"^(\*+)[ \t]")
_PROPERTY_RE = re.compile(r"^[ \t]*:([^:\s]+):[ \t]*(.*?)[ \t]*$")
_SPACE_RE = re.compile(r"\s+")


class NotCaptured(Exception):
    """The heading exists but the daemon did not write it (it belongs to the user)."""


@dataclass(frozen=True)
class Capture:
    """A heading to append: its ID, title and the org text of the whole subtree."""

    id: str
    title: str
    text: str


def inactive_timestamp(moment: datetime.datetime) -> str:
    """``[2026-12-03 Thu 07:30]`` (English day names, as Org writes them by default)."""
    day = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")[moment.weekday()]
    return f"[{moment:%Y-%m-%d} {day} {moment:%H:%M}]"


def clean_tags(tags: object) -> tuple[str, ...]:
    """Validated tags: a list of Org tag words (letters, digits, ``_@#%``). BadRequest else."""
    if tags is None:
        return ()
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise BadRequest("tags must be a list of strings")
    out: list[str] = []
    for tag in tags:
        tag = tag.strip().strip(":")
        if not _TAG_RE.match(tag):
            raise BadRequest(f"invalid tag {tag!r}: Org tags hold letters, digits, _, @, # and % only")
        if tag not in out:
            out.append(tag)
    return tuple(out)


def make_capture(
    text: str,
    *,
    title: str | None,
    tags: tuple[str, ...],
    now: datetime.datetime,
    node_id: str | None = None,
    source: str | None = None,
) -> Capture:
    """The level-1 heading for ``text``. The title is ``title`` or the text's first words;
    body lines that would read as headings (``* ...`` at the start of a line) are indented
    by one space, which Org reads as a list item, so the text can never open a heading.
    ``source`` (one line: where the text came from, an org link) becomes ``:SOURCE:``."""
    body = text.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    if not body.strip():
        raise BadRequest("text must not be empty")
    name = _SPACE_RE.sub(" ", title if title and title.strip() else body).strip()
    if len(name) > TITLE_CHARS and not (title and title.strip()):
        name = name[: TITLE_CHARS - 1].rstrip() + "…"
    node_id = node_id or str(uuid.uuid4())
    tag_text = f" :{':'.join(tags)}:" if tags else ""
    lines = [
        f"* {name}{tag_text}",
        ":PROPERTIES:",
        f":ID:       {node_id}",
        f":CREATED:  {inactive_timestamp(now)}",
        f":{CAPTURED_BY}: {CAPTURED_BY_VALUE}",
        *([f":SOURCE:   {_one_line(source)}"] if source and source.strip() else []),
        ":END:",
    ]
    lines += [(" " + line if _HEADING_RE.match(line) else line) for line in body.split("\n")]
    return Capture(node_id, name, "\n".join(lines) + "\n")


def _one_line(text: str) -> str:
    """``text`` on one line: a property value cannot hold a newline."""
    return _SPACE_RE.sub(" ", text).strip()


def new_file_head(title: str, file_id: str | None = None) -> str:
    """The head of a new note file: a file-level ``:ID:`` drawer and ``#+title:``."""
    return f":PROPERTIES:\n:ID:       {file_id or uuid.uuid4()}\n:END:\n#+title: {title}\n"


def append_capture(existing: str, capture: Capture) -> tuple[str, int]:
    """``existing`` with the capture appended (after a newline if it lacks one), and the
    1-based line of the new heading."""
    if existing and not existing.endswith("\n"):
        existing += "\n"
    line = existing.count("\n") + 1
    return existing + capture.text, line


def find_heading(lines: list[str], node_id: str) -> tuple[int, int] | None:
    """``(start, end)`` 0-based line indexes (end exclusive) of the subtree of the heading
    whose property drawer holds ``:ID: node_id``, or None."""
    start = None
    for i, line in enumerate(lines):
        if _HEADING_RE.match(line):
            start = i
            continue
        if start is None:
            continue
        prop = _PROPERTY_RE.match(line)
        if prop and prop[1].upper() == "ID" and prop[2] == node_id and _in_drawer(lines, start, i):
            level = len(_HEADING_RE.match(lines[start])[1])
            end = start + 1
            while end < len(lines):
                m = _HEADING_RE.match(lines[end])
                if m and len(m[1]) <= level:
                    break
                end += 1
            return start, end
    return None


def _in_drawer(lines: list[str], heading: int, line: int) -> bool:
    """Whether ``line`` lies in the property drawer right below ``heading``."""
    i = heading + 1
    # Planning lines (SCHEDULED, CLOSED ...) may stand between heading and drawer.
    while i < line and not lines[i].strip().upper() == ":PROPERTIES:":
        if not re.match(r"^\s*(SCHEDULED|DEADLINE|CLOSED):", lines[i]):
            return False
        i += 1
    if i >= line:
        return False
    return all(lines[j].strip().upper() != ":END:" for j in range(i, line))


def heading_properties(lines: list[str], start: int) -> dict[str, str]:
    """The property drawer of the heading at ``start`` (keys upper-cased)."""
    props: dict[str, str] = {}
    i = start + 1
    while i < len(lines) and re.match(r"^\s*(SCHEDULED|DEADLINE|CLOSED):", lines[i]):
        i += 1
    if i >= len(lines) or lines[i].strip().upper() != ":PROPERTIES:":
        return props
    for line in lines[i + 1 :]:
        if line.strip().upper() == ":END:":
            break
        prop = _PROPERTY_RE.match(line)
        if prop:
            props[prop[1].upper()] = prop[2]
    return props


def remove_capture(text: str, node_id: str) -> tuple[str, int, int] | None:
    """``text`` without the captured heading ``node_id``, the heading's 1-based line and
    the number of lines removed; None when no heading has that ID. Raises NotCaptured
    when the heading is not one the daemon wrote, or when headings were added under it
    (those are the user's)."""
    lines = text.split("\n")
    found = find_heading(lines, node_id)
    if found is None:
        return None
    start, end = found
    if heading_properties(lines, start).get(CAPTURED_BY) != CAPTURED_BY_VALUE:
        raise NotCaptured(
            f"the heading {node_id} was not captured by arcology-oracle: it is yours to edit "
            "(tag it private to keep it out of the index)"
        )
    if any(_HEADING_RE.match(line) for line in lines[start + 1 : end]):
        raise NotCaptured(f"headings were added under the captured heading {node_id}: edit it in Emacs instead")
    # The last heading of a file ends with the file's final newline: keep that newline.
    if end == len(lines) and lines[-1] == "":
        end -= 1
    kept = lines[:start] + lines[end:]
    return "\n".join(kept), start + 1, end - start
