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
  ``![x](data:...)``, a reference definition ``[x]: javascript:...``, on a line of its
  own or a list item's): a zero-width space goes after the ``]`` unless the destination is a web one
  (``http://``, ``https://``, ``ftp://``, ``mailto:``, as Org writes its own) or a
  relative path of letters, digits and ``.~/#?=%+-`` (no character reference, no
  backslash, no colon: nothing a browser or Org reads otherwise), and when it starts on
  another line: the text is then no link.

Inline verbatim and code (``=...=``, ``~...~``) are quieted too: Org reads none inside a
link's target or math (``[[https://x/ =<b onclick=...>= ]]``, ``\\(=<b ...>=\\)``),
which the export writes as they are; source blocks, written as code, are not (``verbatim``
text, :func:`~.model_text.quiet`).
"""

from __future__ import annotations

import re

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
# "]:" (the first _LONGEST of it: a longer one is quieted, so the time stays linear). Any
# "]:" is taken for a definition's: CommonMark reads one in a list item ("-   [r]: ..."
# as Org exports an item), a block quote, and with its label over lines.
_LONGEST = 512
_DESTINATION_RE = re.compile(
    rf"\](?=\((?P<inline>[ \t]*<?[^\s)>]{{0,{_LONGEST}}}))"
    rf"|\](?=:(?P<defined>[ \t]*<?[^\s>]{{0,{_LONGEST}}}))"
)
# An inline link's destination that is empty, not one on the next line ("[x](" ending a line).
_EMPTY_RE = re.compile(r"\([ \t]*(?:<>)?[ \t]*\)")
# A destination left as it is: a web one, or a relative path of characters that neither
# spell a scheme nor mean anything to Org (its "\\" line break, exported as a line end,
# put "javascript:" on the destination's next line, where CommonMark reads it on).
_SAFE_DESTINATION_RE = re.compile(r"(?i)(?:https?|ftp)://[^\s\\]*|mailto:[^\s\\]*|[\w.~/#?=%+-]+")


def markdown_quieted(text: str, angle_link_at: re.Pattern[str]) -> str:
    """``text`` with each raw HTML tag and each Markdown link to a script quieted (see the
    module docstring); ``angle_link_at``: matches, at a ``<``'s place + 1, the type and
    colon of an angle link Org reads."""

    def tag(found: re.Match[str]) -> str:
        left = angle_link_at.match(text, found.end()) or _FORMATTING_TAG_RE.match(text, found.end())
        return "<" if left else "<" + ZWSP

    def destination(found: re.Match[str]) -> str:
        defined = found["defined"] is not None
        dest = (found["defined"] if defined else found["inline"]).lstrip(" \t<")
        if dest == "":  # "[x]()" leads nowhere; "[x](" or "[x]:" ending a line leads where the next says
            safe = not defined and _EMPTY_RE.match(text, found.end())
        else:
            safe = len(dest) < _LONGEST and _SAFE_DESTINATION_RE.fullmatch(dest)
        return found[0] if safe else found[0] + ZWSP

    return _DESTINATION_RE.sub(destination, _TAG_START_RE.sub(tag, text))
