"""Text the user did not type, quieted before the daemon writes it into an org file: a
model's answer (:func:`~.conversations.org_safe`, a capture of the oracle's own words),
an imported chat log (:mod:`arcology_oracle.importers.render`). On top of
:func:`~.org_escape.inert`, which every written text gets, the user's typing too.

Contracts (each checked with Emacs 28 and Org 9.5 in batch mode):

* **Links that run code** (:func:`quiet`): clicking an ``elisp:`` or ``shell:`` link
  runs it (Org asks first only while ``org-link-elisp-confirm-function`` and
  ``org-link-shell-confirm-function`` are set), an ``eshell:`` link (``ol-eshell``)
  runs its command without asking, and a ``man:`` link (``ol-man``) hands its topic to
  a shell in an Emacs before the fix of bug#66390. A zero-width space goes before the
  colon of each such type (any letter case, as Org matches them) where Org would read
  a link: followed by anything but a blank, or after ``<`` or ``[[``. And a bracket
  link of such a type gets one between its two ``[``, so its description
  (``[[elisp:(delete-file ...)][see note]]``) no longer hides what it would run: Org
  shows the whole text, no link. ``id:``, ``file:``, ``https:`` and every other link stay.
* **Active timestamps** (:func:`quiet`): Org's agenda lists every active timestamp
  (``<2026-12-07 Mon>``, a range, a repeater) anywhere in an agenda file, in blocks and
  property drawers too, so a model's words would fill the user's day. In text where Org
  reads objects each becomes inactive (``[2026-12-07 Mon]``: still a date to Org, on no
  agenda); in ``verbatim`` text (a block's line, a property value), where a bracket
  would change what the model wrote, a zero-width space goes after its ``<``. So does
  one next to a bracket, which would make a link of ``[<2026-12-07 Mon>]``.
* **LaTeX that reads, writes or runs** (:func:`quiet`, not in ``verbatim`` text, which a
  LaTeX export writes in a verbatim environment): a LaTeX fragment (``\\cmd{...}``,
  ``$...$``, ``\\(...\\)``) goes into a LaTeX export as it is. A zero-width space goes
  after the backslash of the commands in :data:`LATEX_COMMANDS` (``\\write18`` runs a
  shell command in a run with ``-shell-escape``, ``\\input`` puts any file into the
  document, ``\\directlua`` runs Lua; ``\\csname`` and ``\\catcode`` would spell them
  anew) and between the two ``^`` of ``^^5c`` (TeX's spelling of a backslash): Org then
  reads words, which its LaTeX export escapes, and a math fragment holding one fails to
  compile rather than run it. Ordinary math (``\\frac``, ``\\alpha``, ``x^2``) is as
  written.
"""

from __future__ import annotations

import re

from .org_escape import ZWSP

# Link types whose following runs code (see the module docstring).
CODE_LINK_TYPES = ("elisp", "shell", "eshell", "man")
_TYPES = "|".join(CODE_LINK_TYPES)
_CODE_LINK_RE = re.compile(rf"(?i)(?<![^\W_])(?:{_TYPES})(?=:(?!\s))|(?<=<)(?:{_TYPES})(?=:)|(?<=\[\[)(?:{_TYPES})(?=:)")
_CODE_BRACKET_RE = re.compile(rf"(?i)(?<=\[)(?=\[[ \t]*(?:{_TYPES}){ZWSP}?:)")
# An active timestamp as the agenda finds it: "<" digits-digits-digits, to the next ">".
_ACTIVE_RE = re.compile(r"<(\d+-\d+-\d+[^>\n]*)>")
LATEX_COMMANDS = (
    "write", "immediate", "input", "include", "InputIfFileExists", "openin", "openout", "read", "readline",
    "csname", "catcode", "scantokens", "directlua", "latelua", "luaexec", "ShellEscape", "special",
    "makeatletter", "lstinputlisting", "verbatiminput", "pdfobj", "pdffiledump", "href",
)  # fmt: skip
_LATEX_RE = re.compile(rf"(?<=\\)(?=(?:{'|'.join(LATEX_COMMANDS)})(?![A-Za-z]))|(?<=\^)(?=\^)")


def quiet(text: str, *, verbatim: bool = False) -> str:
    """``text`` with no link that runs code, no active timestamp and no LaTeX command
    that reads, writes or runs (see the module docstring); ``verbatim``: a block's line
    or a property value (timestamps get a zero-width space, LaTeX is left alone)."""
    text = _CODE_BRACKET_RE.sub(ZWSP, _CODE_LINK_RE.sub(lambda m: m[0] + ZWSP, text))
    text = _ACTIVE_RE.sub(lambda m: _inactive(m, verbatim), text)
    return text if verbatim else _LATEX_RE.sub(ZWSP, text)


def _inactive(found: re.Match[str], verbatim: bool) -> str:
    text = found.string
    near_bracket = text[found.start() - 1 : found.start()] == "[" or text[found.end() : found.end() + 1] == "]"
    return f"<{ZWSP}{found[1]}>" if verbatim or near_bracket else f"[{found[1]}]"


def same_dates(text: str) -> str:
    """``text`` with each active timestamp inactive, as :func:`quiet` writes it: for
    comparing a file written before with what is written now."""
    return _ACTIVE_RE.sub(r"[\1]", text)
