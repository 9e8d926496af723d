"""What a model's words would be in a Markdown export, quieted (:func:`markdown_quieted`,
for :func:`~.model_text.quiet`).

Org 9.5's Markdown export (``ox-md``, and the exporters built on it: ``ox-hugo``,
``ox-gfm``) escapes only the backquote, ``*``, ``_``, ``\\`` and a line's ``#`` in text;
it writes ``<`` and ``[...](...)`` as they are (checked in batch), and a Markdown
renderer reads them:

* **Raw HTML**: ``<script>``, ``<img src=x onerror=...>``, ``</a>``, ``<!-- -->``,
  ``<?...>`` and an autolink ``<javascript:alert(1)>`` are a script in the published
  page. A zero-width space goes after each ``<`` that starts one as CommonMark reads
  them (a tag's name right after the ``<``, then a blank, ``/``, ``>`` or the end;
  ``</``, ``<!``, ``<?``; a scheme and its colon), so none starts there; Org shows the
  same text. ``a<b`` in math, ``x < y`` and ``<2026-12-07>`` stay. A tag of an element
  that only formats (:data:`_FORMATTING`: ``<b>``, ``</sub>``, ``<br/>``) with no
  attribute stays (``a<b>c`` is words to Org, bold in Markdown). An angle link Org reads
  (``<https://orgmode.org>``, of a type in :data:`~.model_text.REGISTERED_TYPES`) is
  left to Org, which exports it as a link of its own.
* **A Markdown link to a script** (``[see](javascript:alert(1))``, an image's
  ``![x](data:...)``, a reference definition ``[x]: javascript:...`` on a line of its
  own): a zero-width space goes after the ``]`` unless the destination is a web one
  (``http://``, ``https://``, ``ftp://``, ``mailto:``, as Org writes its own) or a
  relative path of letters, digits and ``.~/#?=%+-`` (no character reference, no
  backslash, no colon: nothing a browser or Org reads otherwise), and when it starts on
  another line: the text is then no link.

Inline verbatim and code (``=...=``, ``~...~``, which the export writes as a code span,
where a renderer reads no HTML) are left as written, so a model's ``~<div>~`` can be
copied as it is.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from .org_escape import ZWSP

# Where CommonMark reads raw HTML or an autolink: a tag's name then a blank, "/", ">" or
# the end; a closing tag; a comment, a declaration, a processing instruction; a scheme.
_TAG_START_RE = re.compile(r"<(?=[A-Za-z][A-Za-z0-9-]*(?:[\s/>]|\Z)|/[A-Za-z]|![-\[A-Za-z]|\?|[A-Za-z][-+.A-Za-z0-9]{1,31}:)")
# Markup elements that do nothing but format: one of these with no attribute stays.
_FORMATTING = (
    "b", "i", "em", "strong", "u", "s", "del", "ins", "sub", "sup", "small", "mark", "code", "kbd", "samp",
    "var", "q", "cite", "abbr", "dfn", "br", "hr", "p", "div", "span", "pre", "blockquote", "ul", "ol", "li",
    "dl", "dt", "dd", "table", "thead", "tbody", "tr", "td", "th", "caption", "h1", "h2", "h3", "h4", "h5", "h6",
)  # fmt: skip
_FORMATTING_TAG_RE = re.compile(rf"(?i)/?(?:{'|'.join(_FORMATTING)})[ \t]*/?>")
# A Markdown inline link's or image's destination after "](", a reference definition's after
# "]:" (the first _LONGEST of it: a longer one is quieted, so the time stays linear).
_LONGEST = 512
_DESTINATION_RE = re.compile(
    rf"\](?=\((?P<inline>[ \t]*<?[^\s)>]{{0,{_LONGEST}}}))"
    rf"|(?m:^)[ \t]{{0,3}}\[[^\]\n]+\](?=:(?P<defined>[ \t]*<?[^\s>]{{0,{_LONGEST}}}))"
)
# An inline link's destination that is empty, not one on the next line ("[x](" ending a line).
_EMPTY_RE = re.compile(r"\([ \t]*(?:<>)?[ \t]*\)")
# A destination left as it is: a web one, or a relative path of characters that neither
# spell a scheme nor mean anything to Org (its "\\" line break, exported as a line end,
# put "javascript:" on the destination's next line, where CommonMark reads it on).
_SAFE_DESTINATION_RE = re.compile(r"(?i)(?:https?|ftp)://[^\s\\]*|mailto:[^\s\\]*|[\w.~/#?=%+-]+")
# Org's inline verbatim and code (org-verbatim-re), on one line: a marker after a line's
# start or a pre character and before a non-blank; the first same marker after a
# non-blank and before a post character or the line's end closes it.
_VERBATIM_START_RE = re.compile(r"""(?:^|(?<=[-\s('"{]))[=~](?=\S)""", re.MULTILINE)
_VERBATIM_END_RE = re.compile(r"""(?<=\S)[=~](?=[-\s.,:!?;'")}\\\[]|$)""", re.MULTILINE)


def _verbatim_spans(text: str) -> list[tuple[int, int]]:
    """The spans of ``text``'s inline verbatim and code, as Org reads them leftmost first;
    each closing marker found by bisection, so the time stays linear in ``text``."""
    ends = {marker: [] for marker in "=~"}
    for found in _VERBATIM_END_RE.finditer(text):
        ends[found[0]].append(found.start())
    breaks = [found.start() for found in re.finditer("\n", text)]
    spans, at = [], 0
    for found in _VERBATIM_START_RE.finditer(text):
        start = found.start()
        if start < at:
            continue
        closers = ends[found[0]]
        index = bisect_left(closers, start + 2)
        if index == len(closers):
            continue
        end = closers[index]
        line_break = bisect_left(breaks, start)
        if line_break < len(breaks) and breaks[line_break] < end:
            continue
        spans.append((start, end + 1))
        at = end + 1
    return spans


def markdown_quieted(text: str, angle_link_at: re.Pattern[str]) -> str:
    """``text`` with each raw HTML tag and each Markdown link to a script quieted (see the
    module docstring), outside its inline verbatim and code; ``angle_link_at``: matches,
    at a ``<``'s place + 1, the type and colon of an angle link Org reads."""
    if not (_TAG_START_RE.search(text) or _DESTINATION_RE.search(text)):
        return text  # (most text: no verbatim to look for)
    out, at = [], 0
    for start, end in _verbatim_spans(text):
        out += [_quieted(text, at, start, angle_link_at), text[start:end]]
        at = end
    out.append(_quieted(text, at, len(text), angle_link_at))
    return "".join(out)


def _quieted(text: str, start: int, end: int, angle_link_at: re.Pattern[str]) -> str:
    part = text[start:end]

    def tag(found: re.Match[str]) -> str:
        after = start + found.end()
        left = angle_link_at.match(text, after) or _FORMATTING_TAG_RE.match(text, after)
        return "<" if left else "<" + ZWSP

    def destination(found: re.Match[str]) -> str:
        defined = found["defined"] is not None
        dest = (found["defined"] if defined else found["inline"]).lstrip(" \t<")
        if dest == "":  # "[x]()" leads nowhere; "[x](" or "[x]:" ending a line leads where the next says
            safe = not defined and _EMPTY_RE.match(part, found.end())
        else:
            safe = len(dest) < _LONGEST and _SAFE_DESTINATION_RE.fullmatch(dest)
        return found[0] if safe else found[0] + ZWSP

    return _DESTINATION_RE.sub(destination, _TAG_START_RE.sub(tag, part))
