"""The link suggestion routes' requests and answers (see :mod:`.schemas` for the
conventions; :mod:`.openapi` describes them with the rest)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .schemas import Answer, Count, Line, NodeId, RelPath, Request


class SuggestLinksQuery(Request):
    """``node``, or ``file`` and ``line`` (the heading at that line and its subtree)."""

    node: NodeId | None = None
    file: RelPath | None = None
    line: Line = 1
    k: Count(100) = 10
    all_: bool = Field(False, alias="all", description="also the suggestions below min_score, marked below_cutoff")


class RejectionsQuery(Request):
    """Which rejections: of the node ``from``, to the node ``to``; absent means any."""

    from_: NodeId | None = Field(None, alias="from")
    to: NodeId | None = None


class RejectLink(Request):
    """Never suggest a link from the node ``from`` to the node ``to`` again."""

    from_: NodeId = Field(alias="from")
    to: NodeId


class LinkPlace(Answer):
    heading: str = Field(description="the heading of the query note where the link belongs")
    olp: list[str]
    line: int
    heading_id: str | None


class LinkParagraph(Answer):
    start_line: int
    end_line: int
    text: str


class LinkSuggestion(Answer):
    node_id: str
    title: str
    file: str
    line: int
    score: float = Field(description="the pair's calibrated chance of a link in [0, 1], as /similar's")
    relevance: float = Field(
        description="the score made to agree with the order: never above the one before it (within the suggestions above min_score, and within those below it)"
    )
    below_cutoff: bool = Field(description="below min_score (only with all=true)")
    snippet: str
    role: Literal["conversation"] | None = Field(
        None, description="'conversation' for a conversation's note (the oracle's answers are never suggested)"
    )
    link: str = Field(description="[[id:ID][Title]], to write into the note")
    heading: LinkPlace
    paragraph: LinkParagraph | None = Field(description="the paragraph that best matches the target")


class LinkSuggestions(Answer):
    node_id: str
    mode: Literal["keyword", "vector"]
    graph: bool = Field(description="whether the graph signal was fused in")
    min_score: float | None = Field(description="the cut-off used (null: none, keyword mode)")
    suggestions: list[LinkSuggestion]


class Rejected(Answer):
    rejected: dict[str, str]


class Rejection(Answer):
    from_: str = Field(alias="from")
    to: str
    created_at: float


class Rejections(Answer):
    rejections: list[Rejection]


class Cleared(Answer):
    cleared: int
