"""The title of a captured heading (:mod:`.capture`): the one given, else the first words
of the text as Org shows it, made safe to stand on a heading line."""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection

from .model_text import quiet_heading
from .org_escape import inert
from .org_syntax import DRAWER_END_RE, DRAWER_START_RE, HEADING_LINE_RE, PLANNING_RE, plain_title, split_heading_tags

TITLE_CHARS = 60
# What Emacs's delete-trailing-whitespace deletes at a line's end in an org buffer (Emacs
# 28: the characters of whitespace syntax), U+200B last.
TRAILING_BLANKS = " \t\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000\u200b"
_SPACE_RE = re.compile(r"\s+")
_DOUBLE_BRACKET_RE = re.compile(r"\[\[+|\]\]+")
_TITLE_KEYWORD_RE = re.compile(r"^[ \t]*#\+title:[ \t]*(.*)$", re.IGNORECASE)
_KEYWORD_OR_BLOCK_RE = re.compile(r"^[ \t]*#\+")
_PRIORITY_RE = re.compile(r"^((?:[A-Z]+[ \t]+)?)\[#[A-Za-z0-9]\][ \t]*")
_COMMENT_RE = re.compile(r"COMMENT(?:[ \t]|$)")
_ACTIVE_STAMP_RE = re.compile(r"<(\d{4}-\d{2}-\d{2}[^<>\n]*)>")
# Where a line of the captured text ends in the file: each of these is written as the
# file's line ending (:func:`~.capture.make_capture`). Not str.splitlines, which also
# breaks at U+2028, U+2029, U+0085 (and \v, \f, \x1c-\x1e), shown by Emacs inside a line.
_LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")


def capture_title(
    text: str, title: str | None, *, theirs: bool = False, keywords: Collection[str] = (), task: str | None = None
) -> str:
    """The heading's title: ``title``, else the first words of the text as Org shows it
    (:func:`_shown`); links turned into their descriptions, whitespace folded, and the
    brackets of a stray ``[[`` or ``]]`` turned into braces (so no link can open or close
    in it); a derived title is cut at a word boundary to ``TITLE_CHARS``; then made inert
    (:func:`~.org_escape.inert`); ``theirs``: the oracle's words, whose first word is no
    TODO keyword, priority or ``COMMENT`` (:func:`~.model_text.quiet_heading`: the user's
    typed ``TODO call mum`` is a task, as they meant; ``keywords``: those the target file
    declares, :mod:`.todo_keywords`); ``task``: a TODO state the title then starts with,
    a first word of its own that is ``TODO`` or that state not said twice."""
    given = bool(title and title.strip())
    name = _SPACE_RE.sub(" ", plain_title(title if given else _shown(text))).strip()
    name = _DOUBLE_BRACKET_RE.sub(lambda m: m[0].replace("[", "{").replace("]", "}"), name)
    if not given and len(name) > TITLE_CHARS:
        cut = name[: TITLE_CHARS - 1]
        space = cut.rfind(" ")
        if space > TITLE_CHARS // 3:
            cut = cut[:space]
        name = cut.rstrip() + "…"
    # Nothing Emacs's delete-trailing-whitespace (a common hook on save) would delete at
    # the line's end, or the capture, never edited, could not be forgotten once saved.
    name = inert(name).rstrip(TRAILING_BLANKS) or "…"
    if task and (said := name.split(" ", 1))[0] in (task, "TODO") and len(said) > 1:
        name = said[1]
    # After a task's state Org reads no second keyword, but a priority cookie still.
    name = quiet_heading(name, keywords) if theirs and not (task and not name.startswith("[#")) else name
    # "COMMENT" first makes the heading a commented one (left out of exports and the
    # agenda, its title read without the word): a zero-width space keeps it a word
    # (inside it when nothing follows: never last on the line).
    if _COMMENT_RE.match(name):
        name = "COMMENT\u200b" + name[len("COMMENT") :] if len(name) > len("COMMENT") else "COMMEN\u200bT"
    # A title ending like tags (`` :private:``) would be read as the heading's tags: a
    # zero-width space before its last colon keeps it text, the escape the Org manual
    # gives for markup.
    name = name[:-1] + "\u200b:" if split_heading_tags(name)[1] else name
    return f"{task} {name}" if task else name


def _shown(text: str) -> str:
    """``text`` as Org shows it, for a title derived from it (a region selected from a
    note starts with its heading or its ``#+title:``): a heading line's title without
    its stars, priority and tags, a ``#+title:`` line's value, no other keyword line,
    block delimiter, planning line or drawer; an active timestamp made inactive (one in
    the title would put the capture on the agenda). ``text`` itself when nothing is left.
    Lines are those Emacs shows (:data:`_LINE_BREAK_RE`)."""
    shown: list[str] = []
    lines = _LINE_BREAK_RE.split(text)
    ends = [j for j, line in enumerate(lines) if DRAWER_END_RE.match(line)]
    i = size = 0
    while i < len(lines) and size <= 4 * TITLE_CHARS:  # the title's words are found by then
        line = lines[i]
        if DRAWER_START_RE.match(line) and (after := bisect.bisect_right(ends, i)) < len(ends):
            i = ends[after] + 1
            continue
        if title := _TITLE_KEYWORD_RE.match(line):
            shown.append(title[1])
        elif HEADING_LINE_RE.match(line):
            shown.append(_PRIORITY_RE.sub(r"\1", split_heading_tags(line.lstrip("*").strip())[0]))
        elif not (_KEYWORD_OR_BLOCK_RE.match(line) or PLANNING_RE.match(line)):
            shown.append(line)
        size += len(shown[-1]) if shown else 0
        i += 1
    joined = "\n".join(shown)
    return _ACTIVE_STAMP_RE.sub(r"[\1]", joined) if joined.strip() else text
