"""Active timestamps in text the user did not type, made inactive before the daemon writes
it (:func:`~.model_text.quiet`, whose docstring says why: Org's agenda lists every active
timestamp in an agenda file, so a model's words would fill the user's day).
"""

from __future__ import annotations

import re

from .org_escape import ZWSP

# Where an active timestamp starts as the agenda finds it, "<" digits-digits-digits, and
# what ends one: the next ">" on its line (see :func:`dates_quieted`).
_ACTIVE_START_RE = re.compile(r"<(?=\d+-\d+-\d+)|[>\n]")


def dates_quieted(text: str, *, verbatim: bool, near_brackets: bool = True) -> str:
    """``text`` with each active timestamp inactive (``[...]``), or with a zero-width
    space after its ``<`` when ``verbatim`` or, with ``near_brackets``, next to a bracket
    (see :mod:`.model_text`). Innermost first, in one pass (a loop of searches took
    minutes for a long nest): Org reads ``<2026-12-08 Tue>`` in ``<1-1-1 <2026-12-08 Tue>>``,
    and the outer ``<2026-12-08 Tue [2026-12-09 Wed]>`` once the inner is quieted, so each
    ``>`` closes the last ``<`` left open on its line, and those before it while it stays."""
    out = list(text)
    open_at: list[int] = []
    for found in _ACTIVE_START_RE.finditer(text):
        at, char = found.start(), found[0]
        if char == "<":
            open_at.append(at)
        elif char == "\n":
            open_at.clear()
        elif char == ">":
            while open_at:
                start = open_at.pop()
                near = near_brackets and ((start and out[start - 1] == "[") or text[at + 1 : at + 2] == "]")
                if not (verbatim or near):
                    out[start], out[at] = "[", "]"
                    break
                out[start] = "<" + ZWSP  # (the ">" stays, and closes what is open before)
    return "".join(out)
