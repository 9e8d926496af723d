"""Which file links in text the user did not type may open something outside Emacs or
on another machine (:mod:`.model_text` quiets them; its docstring gives the rule and why).

A file link (:data:`FILE_LINK_TYPES`) is taken for a safe one only when it names a local
``.org`` file, which Emacs visits itself on every system (``org-file-apps``'
``auto-mode``): ``file+sys:`` never is (Org hands its file to the system's program), nor
is a name Emacs reads as remote (TRAMP's ``/host:``, ``/method:host:``,
``/[method/host]``), one with a colon before its first ``/`` (Org 9.5's HTML export
writes a relative path into the ``href`` as it is: ``javascript:alert(1);x.org`` is a
script, a ``data:`` one a page), one holding ``//`` (Emacs reads a name on from the last one: a
remote one, a Windows share), a backslash (a Windows share: ``\\\\host\\x.org``) or a
colon with ``..`` (``~/../../ssh:host:/x.org`` expands to a remote name). Org reads a
path's ``::`` on as a search in the file.
"""

from __future__ import annotations

import re
from bisect import bisect_left

# The types whose path names a file Org opens (org-link-open-as-file, org-attach-follow, org-docview-open).
FILE_LINK_TYPES = frozenset({"file", "file+sys", "file+emacs", "attachment", "docview"})
_LOCAL_ORG_FILE_RE = re.compile(r"(?i)(?![^/]*:|/[^/|:][^/|]*:|/\[)(?:[^\\/]|/(?!/))*\.org")
# Where an angle link's path cannot go on (org-link-angle-re): a blank line, one starting with ">".
_ANGLE_BREAK_RE = re.compile(r"\n[ \t]*(?=[\n>]|\Z)")
# A line break in a link's path, and the blanks around it (Org drops them from an angle
# link's path, and reads a space for them in a bracket link's).
_LINE_BREAK_RE = re.compile(r"[ \t]*\n[ \t]*")


def opened_outside(kind: str, path: str, *, joined: str = "") -> bool:
    """Whether following a link of type ``kind`` to ``path`` may open something outside
    Emacs or on another machine: one of :data:`FILE_LINK_TYPES` but to a local ``.org``
    file (see the module docstring); the lines of ``path`` joined by ``joined``, as Org
    joins those of an angle link's path (``""``) or a bracket link's (``" "``)."""
    kind, name = kind.lower(), _LINE_BREAK_RE.sub(joined, path).split("::", 1)[0]
    local = _LOCAL_ORG_FILE_RE.fullmatch(name) and not (":" in name and ".." in name)
    return kind in FILE_LINK_TYPES and (kind == "file+sys" or not local)


class AngleEnds:
    """Where Org ends an angle link's path in ``text`` (org-link-angle-re: at the next
    ``>``, over lines none of which is blank or starts with ``>``), found by bisection in
    the places of ``>`` and of the lines that stop one, listed once: the time stays linear
    in ``text``, however many links start in it."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._ends: list[int] | None = None
        self._breaks: list[int] = []

    def end(self, at: int) -> int | None:
        """The place of the ``>`` ending the path that starts at ``at``, None when there is none."""
        if self._ends is None:
            self._ends = [found.start() for found in re.finditer(">", self._text)]
            self._breaks = [found.start() for found in _ANGLE_BREAK_RE.finditer(self._text)]
        index = bisect_left(self._ends, at)
        if index == len(self._ends):
            return None
        end, stop = self._ends[index], bisect_left(self._breaks, at)
        return None if stop < len(self._breaks) and self._breaks[stop] < end else end
