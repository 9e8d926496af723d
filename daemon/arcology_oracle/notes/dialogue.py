"""Dialogue in a heading's body: turns with speakers and times, and scenes.

Pure text in, records out. A heading's body is a **dialogue** when most of its
paragraphs start with a speaker, ``Name: text`` (a chat log kept by hand, a transcript,
what ``arcology-oracle import`` writes), optionally after a time, ``[13:56] Name: text``
or ``[2023-05-08 Mon 13:56] Name: text``, with at least :data:`MIN_TURNS` turns by at
least two speakers (any number in a file ``arcology-oracle import`` wrote: its
``:IMPORTED_FROM:`` property). Each such line starts a **turn**; the lines after it up to the next
speaker line belong to it (a message of several paragraphs). Text before the first
speaker line is a turn without speaker.

A **scene** is a run of consecutive turns, embedded as one text (each turn is embedded
alone too: :func:`arcology_oracle.notes.turns.scene_chunks`); a turn is the unit of
evidence (:mod:`arcology_oracle.answers.windows`). A scene ends where the time
between two turns exceeds :data:`SCENE_GAP_MINUTES`, at a structural marker (an org
horizontal rule ``-----``, a line holding only a timestamp), or when adding the next
turn would pass :data:`SCENE_CHARS` (a scene cut by size starts again with the last
turns of the previous one, up to :data:`SCENE_OVERLAP_CHARS`). A single turn longer than
:data:`SCENE_MAX_CHARS` is a scene of its own, cut into windows when chunked.
"""

from __future__ import annotations

import datetime as _dt
import re
from .org_syntax import link_text
from .records import Turn

MIN_TURNS = 4
# Sizes in characters (about four per token). A scene is embedded whole: about 250
# word pieces, what small embedding models read (all-MiniLM-L6-v2 truncates at 256), and
# about an eighth of the /ask context, so a scene can be shown whole as evidence.
SCENE_CHARS = 1000
SCENE_MAX_CHARS = 1600
SCENE_OVERLAP_CHARS = 240
SCENE_GAP_MINUTES = 30
# A time without a date further back than this from the turn before it is on the next
# day (see _when): devices' clocks apart, the night the clocks go back or a turn edited in
# go back minutes, an hour; a reply the next morning to an evening's message goes back
# hours (19:40, then 08:00), and is the next day.
NEXT_DAY_AFTER = _dt.timedelta(hours=3)

# A speaker's name: a letter of any script (太郎, Ана), then up to four words, as the
# importer writes them (importers/render.py); the names it writes must read back as turns.
_NAME = r"[^\W\d_][\w.'\u2019-]*(?: [\w.'\u2019-]+){0,3}"
_STAMP = r"\[(?P<stamp>\d{4}-\d{2}-\d{2}(?: [^\s\]\d]+)?(?: \d{1,2}:\d{2}(?::\d{2})?)?|\d{1,2}:\d{2}(?::\d{2})?)\]"
SPEAKER_LINE_RE = re.compile(rf"^(?:{_STAMP}[ \t]+)?(?P<name>{_NAME}):[ \t]+(?P<text>\S.*)$")
_MARKER_RE = re.compile(rf"^[ \t]*(?:-{{5,}}|{_STAMP})[ \t]*$")
_NOT_NAMES = frozenset({"http", "https", "file", "id", "note", "notes", "todo", "see", "re", "ps", "tl;dr", "example", "e.g", "i.e"})


def _speaker(line: str) -> re.Match | None:
    m = SPEAKER_LINE_RE.match(line)
    if m is None or m["name"].lower() in _NOT_NAMES or "://" in line[: m.end("name") + 3]:
        return None
    return m


def _when(stamp: str | None, day: str | None, previous: str | None) -> str | None:
    """The ISO time of a turn stamped ``stamp`` in a heading dated ``day``, after a turn
    at ``previous``. A time without a date more than :data:`NEXT_DAY_AFTER` earlier than
    the one before it is on the next day (a chat kept past midnight or over a night), as
    the transcript importer reads it; one a little earlier is on the same day (two
    devices' clocks apart, a turn edited in)."""
    if not stamp:
        return previous or day
    date = re.match(r"\d{4}-\d{2}-\d{2}", stamp)
    clock = re.search(r"(\d{1,2}):(\d{2})", stamp)
    base = date[0] if date else ((previous or day or "")[:10] or None)
    if base is None:
        return None
    if not clock:
        return base
    when = f"{base}T{int(clock[1]):02d}:{clock[2]}"
    if not date and previous and "T" in previous and when < previous[:16]:
        try:
            back = _dt.datetime.fromisoformat(previous[:16]) - _dt.datetime.fromisoformat(when)
            if back <= NEXT_DAY_AFTER:  # clocks apart, a turn edited in: the same day
                return when
            base = (_dt.date.fromisoformat(base) + _dt.timedelta(days=1)).isoformat()
        except ValueError:
            return when
        when = f"{base}T{int(clock[1]):02d}:{clock[2]}"
    return when


def read_turns(body: str, day: str | None = None, *, known: bool = False) -> list[Turn]:
    """The turns of ``body`` (a heading's raw body) when it is a dialogue, else ``[]``.
    ``day`` is the heading's date (ISO), which turns without a time of their own take.
    ``known``: the file says it holds dialogue (``arcology-oracle import`` wrote it), so
    one speaker line is enough, however long the turns."""
    lines = body.split("\n")
    starts = [(i, m) for i, line in enumerate(lines) if (m := _speaker(line))]
    if not starts:
        return []
    if not known:
        paragraphs = sum(1 for i, line in enumerate(lines) if line.strip() and (i == 0 or not lines[i - 1].strip()))
        if len(starts) < MIN_TURNS or len({m["name"].lower() for _, m in starts}) < 2 or 2 * len(starts) < paragraphs:
            return []
    turns: list[Turn] = []
    when = day
    marker = False

    def add(speaker: str, first: int, last: int, stamp_when: str | None) -> None:
        nonlocal marker
        while last > first and not lines[last].strip():
            last -= 1
        span = lines[first : last + 1]
        if known:  # the importer's escapes (importers/render.py): one leading comma a line
            span = span[:1] + [line[1:] if line.startswith(",") else line for line in span[1:]]
        text = link_text("\n".join(span)).strip()
        if text:
            turns.append(Turn(len(turns), speaker, text, first + 1, last + 1, stamp_when, marker))
            marker = False

    if starts[0][0] > 0:
        add("", 0, starts[0][0] - 1, day)
    for n, (i, m) in enumerate(starts):
        end = starts[n + 1][0] - 1 if n + 1 < len(starts) else len(lines) - 1
        # A marker line inside the span ends the turn there; the next turn follows it.
        for j in range(i + 1, end + 1):
            if _MARKER_RE.match(lines[j]):
                stamp = _MARKER_RE.match(lines[j])["stamp"]
                add(m["name"], i, j - 1, when := _when(m["stamp"], day, when))
                marker = True
                if stamp:
                    when = _when(stamp, day, when)
                break
        else:
            add(m["name"], i, end, when := _when(m["stamp"], day, when))
    return turns


def _minutes(when: str | None) -> float | None:
    if not when or "T" not in when:
        return None
    try:
        return _dt.datetime.fromisoformat(when).timestamp() / 60
    except ValueError:
        return None


def scenes(turns: list[Turn]) -> list[tuple[int, int]]:
    """The scenes of ``turns`` as ``(first, last)`` ordinals (inclusive), in order; see
    the module docstring. Every turn is in at least one scene."""
    out: list[tuple[int, int]] = []
    first, size = 0, 0
    for t in turns:
        if t.ordinal == first:
            size = len(t.text)
            continue
        gap = _minutes(t.when), _minutes(turns[t.ordinal - 1].when)
        cut = t.marker or (None not in gap and gap[0] - gap[1] > SCENE_GAP_MINUTES)
        if cut:
            out.append((first, t.ordinal - 1))
            first, size = t.ordinal, len(t.text)
        elif size + 2 + len(t.text) > SCENE_CHARS:
            out.append((first, t.ordinal - 1))
            back = t.ordinal
            kept = 0
            while back - 1 > first and kept + len(turns[back - 1].text) + 2 <= SCENE_OVERLAP_CHARS:
                back -= 1
                kept += len(turns[back].text) + 2
            first, size = back, kept + len(t.text)
        else:
            size += 2 + len(t.text)
    if turns:
        out.append((first, len(turns) - 1))
    return out


def speaker_label(speakers: list[str]) -> str:
    """The speakers of a window, in order of appearance, joined: ``"Ana, Me"``."""
    seen = list(dict.fromkeys(s for s in speakers if s))
    return ", ".join(seen)
