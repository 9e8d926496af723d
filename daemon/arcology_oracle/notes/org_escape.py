"""Text made inert before the daemon writes it into the user's org files: the escapes a
capture (:mod:`.capture`) and an answer (:mod:`.conversations`) share.

Contracts (each checked with Emacs 28 and Org 9.5 in batch mode):

* **Structure lines** (:func:`escape_line`): a line Org would read as a heading (``*`` at
  the start), a keyword or block line (``#+...``, indented or not), a drawer line
  (``:NAME:`` alone, ``:END:``) or a footnote definition (``[fn:LABEL]`` at the start)
  gets a leading comma, Org's own escape (``org-escape-code-in-string``); Org shows the
  comma and reads a paragraph line.
* **Inert words** (:func:`inert`, :func:`escape_line` too): a zero-width space (U+200B,
  the escape the Org manual gives for markup) goes into each ``Local Variables:`` (any
  letter case, anywhere in the line, as Emacs searches for it), so no text sets a file's
  mode, coding or variables; and between two ``<``, so no ``<<target>>`` or
  ``<<<radio target>>>`` takes over the user's links; and after the ``[`` of each inline
  footnote definition with a label (``[fn:LABEL:text]``). A footnote the user refers to
  but has not defined yet would otherwise be defined by the daemon's text, which Org
  then shows, exports and jumps to as the user's (anonymous ``[fn::text]`` and plain
  references ``[fn:LABEL]`` define nothing and stay). Nothing else changes.
* **Diary sexps** (:func:`inert` too, in blocks and property values as well): Org's
  agenda evaluates every diary sexp in its files, asking nothing: a line starting with
  ``%%(`` or ``&%%(`` and a sexp timestamp ``<%%(...)>`` anywhere (``org-agenda-get-sexps``,
  ``org-agenda-get-timestamps``). A zero-width space goes before each such ``%%(``, so
  text the daemon writes into a daily (an agenda file for many) never runs as code.
* **Inline code** (:func:`inert` too, where Org reads objects: not in blocks or property
  values): an inline source block ``src_LANG{...}`` (``src_LANG[ARGS]{...}``) and an
  inline Babel call ``call_NAME(...)`` are code Org runs when the file is exported (their
  results are exported by default) and on ``C-c C-c``; a capture's title is a heading's
  title, exported too. A zero-width space goes between ``src`` (``call``) and its ``_``,
  as Org matches them case-sensitively (``org-element-inline-src-block-parser``,
  ``org-element-inline-babel-call-parser``), so no text the daemon writes runs as code
  in a user's export, whose own blocks they trust to run unasked. An export expands
  macros before it runs code, so a zero-width space goes into each ``{{{`` of a macro
  too (``{{{keyword(NONE)}}}`` expands to nothing: ``src{{{keyword(NONE)}}}_sh{...}``,
  or before ``#+begin_src``, would make code of what the escapes left as words), and
  between the ``@@`` of an export snippet (``@@latex:...@@`` and ``@@html:...@@`` go
  into the exported file as they are: a script in a published page, a ``\\write18`` in
  a LaTeX run with ``-shell-escape``).
* **Clocks** (:func:`inert` too, in blocks and property values as well): a zero-width
  space goes before the colon of a ``CLOCK:`` (any letter case) that starts a line, which
  Org reads as a clock line (counted in the file's clock tables), and of one followed by a
  timestamp ending the line, anywhere: ``org-find-open-clocks`` takes that for a clock
  left running, and each clocking in asks the user to resolve it, and writes into it.
* **Mode cookies** (:func:`inert` too): a zero-width space breaks each ``-*-``, so no
  text is read as a ``-*- mode/coding -*-`` cookie: on a file's first line, which a title
  in an empty file is, or anywhere in a file with CR line endings, whose "first line"
  Emacs's cookie search reads to the first line feed.
* **The user's mode line** (:func:`cookie_reach`): Emacs reads a file's ``-*-`` cookie
  on its first line (its first two when it starts with ``#!`` or ``'\\"``,
  ``set-auto-mode-1``): the mode on the line as it shows it, the coding on the line as
  the file's bytes hold it, up to a line feed and within its first 1024 bytes (a file
  with CR line endings is one line there). A forget that would bring a ``-*-`` of the
  user's there is refused (the caller's 409).
* **The user's Local Variables** (:func:`hides_local_variables`): Emacs reads a file's
  ``Local Variables`` block only in its last 3000 characters; an append that would put
  the block further from the end is refused (the caller's 409).
* **Control characters** (:func:`refuse_controls`): NUL and the other C0 controls but tab,
  line feed and carriage return are refused (Emacs opens a file holding a NUL as binary,
  a form feed starts a page that hides the user's ``Local Variables`` block above it, an
  ESC can make it guess ISO-2022), never written and never dropped.
"""

from __future__ import annotations

import re

from ..errors import BadRequest

ZWSP = "\u200b"
# A footnote label: Org's is [-_[:word:]]+ (org-footnote-re), and in an org buffer
# [:word:] takes in ', %, $, combining marks, U+2028 and more: anything but what ends a
# label (ASCII blanks only: Python's \s would stop at spaces Org reads as word letters).
FOOTNOTE_LABEL = r"[^\]\[: \t\n\r\f\v]+"
# Lines Org would read as structure (see the module docstring).
_UNSAFE_LINE_RE = re.compile(rf"^(?:\*+(?:[ \t]|$)|[ \t]*#\+|[ \t]*:[\w-]*:[ \t]*$|\[(?i:fn):{FOOTNOTE_LABEL}\])")
# Python's case folding matches every spelling Emacs's does (and a few more).
_LOCAL_VARIABLES_RE = re.compile(r"(?<=local)(?= variables:)", re.IGNORECASE)
_TARGET_RE = re.compile(r"(?<=<)(?=<)")
_INLINE_FOOTNOTE_RE = re.compile(rf"(?<=\[)(?=(?i:fn):{FOOTNOTE_LABEL}:)")  # Org: any letter case
_MODE_COOKIE_RE = re.compile(r"(?<=-)(?=\*-)")
# Org's inline source blocks and Babel calls (case-sensitive, as Org reads them).
_INLINE_CODE_RE = re.compile(r"(?<=src)(?=_[^ \t\n\[{]+[{\[])|(?<=call)(?=_[^ \t\n\[(]+[(\[])")
# Org's macros ({{{name...) and export snippets (@@backend:...).
_MACRO_OR_SNIPPET_RE = re.compile(r"(?<=\{)(?=\{\{[a-zA-Z])|(?<=@)(?=@[-A-Za-z0-9]+:)")
# Where Org's agenda would read a diary sexp: "%%(" at a line's start (after "&"), "<%%(".
_DIARY_SEXP_RE = re.compile(r"(?:^&?|(?<=<))(?=%%\()", re.MULTILINE)
# A clock line (org-clock-line-re) and an open clock (org-find-open-clocks), in any case.
_CLOCK_RE = re.compile(r"(?im)(?:^[ \t]*clock|clock(?=: \[.*\]$))(?=:)")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x0c\x0e-\x1f]")
# How far from a file's end Emacs looks for its Local Variables block (hack-local-variables).
LOCAL_VARIABLES_REACH = 3000
# ("\r": the end of a CRLF line in a file Emacs reads as LF, where it is a character.)
_LOCAL_VARIABLES_LINE = re.compile(r"local variables:[ \t\r]*$", re.IGNORECASE | re.MULTILINE)
# A first line after which Emacs reads the -*- cookie on the second (file-auto-mode-skip),
# and how far into a file it looks for "coding:" before it reads one (find-auto-coding).
_AUTO_MODE_SKIP = (b"#!", b"'\\\"")
CODING_REACH = 1024
_CONTROL_NAMES = {"\x00": "NUL", "\x0b": "vertical tab", "\x0c": "form feed", "\x1b": "ESC"}


def inert(text: str, *, targets: bool = True) -> str:
    """``text`` with a zero-width space in each ``Local Variables:`` and each ``-*-``,
    before each ``%%(`` Org's agenda would evaluate and the colon of each ``CLOCK:`` Org
    would read as a clock and, unless ``targets`` is false (a
    property value or a block's line, where Org reads no objects), between two ``<``, in
    each labelled inline footnote definition, in each inline source block or Babel call
    (``src_``, ``call_``), macro (``{{{``) and export snippet (``@@``)."""
    text = diary_sexps_quieted(_MODE_COOKIE_RE.sub(ZWSP, _LOCAL_VARIABLES_RE.sub(ZWSP, text)))
    text = _CLOCK_RE.sub(lambda m: m[0] + ZWSP, text)
    if not targets:
        return text
    text = _INLINE_CODE_RE.sub(ZWSP, _INLINE_FOOTNOTE_RE.sub(ZWSP, _TARGET_RE.sub(ZWSP, text)))
    return _MACRO_OR_SNIPPET_RE.sub(ZWSP, text)


def diary_sexps_quieted(text: str, *, cr_breaks: bool = False) -> str:
    """``text`` with a zero-width space before each ``%%(`` Org's agenda would evaluate
    (see the module docstring), and nothing else changed; ``cr_breaks``: a lone carriage
    return starts a line too (text that may be saved into a file with CR line endings)."""
    if cr_breaks and "\r" in text:
        return "\r".join(diary_sexps_quieted(line) for line in text.split("\r"))
    return _DIARY_SEXP_RE.sub(lambda found: found[0] + ZWSP, text)


def escape_line(line: str) -> str:
    """``line`` made inert: a leading comma when Org would read it as structure, and the
    zero-width spaces of :func:`inert`."""
    line = inert(line)
    return "," + line if _UNSAFE_LINE_RE.match(line) else line


def without_controls(text: str) -> str:
    """``text`` with each control character :func:`refuse_controls` refuses replaced by
    U+FFFD: for text no one can be asked to send again (a model's answer)."""
    return _CONTROL_RE.sub("\ufffd", text)


def refuse_controls(**parts: str | None) -> None:
    """BadRequest naming the part and the character when one of ``parts`` (name ->
    text) holds a control character other than tab, line feed and carriage return."""
    for name, text in parts.items():
        found = _CONTROL_RE.search(text or "")
        if found:
            char = found[0]
            what = _CONTROL_NAMES.get(char, "control character")
            raise BadRequest(
                f"{name} holds a {what} (U+{ord(char):04X}) at character {found.start()}: "
                "control characters other than tab and line breaks cannot be written into an org file"
            )


def cookie_reach(data: bytes, start: int, eol: bytes) -> tuple[int, int]:
    """Where the bytes of the file ``data`` (its text from ``start``: after a byte order
    mark; line ending ``eol``) in which Emacs reads a ``-*-`` cookie end: for the mode,
    then for the coding (see the module docstring)."""
    return _lines_end(data, start, eol), min(_lines_end(data, start, b"\n"), CODING_REACH)


def cookie_brought_up(data: bytes, bom: int, first: int, last: int, eol: bytes) -> int | None:
    """The 1-based line of a ``-*-`` of ``data`` that taking bytes ``[first, last)`` out
    would bring where Emacs reads the file's mode or coding (:func:`cookie_reach`) from
    where it was inert; None when none would be (a forget must then refuse)."""
    left = data[:first] + data[last:]  # (no -*- spans the cut: a line ending, then a heading)
    for before, after in zip(cookie_reach(data, bom, eol), cookie_reach(left, bom, eol)):
        for found in re.finditer(rb"-\*-", left[:after]):
            at = found.start() + (last - first if found.start() >= first else 0)
            if at + 3 > before:
                return data.count(eol, bom, at) + 1
    return None


def _lines_end(data: bytes, start: int, eol: bytes) -> int:
    end = data.find(eol, start)
    if end >= 0 and data.startswith(_AUTO_MODE_SKIP, start):
        end = data.find(eol, end + len(eol))
    return len(data) if end < 0 else end


def hides_local_variables(tail: str, added: str, eol: str = "\n") -> bool:
    """Whether ``added`` after a file ending in ``tail`` puts the file's ``Local
    Variables`` block beyond :data:`LOCAL_VARIABLES_REACH` characters from its end, where
    Emacs no longer looks for it (the user's ``fill-column``, ``coding`` or mode would
    silently stop applying). False when Emacs finds no block there now. Both are counted
    as Emacs's buffer holds them for the file's line ending ``eol`` (``line_endings.file_eol``):
    in a CRLF or CR file each of those is one newline; in an LF file a CR is a character
    of its own, whatever follows it."""
    tail = _as_emacs_reads(tail, eol)[-LOCAL_VARIABLES_REACH:]
    found = None
    for found in _LOCAL_VARIABLES_LINE.finditer(tail):
        pass
    return found is not None and len(tail) - found.start() + len(_as_emacs_reads(added, eol)) > LOCAL_VARIABLES_REACH


def _as_emacs_reads(text: str, eol: str) -> str:
    """``text`` with each ``eol`` a line feed, as Emacs decodes a file of that line ending."""
    return text if eol == "\n" else text.replace(eol, "\n")
