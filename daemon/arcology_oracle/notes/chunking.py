"""Split a heading into the texts that get one embedding each.

Every chunk's text is the heading's outline path line, a blank line, then a window of the
heading's ``text`` (its body with links turned into their descriptions). The path line is
``" > ".join([file_title, *olp, title])`` for a heading and ``file_title`` for the
file-level record, so each window can be found and understood on its own.

A body longer than ``max_chars`` is cut into windows of at most ``max_chars`` characters
(not counting the path line) on paragraph boundaries (blank lines). Blocks
(``#+begin_...`` to ``#+end_...``) and tables (runs of lines starting with ``|``) are never
cut while they fit in a window; one that does not is cut between lines, and a single line
longer than a window between characters. Each window after the first starts with the
trailing paragraph(s) of the previous one, as many as fit in ``overlap`` characters (none
when the last paragraph alone is longer). A heading with an empty body yields one chunk
holding just its path line, so every heading can be found by vector. Deterministic.
"""

from __future__ import annotations

import re

from .records import Chunk, Heading, sha256_hex

_BEGIN_RE = re.compile(r"^[ \t]*#\+begin_(\S+)", re.IGNORECASE)
_END_RE = re.compile(r"^[ \t]*#\+end_(\S+)", re.IGNORECASE)
_TABLE_RE = re.compile(r"^[ \t]*\|")
_SEP = "\n\n"


def path_line(heading: Heading, file_title: str) -> str:
    """The outline path line that starts every chunk of ``heading``."""
    if heading.level == 0:
        return file_title
    return " > ".join([file_title, *heading.olp, heading.title])


def chunk_heading(
    heading: Heading, file_title: str, max_chars: int = 2000, overlap: int = 200
) -> list[Chunk]:
    """The chunks of ``heading`` (at least one), numbered from 0; see the module docstring."""
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    head = path_line(heading, file_title)
    body = heading.text.strip()
    windows = split_windows(body, max_chars, max(0, overlap)) if body else [""]
    texts = [head + _SEP + w if w else head for w in windows]
    return [Chunk(ordinal=i, text=t, hash=sha256_hex(t)) for i, t in enumerate(texts)]


def split_windows(body: str, max_chars: int, overlap: int) -> list[str]:
    """``body`` cut into windows of at most ``max_chars``, consecutive ones sharing about
    ``overlap`` characters; the body itself when it fits."""
    if len(body) <= max_chars:
        return [body]
    units: list[str] = []
    for unit in _units(body):
        units.extend(_fit(unit, max_chars) if len(unit) > max_chars else [unit])

    windows: list[str] = []
    current: list[str] = []
    size = 0  # length of _SEP.join(current)
    for unit in units:
        added = len(unit) + (len(_SEP) if current else 0)
        if current and size + added > max_chars:
            windows.append(_SEP.join(current))
            current = _tail(current, overlap)
            size = len(_SEP.join(current))
            # Drop overlap from the front until the new unit fits after it.
            while current and size + len(_SEP) + len(unit) > max_chars:
                current.pop(0)
                size = len(_SEP.join(current))
            added = len(unit) + (len(_SEP) if current else 0)
        current.append(unit)
        size += added
    if current:
        windows.append(_SEP.join(current))
    return windows


def _units(body: str) -> list[str]:
    """Paragraphs, with blocks and tables kept whole (blank lines inside them included)."""
    units: list[str] = []
    current: list[str] = []
    block: str | None = None
    for line in body.split("\n"):
        if block is None:
            if not line.strip():
                if current:
                    units.append("\n".join(current))
                    current = []
                continue
            m = _BEGIN_RE.match(line)
            if m:
                block = m.group(1).lower()
        else:
            m = _END_RE.match(line)
            if m and m.group(1).lower() == block:
                block = None
        current.append(line)
    if current:
        units.append("\n".join(current).rstrip())
    return [u for u in units if u]


def _fit(unit: str, max_chars: int) -> list[str]:
    """Cut an oversized unit: between blocks/tables/lines, then inside them between lines,
    and a line longer than ``max_chars`` between characters."""
    parts: list[str] = []
    for segment in _segments(unit.split("\n")):
        text = "\n".join(segment)
        parts.extend([text] if len(text) <= max_chars else _cut_lines(segment, max_chars))
    return [p for p in _pack(parts, max_chars) if p.strip()]


def _pack(parts: list[str], max_chars: int) -> list[str]:
    """Join consecutive ``parts`` with newlines into pieces of at most ``max_chars``."""
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for part in parts:
        added = len(part) + (1 if current else 0)
        if current and size + added > max_chars:
            pieces.append("\n".join(current))
            current, size, added = [], 0, len(part)
        current.append(part)
        size += added
    if current:
        pieces.append("\n".join(current))
    return pieces


def _segments(lines: list[str]) -> list[list[str]]:
    """Group lines into blocks, tables and single other lines."""
    segments: list[list[str]] = []
    i = 0
    while i < len(lines):
        j = i + 1
        m = _BEGIN_RE.match(lines[i])
        if m:
            name = m.group(1).lower()
            while j < len(lines):
                end = _END_RE.match(lines[j])
                j += 1
                if end and end.group(1).lower() == name:
                    break
        elif _TABLE_RE.match(lines[i]):
            while j < len(lines) and _TABLE_RE.match(lines[j]):
                j += 1
        segments.append(lines[i:j])
        i = j
    return segments


def _cut_lines(lines: list[str], max_chars: int) -> list[str]:
    parts: list[str] = []
    for line in lines:  # an empty line stays an (empty) part
        parts.extend([line[i : i + max_chars] for i in range(0, len(line), max_chars)] or [""])
    return _pack(parts, max_chars)


def _tail(units: list[str], overlap: int) -> list[str]:
    """The trailing units whose joined length fits in ``overlap``."""
    tail: list[str] = []
    size = 0
    for unit in reversed(units):
        added = len(unit) + (len(_SEP) if tail else 0)
        if size + added > overlap:
            break
        tail.insert(0, unit)
        size += added
    return tail
