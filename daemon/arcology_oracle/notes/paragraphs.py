"""The paragraphs of a heading's own lines: where a link to another note can be written.

A paragraph is a run of non-blank lines of prose (list items included) with its 1-based
inclusive line range. Heading lines, property and other drawers, planning lines,
``#+KEYWORD:`` lines, comments, table rows, fixed-width lines (``: text``), horizontal
rules (five dashes), clock lines (``CLOCK:``), diary sexps (``%%(``), table.el tables
(``+---+`` borders and ``|`` rows), whole blocks (``#+begin_src`` ... ``#+end_src``, quotes
and examples alike; dynamic blocks, ``#+BEGIN: clocktable`` ... ``#+END:``, whose text Org
writes again) and whole LaTeX environments (``\\begin{equation}`` ... ``\\end{equation}``; a
``\\begin`` that never ends is prose, as Org reads it) are not paragraphs and end the
one before them: a link written inside a src block, a drawer or fixed-width lines would
not be a link, and one written after ``\\end{...}`` or a rule would make it text again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_HEADING = re.compile(r"^\*+\s")
_DRAWER_START = re.compile(r"^\s*:[\w-]+:\s*$")
_DRAWER_END = re.compile(r"^\s*:END:\s*$", re.IGNORECASE)
_PLANNING = re.compile(r"^\s*(SCHEDULED|DEADLINE|CLOSED):", re.IGNORECASE)
_BLOCK_BEGIN = re.compile(r"^\s*#\+begin_(\S+)", re.IGNORECASE)
_DYNAMIC_BEGIN = re.compile(r"^\s*#\+begin:", re.IGNORECASE)
_DYNAMIC_END = re.compile(r"^\s*#\+end:?\s*$", re.IGNORECASE)
_KEYWORD = re.compile(r"^\s*#\+\S*:")
_COMMENT = re.compile(r"^\s*#(\s|$)")
_TABLE = re.compile(r"^\s*\|")
_FIXED_WIDTH = re.compile(r"^[ \t]*:( |$)")  # Org's: a colon, then a space or nothing
_RULE = re.compile(r"^\s*-{5,}\s*$")
_CLOCK = re.compile(r"^\s*CLOCK:", re.IGNORECASE)
_DIARY_SEXP = re.compile(r"^%%\(")
_TABLE_EL_BORDER = re.compile(r"^\s*\+(-+\+)+\s*$")  # Org's table.el start: +---+---+
# Org's latex-environment (any letter case): from a line starting \begin{NAME} to the
# first line, that one included, ending in \end{NAME}.
_LATEX_BEGIN = re.compile(r"^\s*\\begin\{([A-Za-z0-9*]+)\}", re.IGNORECASE)
_NOT_PROSE = (_HEADING, _PLANNING, _KEYWORD, _COMMENT, _TABLE, _FIXED_WIDTH, _RULE, _CLOCK, _DIARY_SEXP, _TABLE_EL_BORDER)


@dataclass(frozen=True, slots=True)
class Paragraph:
    """Lines ``start_line``..``end_line`` (1-based, inclusive) holding ``text``."""

    start_line: int
    end_line: int
    text: str


def paragraphs(lines: Sequence[str], start_line: int, end_line: int) -> list[Paragraph]:
    """The paragraphs of ``lines`` (the whole file) between ``start_line`` and
    ``end_line`` (1-based, inclusive), a heading line and the lines below it up to the
    next heading; see the module docstring."""
    out: list[Paragraph] = []
    run: list[int] = []

    def close() -> None:
        if run:
            out.append(Paragraph(run[0], run[-1], "\n".join(lines[i - 1] for i in run)))
            run.clear()

    n = start_line
    last = min(end_line, len(lines))
    while n <= last:
        line = lines[n - 1]
        block = _BLOCK_BEGIN.match(line)
        if block:
            close()
            end = re.compile(rf"^\s*#\+end_{re.escape(block[1])}\s*$", re.IGNORECASE)
            closing = next((i for i in range(n + 1, last + 1) if end.match(lines[i - 1])), None)
            n = (closing or n) + 1
            continue
        if _DYNAMIC_BEGIN.match(line):
            close()
            closing = next((i for i in range(n + 1, last + 1) if _DYNAMIC_END.match(lines[i - 1])), None)
            n = (closing or n) + 1
            continue
        latex = _LATEX_BEGIN.match(line)
        if latex:  # an environment only when it ends (else Org reads the line as prose)
            end = re.compile(rf"\\end\{{{re.escape(latex[1])}\}}[ \t]*$", re.IGNORECASE)
            closing = n if end.search(line, latex.end()) else next(
                (i for i in range(n + 1, last + 1) if end.search(lines[i - 1])), None
            )
            if closing is not None:
                close()
                n = closing + 1
                continue
        if _DRAWER_START.match(line) and not _DRAWER_END.match(line):
            closing = next((i for i in range(n + 1, last + 1) if _DRAWER_END.match(lines[i - 1])), None)
            if closing is not None:
                close()
                n = closing + 1
                continue
        if not line.strip() or any(rule.match(line) for rule in _NOT_PROSE):
            close()
        else:
            run.append(n)
        n += 1
    close()
    return out
