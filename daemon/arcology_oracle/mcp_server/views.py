"""What the MCP tools return: pydantic models (the tools' output schemas) built from the
daemon's JSON answers, and a node's org text rebuilt from ``GET /nodes/ID``.

Everything here is made from what the daemon returned, which never holds private,
crypt or excluded text; nothing is read from the notes directly.
"""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from ..notes.oracle_words import body_first_line

# A whole file node can be large; a model reading it needs the start, not megabytes.
MAX_BODY_CHARS = 20_000


class Hit(BaseModel):
    """One heading found by search_notes or similar_notes."""

    node_id: str | None = Field(description="ID of the org-roam node holding the heading (give it to read_note); None for a file without an ID")
    heading_id: str | None = Field(description="the heading's own ID when it is a node itself")
    title: str = Field(description="title of the node")
    heading: str = Field(description="the heading's text")
    outline_path: list[str] = Field(description="the headings above this one, outermost first")
    file: str = Field(description="file, relative to the notes directory")
    line: int
    snippet: str = Field(description="a short excerpt of the matching text")
    date: str | None = Field(None, description="the heading's date (YYYY-MM-DD) when known")
    role: str | None = Field(
        None,
        description="'oracle' for an answer the assistant itself wrote earlier, 'conversation' for another turn"
        " of a conversation with it (neither is the user's own note)",
    )
    link: str = Field(description="an org link to cite the note with")


class Hits(BaseModel):
    mode: str = Field(description="how the notes were found: hybrid/vector (by meaning) or keyword")
    results: list[Hit]
    note: str | None = Field(None, description="anything the caller should know about these results")


class Journal(BaseModel):
    """What list_journal returns."""

    results: list[Hit] = Field(description="journal headings in the range, oldest first")
    more: bool = Field(description="more headings of the range were left out: raise k or narrow the range")
    note: str | None = Field(None, description="why there are no results: no journal at all, or none in the range")


class LinkedNote(BaseModel):
    node_id: str
    title: str


class Note(BaseModel):
    """A node as read_note returns it."""

    node_id: str
    title: str
    file: str
    line: int
    outline_path: list[str] = Field(description="the headings above the node, outermost first (empty for a file node)")
    tags: list[str]
    aliases: list[str]
    date: str | None
    body: str = Field(
        description="the node's org text (its headings and their bodies; private ones are never included);"
        " a heading with ':ROLE: oracle' in its drawer is an answer the assistant itself wrote earlier,"
        " not the user's own note, and so are the lines between '#+begin_oracle' and '#+end_oracle' in a heading"
        " of the user's (a reply a grounded model wrote there)"
    )
    links: list[LinkedNote] = Field(description="notes this note links to")
    backlinks: list[LinkedNote] = Field(description="notes that link to this note")
    truncated: bool = Field(False, description="whether body was cut at the size limit")


def refused(message: str, retry: bool) -> CallToolResult:
    """A tool error for a write the daemon refused (its 409): the daemon's words, then
    whether the same call can succeed in a moment, in words and as structured content
    ``{"error": message, "retry": bool}`` (the 409's ``retry``), so that an agent can
    tell "try again" from "give up" without parsing prose."""
    if retry:
        said = "(retry: true: the same call can succeed in a moment)"
    else:
        said = "(retry: false: the same call will not succeed; nothing was remembered)"
    return CallToolResult(
        content=[TextContent(type="text", text=f"{message} {said}")],
        structured_content={"error": message, "retry": retry},
        is_error=True,
    )


def org_link(node_id: str | None, title: str) -> str:
    """``[[id:ID][title]]``, or the bare title when there is no ID to link to."""
    if not node_id:
        return title
    return f"[[id:{node_id}][{title.replace('[', '(').replace(']', ')')}]]"


def hit(result: dict[str, Any]) -> Hit:
    """A Hit from one result of the daemon's /search or /similar."""
    return Hit(
        node_id=result.get("node_id"),
        heading_id=result.get("heading_id"),
        title=result["title"],
        heading=result["heading"],
        outline_path=list(result.get("olp") or []),
        file=result["file"],
        line=int(result["line"]),
        snippet=result.get("snippet") or "",
        date=result.get("date"),
        role=result.get("role"),
        link=org_link(result.get("node_id"), result["title"]),
    )


def org_text(node: dict[str, Any]) -> tuple[str, bool]:
    """The node's org text rebuilt from ``GET /nodes/ID``, and whether it was truncated.

    Headings come back in file order with their TODO keyword and body; the node's own
    heading (or the file, for a file node) gets a property drawer with its ID, and each
    heading that is the oracle's words (its ``role`` is ``"oracle"``: an answer of a
    conversation, a heading below one, words kept with ``role: oracle``...) one with
    ``:ROLE: oracle``, as the daemon writes its answers: a model reading the note must
    not take them for the user's notes. In a heading of the user's, the lines of a
    grounded model's reply (its ``replies``) are put between ``#+begin_oracle`` and
    ``#+end_oracle`` (:func:`marked_replies`). The rest is as the user wrote it.
    """
    parts: list[str] = []
    for h in node["headings"]:
        drawer = [f":ID:       {node['node_id']}"] if h.get("heading_id") == node["node_id"] else []
        if h.get("role") == "oracle":
            drawer.append(":ROLE:     oracle")
        if h["level"] > 0:
            todo = f"{h['todo']} " if h.get("todo") else ""
            parts.append(f"{'*' * h['level']} {todo}{h['heading']}\n")
        if drawer:
            parts.append(":PROPERTIES:\n" + "".join(line + "\n" for line in drawer) + ":END:\n")
        body = marked_replies(h.get("body") or "", h.get("end_line"), h.get("replies") or [])
        if body:
            parts.append(body if body.endswith("\n") else body + "\n")
    text = "".join(parts)
    if len(text) <= MAX_BODY_CHARS:
        return text, False
    return text[:MAX_BODY_CHARS] + "\n[... truncated: read the file itself for the rest]\n", True


def marked_replies(body: str, end_line: int | None, replies: list[dict[str, int]]) -> str:
    """``body`` (a heading's, its last line the file line ``end_line``) with each reply of
    ``replies`` (``line`` to ``end_line``, file lines), its blank lines at either end left
    outside, between a ``#+begin_oracle`` and an ``#+end_oracle`` line."""
    if not replies or end_line is None:
        return body
    lines = body.split("\n")
    first = body_first_line(body, end_line)
    starts, ends = set(), set()
    for reply in replies:
        inside = [k for k in range(reply["line"] - first, reply["end_line"] - first + 1)
                  if 0 <= k < len(lines) and lines[k].strip()]  # fmt: skip
        if inside:
            starts.add(inside[0])
            ends.add(inside[-1])
    out = []
    for k, line in enumerate(lines):
        out += ["#+begin_oracle"] * (k in starts) + [line] + ["#+end_oracle"] * (k in ends)
    return "\n".join(out)


def note(node: dict[str, Any]) -> Note:
    """A Note from ``GET /nodes/ID``."""
    own = next((h for h in node["headings"] if h.get("heading_id") == node["node_id"]), None)
    body, truncated = org_text(node)
    return Note(
        node_id=node["node_id"],
        title=node["title"],
        file=node["file"],
        line=node["line"],
        outline_path=list(own["olp"]) if own else [],
        tags=node.get("tags") or [],
        aliases=node.get("aliases") or [],
        date=node.get("date"),
        body=body,
        links=[LinkedNote(**link) for link in node.get("links", [])],
        backlinks=[LinkedNote(**link) for link in node.get("backlinks", [])],
        truncated=truncated,
    )
