"""Where Org knows a heading's (or the file's) property drawer, as the reader takes it:
right below the heading or its planning line, or at the top of the file after comment
lines only, and closed; its first line and the planning line set off by spaces and
tabs only (``org-property-drawer-re``, ``org-planning-line-re``: a no-break space, a line
separator or a form feed there makes the line text to Org)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from orgparse.node import OrgBaseNode

from .org_syntax import DRAWER_END_RE, PLANNING_RE, PROPERTIES_IN_RE, PROPERTIES_START_RE

# Org's comment line (org-comment-regexp): only such lines may stand above the file's
# drawer (org-get-property-block skips them, and nothing else: not a blank line, not a
# keyword; checked with Org 9.5.5, whose org-entry-get then reads no ID).
_COMMENT_RE = re.compile(r"[ \t]*#(?: |$)")


def read_drawer(
    node: OrgBaseNode, lines: Sequence[str], problems: list[str]
) -> tuple[dict[str, str], str, dict[str, str]]:
    """The node's properties, its raw body, and the properties that count for exclusion.

    orgparse takes the first line containing ``:PROPERTIES:`` anywhere in the node as a
    drawer and, when ``:END:`` is missing, swallows (drops) the rest of the body. Org only
    knows a drawer right after the heading (or its planning line), or at the top of the
    file after comment lines only (no blank line, no keyword), and closed. Otherwise, as
    in Org, there are no properties and the drawer lines stay in the body. For exclusion the properties count
    wherever orgparse found them (a misplaced ``ROAM_EXCLUDE``): excluding too much is
    the safe side. ``:PROPERTIES:`` and ``:END:`` are matched in any letter case, as Org
    and org-roam do (see ``PROPERTIES_IN_RE``).
    """
    lenient = {str(k).upper(): str(v) for k, v in node.properties.items()}
    own = str(node)
    if not PROPERTIES_IN_RE.search(own):
        return lenient, node.get_body(format="raw"), lenient
    start = node.linenumber - 1
    node_lines = lines[start : node.end_linenumber]
    is_root = node.level == 0
    first = 0 if is_root else 1
    at = next(i for i in range(first, len(node_lines)) if PROPERTIES_IN_RE.search(node_lines[i]))
    closed = any(DRAWER_END_RE.match(line) for line in node_lines[at + 1 :])
    if is_root:
        placed = all(_COMMENT_RE.match(ln) for ln in node_lines[:at])
    else:
        placed = at == 1 or (at == 2 and PLANNING_RE.match(node_lines[1]) is not None)
    if closed and placed and PROPERTIES_START_RE.match(node_lines[at]):
        return lenient, node.get_body(format="raw"), lenient
    line_no = start + at + 1
    if not closed:
        problems.append(f"unclosed property drawer at line {line_no} read as text")
    elif "ID" in lenient:
        problems.append(f"misplaced property drawer at line {line_no} (with an ID) read as text, as Org does")
    body = "\n".join(node_lines[first:])
    return {}, body, lenient
