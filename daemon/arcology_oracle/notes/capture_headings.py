"""Finding a heading in a note's lines by the ``:ID:`` in its property drawer, and
reading that drawer: what a forget (:func:`.capture.plan_forget`) and the look for a
capture on disk (:mod:`arcology_oracle.index.memory`) go by."""

from __future__ import annotations

import re

from .org_syntax import DRAWER_END_RE, HEADING_LINE_RE, PLANNING_RE, PROPERTIES_START_RE

_PROPERTY_RE = re.compile(r"^[ \t]*:([^:\s]+):[ \t]*(.*?)[ \t]*$")
# Keys fold ASCII letters only, as Emacs's case-fold-search (str.upper() takes a dotless
# i for I: a key or drawer Org does not read would pass for an ID or a capture's mark).
_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _key(name: str) -> str:
    return name.translate(_ASCII_UPPER)


def find_heading(lines: list[str], node_id: str) -> tuple[int, int] | None:
    """``(start, end)`` 0-based line indexes (end exclusive) of the subtree of the heading
    whose property drawer holds ``:ID: node_id``, or None. Headings are Org's (and the
    reader's, :data:`~.org_syntax.HEADING_LINE_RE`): stars and a space. A line of stars
    and a tab is text, which the subtree holds (cut there, a forget took the heading
    and left the line to the one above)."""
    start = None
    for i, line in enumerate(lines):
        if HEADING_LINE_RE.match(line):
            start = i
            continue
        if start is None or node_id not in line:
            continue
        prop = _PROPERTY_RE.match(line)
        if prop and _key(prop[1]) == "ID" and prop[2] == node_id and _in_drawer(lines, start, i):
            level = _stars(lines[start])
            end = start + 1
            while end < len(lines) and not (HEADING_LINE_RE.match(lines[end]) and _stars(lines[end]) <= level):
                end += 1
            return start, end
    return None


def _stars(heading: str) -> int:
    return len(heading) - len(heading.lstrip("*"))


def _in_drawer(lines: list[str], heading: int, line: int) -> bool:
    """Whether ``line`` lies in the property drawer right below ``heading``."""
    i = heading + 1
    # Planning lines (SCHEDULED, CLOSED ...) may stand between heading and drawer.
    while i < line and not PROPERTIES_START_RE.match(lines[i]):
        if not PLANNING_RE.match(lines[i]):
            return False
        i += 1
    if i >= line:
        return False
    return not any(DRAWER_END_RE.match(lines[j]) for j in range(i, line))


def heading_properties(lines: list[str], start: int) -> dict[str, str]:
    """The property drawer of the heading at ``start`` (keys upper-cased)."""
    props: dict[str, str] = {}
    i = start + 1
    while i < len(lines) and PLANNING_RE.match(lines[i]):
        i += 1
    if i >= len(lines) or not PROPERTIES_START_RE.match(lines[i]):
        return props
    for line in lines[i + 1 :]:
        if DRAWER_END_RE.match(line):
            break
        prop = _PROPERTY_RE.match(line)
        if prop:
            props[_key(prop[1])] = prop[2]
    return props
