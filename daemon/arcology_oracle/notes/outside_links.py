"""Which links in text the user did not type lead outside Emacs, to another machine or
into a script of an HTML export (:mod:`.model_text` quiets them: :func:`leads_outside`).

* **Files opened outside Emacs** (:data:`FILE_LINK_TYPES`): a file link is taken for a
  safe one only when it names a local ``.org`` file, which Emacs visits itself on every
  system (``org-file-apps``' ``auto-mode``): ``file+sys:`` never is (Org hands its file
  to the system's program), nor is one Emacs has no mode for (Org hands it to ``open`` on
  macOS, to ShellExecute on Windows, which run an executable, to mailcap on GNU/Linux:
  checked in batch with ``system-type`` darwin), nor is a name Emacs reads as remote (TRAMP's ``/host:``,
  ``/method:host:``, ``/[method/host]``), one with a colon before its first ``/``, one
  holding ``//`` (Emacs reads a name on from the last one: a remote one, a Windows
  share), a backslash (a Windows share: ``\\\\host\\x.org``) or a colon with ``..``
  (``~/../../ssh:host:/x.org`` expands to a remote name). Org reads a path's ``::`` on
  as a search in the file.
* **Scripts in an HTML export** (:data:`RAW_HREF_TYPES`): Org 9.5's HTML export
  (``org-html-link``) writes the path of a link into its ``href`` as it is for every
  type but those it makes a URL of its own for (``http:``, ``https:``, ``ftp:``,
  ``mailto:``, ``news:``, ``doi:``, ``id:``, ``irc:``; checked in batch for each
  registered type), and ``info:``'s manual name with ``.html`` after it. A path the
  browser reads with a scheme (``javascript:alert(1)//``, ``data:...``; blanks before it
  or line breaks in it, which a browser drops, too; and spelled with character references,
  ``&#106;avascript&#58;``, which Org's HTML export escapes but another export, a
  Markdown one, may pass on) makes the link a script of the model's in the user's
  published page: such a link is taken for one leading outside whatever its type.
  Org 9.5's ODT and Texinfo exports (``org-odt-link``, ``org-texinfo-link``) write the
  path as it is for ``irc:`` and ``news:`` too, its Markdown export for ``news:``
  (``[[news:javascript:alert(1)][x]]`` was ``[x](javascript:alert(1))``; an ODT's
  ``vnd.sun.star.script:`` link runs a LibreOffice macro): those are looked at the same
  way. (``doi:`` and ``bbdb:`` export a URL or words of their own in each.)
"""

from __future__ import annotations

import html
import re
from bisect import bisect_left

# The types whose path names a file Org opens (org-link-open-as-file, org-attach-follow, org-docview-open).
FILE_LINK_TYPES = frozenset({"file", "file+sys", "file+emacs", "attachment", "docview"})
# The registered types whose HTML export writes the path into the href as it is, and
# those whose ODT (and Texinfo, Markdown) export does (irc:, news:).
RAW_HREF_TYPES = frozenset(
    {"file", "file+sys", "file+emacs", "help", "eww", "rmail", "mhe", "gnus", "bibtex", "w3m", "roam", "irc", "news"}
)
# Every type :func:`leads_outside` may hold for.
OUTSIDE_TYPES = FILE_LINK_TYPES | RAW_HREF_TYPES | {"info"}
_LOCAL_ORG_FILE_RE = re.compile(r"(?i)(?![^/]*:|/[^/|:][^/|]*:|/\[)(?:[^\\/]|/(?!/))*\.org")
# A URL's scheme, as a browser reads it once it dropped the blanks and controls before it
# and every tab and line break.
_SCHEME_RE = re.compile(r"[A-Za-z][-+.A-Za-z0-9]*:")
_DROPPED_RE = re.compile(r"^[\x00-\x20]+|[\t\n\r]")
_INFO_NODE_RE = re.compile(r"#|::")
# Where an angle link's path cannot go on (org-link-angle-re): a blank line, one starting with ">".
_ANGLE_BREAK_RE = re.compile(r"\n[ \t]*(?=[\n>]|\Z)")
# A line break in a link's path, and the blanks around it (Org drops them from an angle
# link's path, and reads a space for them in a bracket link's).
_LINE_BREAK_RE = re.compile(r"[ \t]*\n[ \t]*")


def leads_outside(kind: str, path: str, *, joined: str = "") -> bool:
    """Whether following a link of type ``kind`` to ``path`` may open something outside
    Emacs or on another machine, or its HTML export is a script (see the module
    docstring); the lines of ``path`` joined by ``joined``, as Org joins those of an angle
    link's path (``""``) or a bracket link's (``" "``)."""
    kind, path = kind.lower(), _LINE_BREAK_RE.sub(joined, path)
    name = path.split("::", 1)[0]  # a file's name; Org exports its search as the href's anchor
    href = _INFO_NODE_RE.split(path, maxsplit=1)[0] if kind == "info" else name if kind in FILE_LINK_TYPES else path
    if (kind in RAW_HREF_TYPES or kind == "info") and href_scheme(href) is not None:
        return True
    local = _LOCAL_ORG_FILE_RE.fullmatch(name) and not (":" in name and ".." in name)
    return kind in FILE_LINK_TYPES and (kind == "file+sys" or not local)


def href_scheme(href: str) -> str | None:
    """The scheme (in lower case, with its colon) a browser reads ``href`` with: its
    character references resolved, the blanks and controls before it and every tab and
    line break dropped; None for none (a relative URL)."""
    found = _SCHEME_RE.match(_DROPPED_RE.sub("", html.unescape(href)))
    return found[0].lower() if found else None


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
