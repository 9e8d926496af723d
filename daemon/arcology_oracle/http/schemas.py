"""The native API's requests and answers as pydantic models: the single description of
its shapes. The handlers validate query strings and JSON bodies with the request models
(:func:`.params.parse_query`, :func:`.params.parse_body`); ``/openapi.json`` is generated
from all of them (:mod:`.openapi`); the schemathesis run checks every answer against it.
This module holds the shared parts (the bases, the field types) and the routes that read
the index (search, similar, journal, nodes, headings, status); the answering routes'
models are in :mod:`.ask_schemas`, the writing routes' in :mod:`.memory_schemas` and the
link suggestions' in :mod:`.links_schemas`.

Request conventions, as before the models: unknown fields are ignored, and a field sent
as JSON ``null`` (Emacs sends ``nil`` so) counts as absent, so its default applies.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

# Search hits are the answers layer's dataclasses, described as they are.
from ..answers.retrieval import Result
from .request_paths import RelPath

MAX_TEXT = 1_000_000
MAX_LINE = 10_000_000


def _no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("must be an integer, not true or false")
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def Count(high: int) -> Any:  # noqa: N802 (reads as a type)
    """How many results: an integer in ``[1, high]``."""
    return Annotated[int, Field(ge=1, le=high, description="at most this many"), BeforeValidator(_no_bool)]


Line = Annotated[int, Field(ge=1, le=MAX_LINE, description="1-based line number"), BeforeValidator(_no_bool)]
Text = Annotated[str, Field(min_length=1), AfterValidator(_not_blank)]  # bounded by max_body_bytes
Model = Annotated[str, Field(max_length=200, description="chat model (default: the configured chat_model)")]
NodeId = Annotated[str, Field(min_length=1, max_length=200, description="an org-roam node ID")]
Day = Annotated[str, Field(max_length=100, description="YYYY-MM-DD, or words such as 'last week'")]


class Request(BaseModel):
    """Base of the request models (see the module docstring)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_absent(cls, data: Any) -> Any:
        return {k: v for k, v in data.items() if v is not None} if isinstance(data, dict) else data


# --------------------------------------------------------------------------- queries (GET)


class Dated(Request):
    """``since``/``until``: only headings dated in that range (see answers/when.py)."""

    since: Day | None = None
    until: Day | None = None


class SearchQuery(Dated):
    q: Annotated[Text, Field(max_length=10_000, description="words or a phrase")]
    k: Count(100) = 10


class SimilarQuery(Dated):
    """``node``, or ``file`` and ``line`` (the heading at that line)."""

    node: NodeId | None = None
    file: RelPath | None = None
    line: Line = 1
    k: Count(100) = 10
    exclude_linked: bool = Field(False, description="leave out notes linked from or to the node")
    same_file: bool = Field(False, description="also the nodes enclosing the query's node or nested in it")
    all_: bool = Field(False, alias="all", description="also the results below min_score, marked below_cutoff")


class JournalQuery(Dated):
    """The journal between ``since`` and ``until`` (either may be left open)."""

    k: Count(500) = 100


class HeadingQuery(Request):
    file: RelPath
    line: Line = 1
    end_line: Line | None = Field(
        None,
        description="a source's end_line (a window of dialogue): the headings that start after the heading and"
        " up to this line come back too, as 'below'",
    )

    @model_validator(mode="after")
    def _end_after_start(self):
        if self.end_line is not None and self.end_line < self.line:
            raise ValueError(f"end_line ({self.end_line}) is before line ({self.line})")
        return self



# --------------------------------------------------------------------------- bodies (POST)


class SimilarText(Dated):
    text: Annotated[Text, Field(max_length=MAX_TEXT)]
    k: Count(100) = 10
    node: NodeId | None = Field(
        None, description="the node the text is an unsaved state of: left out, with the nodes enclosing it or nested in it"
    )
    exclude_linked: bool = Field(False, description="with node: leave out notes linked from or to it")
    file: RelPath | None = Field(None, description="the file the text is a part of, for the outline around its headings")
    line: Line | None = Field(None, description="with file: the line where the text starts")
    all_: bool = Field(False, alias="all", description="also the results below min_score, marked below_cutoff")








# --------------------------------------------------------------------------- answers


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Health(Answer):
    ok: bool


class EmbedderStatus(Answer):
    model: str
    host: str
    dims: int | None
    reachable: bool | None
    error: str | None


class IndexingProgress(Answer):
    running: bool
    phase: str
    done: int
    total: int


class Status(Answer):
    ok: bool
    version: str
    roam_dir: str
    exclude_globs: list[str] = Field(description="files the daemon never reads (clients refuse them, saying so)")
    instance: str = Field(description="this daemon process: another value, a restart (maybe on other notes)")
    db_path: str
    files: int
    headings: int
    nodes: int
    chunks: int
    embedded: int
    pending: int
    embedder: EmbedderStatus
    indexing: IndexingProgress


class DateRangeUsed(Answer):
    since: str | None
    until: str | None
    expression: str


class Hits(Answer):
    mode: Literal["hybrid", "keyword", "vector", "dated"]
    results: list[Result]
    note: str | None = Field(
        None, description="why the answer is in keyword mode, or (/search) why there are none: the query is only particles"
    )
    date_range: DateRangeUsed | None = None
    min_score: float | None = Field(
        None, description="/similar: the cut-off used (null: none, keyword mode; /search never cuts)"
    )


class Journal(Answer):
    results: list[Result] = Field(description="headings of daily notes in the range, oldest first")
    date_range: DateRangeUsed
    more: bool = Field(description="more headings of the range were left out (raise k or narrow the range)")
    note: str | None = Field(None, description="why there are no results: no journal at all, or none in the range")


ROLE_FIELD = Field(
    description="'oracle' for the oracle's own words, 'conversation' for another turn of a conversation"
    " with it, null for the user's note (as a search result's role)"
)
REPLIES_FIELD = Field(
    description="in a heading of the user's: the lines of its body that are a grounded model's reply (a gptel"
    " chat's, an org-ai block's), the oracle's words kept in the note as written; [] for every other heading"
)


class LineSpan(Answer):
    line: int = Field(description="first file line")
    end_line: int = Field(description="last file line (inclusive)")


class NodeHeading(Answer):
    heading: str
    level: int
    line: int
    olp: list[str]
    heading_id: str | None
    todo: str | None
    tags: list[str]
    body: str
    end_line: int = Field(description="the last file line of its body (before any heading below it)")
    role: Literal["oracle", "conversation"] | None = Field(
        description="'oracle' for the oracle's own words (an answer it wrote, a heading below one), 'conversation'"
        " for another turn of a conversation with it, null for the user's note (as a search result's role)"
    )
    replies: list[LineSpan] = REPLIES_FIELD


class NodeLink(Answer):
    node_id: str
    title: str


class Node(Answer):
    node_id: str
    title: str
    file: str
    line: int
    level: int
    tags: list[str]
    aliases: list[str]
    date: str | None
    headings: list[NodeHeading]
    links: list[NodeLink] = Field(description="indexed nodes this node links to")
    backlinks: list[NodeLink] = Field(description="indexed nodes linking to this node")


class HeadingBelow(Answer):
    heading: str
    level: int
    line: int
    end_line: int = Field(description="the last file line of its body (before any heading below it)")
    body: str
    role: Literal["oracle", "conversation"] | None = ROLE_FIELD
    replies: list[LineSpan] = REPLIES_FIELD


class Heading(Answer):
    node_id: str | None
    heading_id: str | None
    title: str
    heading: str
    olp: list[str]
    file: str
    line: int
    end_line: int = Field(description="the last file line of its body (before any heading below it)")
    tags: list[str]
    body: str
    role: Literal["oracle", "conversation"] | None = ROLE_FIELD
    replies: list[LineSpan] = REPLIES_FIELD
    below: list[HeadingBelow] | None = Field(
        None, description="with end_line: the indexed headings after this one up to end_line, each with its role"
    )








class Error(Answer):
    ok: Literal[False]
    error: str
    status: int
    retry: bool | None = Field(None, description="409 only: whether the same request can succeed if sent again in a "
                               "moment, nothing changed by hand (true: the note is open elsewhere or being saved)")
    missing_model: str | None = Field(None, description="503 only: the chat model Ollama does not have (pull it "
                                      "on Ollama's machine, then ask again); the message says so in words")
