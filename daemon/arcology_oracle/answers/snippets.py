"""Snippets: one line of a heading's text as a reader sees it, for every result.

A result's ``snippet`` (``/similar``, ``/search``, ``/suggest-links``, the MCP tools, the
web page) is made here and nowhere else (:func:`.retrieval.to_results` calls
:func:`snippet_of`): the lines of the heading's text a reader reads, joined into one line of
at most 160 characters.

* Left out: drawers (``:LOGBOOK:`` ... ``:END:``) and property lines (``:KEY: value``),
  keyword lines (``#+caption:``, ``#+results:``, and the ``#+begin_…`` / ``#+end_…``
  lines of blocks), comments (``# …``), planning lines (``SCHEDULED:``, ``DEADLINE:``,
  ``CLOSED:``), table rules (``|---+---|``) and heading lines.
* Kept: prose; the lines inside a block (a quote, an example, code: text written there,
  not read as Org); a table row as its non-empty cells joined by `` · `` (as the Emacs
  side reads a row: ``arcology-oracle--plain-text``).
* Org's escape comma goes, by ``org-unescape-code-in-string``'s rule: one comma before
  ``*`` or ``#+`` at a line's start (after blanks and other commas), the comma a capture
  puts before a line Org would read as structure (``,#+title: …``, ``,* …``) and Org
  before such a line in a block. The line is then the text as written (``#+title: …``),
  neither syntax nor left out; any other comma stays.

Why before the lines are joined: once joined, a table rule or a ``#+begin_src`` is no
longer a line of its own, and no client can tell it from the prose around it.

A drawer or a block counts as one only when it is closed further down (Org reads an
unclosed ``:LOGBOOK:`` or ``#+begin_src`` as a line of text), so one missing ``:END:``
never swallows the rest of a note. For ``/search`` (and ``/similar`` in keyword mode)
the snippet is FTS5's window around the words matched: that window is a verbatim piece
of the heading's text, so it is found in the text and read there, the lines above it
deciding whether it starts inside a drawer or a block.

The work is bounded by the line made, not by the heading: reading stops once the line is
full (a year of journal under one heading costs what its first lines cost).
"""

from __future__ import annotations

import re

LIMIT = 160
# What FTS5's snippet() puts where its window does not reach the text's start or end
# (the ellipsis of store.search's snippet arguments).
ELLIPSIS = " … "
# A line that opens a drawer (``:LOGBOOK:``), a line that closes one.
_DRAWER = re.compile(r"[ \t]*:([\w-]+):[ \t]*")
_DRAWER_END = re.compile(r"^[ \t]*:END:[ \t]*$", re.MULTILINE | re.IGNORECASE)
# A property line outside a drawer (``:KEY: value``, ``:KEY+: value``).
_PROPERTY = re.compile(r"[ \t]*:[\w-]+\+?:(?:[ \t].*)?")
_BEGIN = re.compile(r"[ \t]*#\+begin_(\w+)", re.IGNORECASE)
_BLOCK_END = re.compile(r"^[ \t]*#\+end_(\w+)", re.MULTILINE | re.IGNORECASE)
# Keyword lines (an unclosed block's delimiter among them), comments, planning lines,
# table rules, heading lines (stars at the margin: an indented "* " is a list item).
_SYNTAX = re.compile(r"[ \t]*(?:#\+|#(?:[ \t]|$)|(?:SCHEDULED|DEADLINE|CLOSED):|\|-)|\*+[ \t]")
_TABLE_ROW = re.compile(r"[ \t]*\|")
# The lines that may change whether a line is in a block or a drawer.
_STATE_LINE = re.compile(r"^[ \t]*(?::[\w-]+:|#\+(?:begin|end)_\w+).*$", re.MULTILINE | re.IGNORECASE)
# A line that may be anything but prose (more than :func:`readable` leaves out), or an
# escaped line (:data:`_ESCAPE`).
_MAYBE_SYNTAX = re.compile(r"^[ \t]*(?:[:#|*]|,+(?:\*|#\+)|SCHEDULED:|DEADLINE:|CLOSED:)", re.MULTILINE)
# Org's escape comma (``org-unescape-code-in-string``): the last of the commas before a
# ``*`` or ``#+`` that starts a line, after blanks.
_ESCAPE = re.compile(r"([ \t]*,*),(?=\*|#\+)")


def snippet_of(text: str, fragment: str | None = None, limit: int = LIMIT) -> str:
    """One line (at most ``limit`` characters) of the readable lines of ``text`` (see
    the module docstring): those of ``fragment``, FTS5's window of ``text`` around the
    words matched, when given and it holds any, else those from the start. "" when
    ``text`` holds none (only a table rule, a drawer...)."""
    text = text or ""
    if fragment:
        line = _of_fragment(text, fragment, limit)
        if line:
            return line
    if len(text) <= 4 * limit and not _MAYBE_SYNTAX.search(text):
        return one_line(text, limit)  # prose only, as most headings' text: the same line
    return one_line(readable(text, enough=limit), limit)


def readable(text: str, begin: int = 0, end: int | None = None, *, enough: int | None = None) -> str:
    """The readable lines of ``text`` (see the module docstring) that overlap
    ``text[begin:end]``, each cut to that range, without Org's escape comma (when the
    range holds the line's start) and collapsed, joined by one space.
    With ``enough``, reading stops once more than that many characters are made (and a
    line is read in its first ``4 * enough`` characters only)."""
    end = len(text) if end is None else end
    pieces: list[str] = []
    size = 0
    start = text.rfind("\n", 0, begin) + 1  # the line ``begin`` is in
    ends = _Ends(text)
    block, drawer = _state_at(text, start, ends)
    while start <= len(text) and start < end:
        stop = text.find("\n", start)
        stop = len(text) if stop < 0 else stop
        line = text[start:stop]
        show = row = False
        block, drawer, kind = ends.after(line, stop, block, drawer)
        if kind == "block":
            show = True
        elif kind == "text" and not (_PROPERTY.fullmatch(line) or _SYNTAX.match(line)):
            show, row = True, _TABLE_ROW.match(line) is not None
        if show and stop > begin:
            lo = max(start, begin)
            hi = min(stop, end) if enough is None else min(stop, end, lo + 4 * enough)
            piece = text[lo:hi]
            if lo == start and (escaped := _ESCAPE.match(piece)):
                piece = escaped[1] + piece[escaped.end() :]
            piece = " · ".join(c for c in (p.strip() for p in piece.split("|")) if c) if row else collapsed(piece)
            if piece:
                pieces.append(piece)
                size += len(piece) + 1
                if enough is not None and size > enough:
                    break
        start = stop + 1
    return " ".join(pieces)


def _state_at(text: str, upto: int, ends: _Ends) -> tuple[re.Pattern | None, bool]:
    """``(the closing line of the block, in a drawer)`` at offset ``upto`` of ``text`` (a
    line's start), as :func:`readable` would have them after reading the lines above:
    only the lines that may open or close a block or a drawer are looked at (a search
    window at the end of a long heading skims its text once)."""
    block: re.Pattern | None = None
    drawer = False
    for found in _STATE_LINE.finditer(text, 0, upto):
        block, drawer, _ = ends.after(found[0], found.end(), block, drawer)
    return block, drawer


class _Ends:
    """Where ``text``'s drawers and blocks can close: whether an ``:END:`` line, or the
    ``#+end_`` line of a block of some name, starts at or after an offset. Found in one
    pass over the text, when first asked: looking ahead from each opening line instead
    took time quadratic in the lines (seconds for 20,000 ``:smile:`` lines, none of
    them closed)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._drawer_end: int | None = None  # the start of the last :END: line, -1 for none
        self._block_end: dict[str, int] | None = None  # lower-case name -> start of its last end line

    def after(
        self, line: str, stop: int, block: re.Pattern | None, drawer: bool
    ) -> tuple[re.Pattern | None, bool, str | None]:
        """The states (the closing line of the block, in a drawer) after ``line``, which
        ends at ``stop``, from those before it; and how the line reads: ``"block"`` (a
        line inside a block), ``"text"`` (outside any: prose or other syntax) or None (a
        drawer's line, or a block's or a drawer's first or last)."""
        if block is not None:
            return (None, drawer, None) if block.match(line) else (block, drawer, "block")
        if drawer:
            return None, _DRAWER_END.match(line) is None, None
        if opened := _DRAWER.fullmatch(line):
            return None, opened[1].upper() != "END" and self.drawer_after(stop), None
        if begun := _BEGIN.match(line):
            return self.block_after(begun[1], stop), False, None
        return None, False, "text"

    def drawer_after(self, offset: int) -> bool:
        if self._drawer_end is None:
            self._drawer_end = max((m.start() for m in _DRAWER_END.finditer(self.text)), default=-1)
        return self._drawer_end >= offset

    def block_after(self, name: str, offset: int) -> re.Pattern | None:
        """The line closing a block ``name`` begun before ``offset``, when ``text`` holds
        one after it (else the block is none: Org reads its first line as text)."""
        if self._block_end is None:
            self._block_end = {m[1].lower(): m.start() for m in _BLOCK_END.finditer(self.text)}
        if self._block_end.get(name.lower(), -1) < offset:
            return None
        return re.compile(rf"^[ \t]*#\+end_{re.escape(name)}\b", re.MULTILINE | re.IGNORECASE)


def _of_fragment(text: str, fragment: str, limit: int) -> str:
    """The snippet of FTS5's ``fragment`` of ``text``: its readable lines, with an
    ellipsis where FTS5 put one (the window does not reach the text's start or end);
    "" when it holds none."""
    lead = fragment.startswith(ELLIPSIS)
    trail = fragment.endswith(ELLIPSIS) and len(fragment) > len(ELLIPSIS)
    core = fragment[len(ELLIPSIS) if lead else 0 : len(fragment) - len(ELLIPSIS) if trail else len(fragment)]
    at = text.find(core) if core else -1
    # Not a piece of this text (it changed since the search): the fragment read alone.
    body = readable(core, enough=limit) if at < 0 else readable(text, at, at + len(core), enough=limit)
    if not body:
        return ""
    return one_line(("… " if lead else "") + body + (" …" if trail else ""), limit)


def one_line(text: str, limit: int = LIMIT) -> str:
    """``text`` collapsed to one line of at most ``limit`` characters.

    A long text is collapsed from its start only while that decides the line: collapsing
    is done run by run, so the collapse of a prefix is a prefix of the whole's (its last
    run of spaces aside), and once that is over ``limit`` characters the whole's line is
    too, with the same first ``limit - 1``. (Each result's snippet falls back to its
    heading's whole text: collapsing all of it was 2% of a /similar.)"""
    if limit > 0 and len(text) > 4 * limit:
        head = collapsed(text[: 4 * limit])
        if len(head) > limit:
            return head[: limit - 1].rstrip() + "…"
    line = collapsed(text)
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def collapsed(text: str) -> str:
    """``text`` with each run of white space one space, trimmed (``str.split``'s white
    space: what ``\\s`` matches; three times as fast as a regex substitution)."""
    return " ".join(text.split())
