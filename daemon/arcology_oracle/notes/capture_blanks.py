"""The form of a captured line that its ``:CAPTURE_HASH:`` covers (:mod:`.capture`): each
tab as the spaces that reach the same column.

Emacs's ``whitespace-cleanup`` (a common ``before-save-hook``) changes how a line's
blanks are made without moving any character: with ``indent-tabs-mode`` off it turns
leading tabs (and tabs after spaces) into spaces, with it on 8 leading spaces (and spaces
before a tab) into a tab (``untabify``, ``tabify``). Hashed in this form, a capture that
such a save changed still matches its hash, so the user can forget a capture they never
edited; its text is written as sent, tabs and all.

Contract: two lines have one form only when they differ in nothing but their tabs and
spaces, each run of blanks still a run of blanks between the same characters: a change
of any other character, a line added or removed, a blank run added or removed, never
matches. Columns are counted as Emacs counts them (Emacs 28, ``tab-width`` 8, which Org
requires): a wide East Asian character 2, a combining or format character (the escapes'
zero-width space) 0, a control character 2 (``^M``), a byte that is not UTF-8 4
(``\\377``), any other 1; so a change that moves a character to another column does not
match either. A character Emacs counts otherwise can only keep a capture so saved from
matching (a 409), never let one match that differs in more than its blanks.
"""

from __future__ import annotations

import unicodedata

from .capture_title import TRAILING_BLANKS

TAB_WIDTH = 8


def blank_form(line: bytes) -> bytes:
    """``line`` (UTF-8, with its line ending) with each tab replaced by the spaces up to
    the next tab stop; a line without tabs is returned as it is."""
    if b"\t" not in line:
        return line
    out: list[str] = []
    column = 0
    for char in line.decode("utf-8", "surrogateescape"):
        if char == "\t":
            spaces = TAB_WIDTH - column % TAB_WIDTH
            out.append(" " * spaces)
            column += spaces
        else:
            out.append(char)
            column += _width(char)
    return "".join(out).encode("utf-8", "surrogateescape")


def is_blank_line(line: bytes) -> bool:
    """Whether ``line`` (UTF-8, without its line ending) holds only blanks a save may
    delete at a line's end (:data:`~.capture_title.TRAILING_BLANKS`: spaces, tabs, and
    the no-break, ideographic and zero-width spaces Emacs's ``delete-trailing-whitespace``
    deletes too), or nothing: what decides AFTER_BLANKS from AFTER_TEXT (:mod:`.capture`)
    when a capture is written and when it is forgotten, by one rule."""
    return not line.decode("utf-8", "surrogateescape").strip(TRAILING_BLANKS)


def _width(char: str) -> int:
    """The columns Emacs gives ``char`` (see the module docstring)."""
    if char < " " or char == "\x7f":
        return 2
    if "\udc80" <= char <= "\udcff":  # a byte that is not UTF-8, as surrogateescape keeps it
        return 4
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
