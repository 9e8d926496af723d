"""The answering routes' requests and answers: /ask, /summarize, /converse, /recall (see
:mod:`.schemas` for the conventions; :mod:`.openapi` describes them with the rest)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

# Answer sources are the answers layer's dataclass, described as it is.
from ..answers.sources import Source
from .schemas import MAX_TEXT, Answer, Count, Dated, DateRangeUsed, Line, Model, RelPath, Request, Text

# --------------------------------------------------------------------------- requests


class AskQuery(Request):
    q: Annotated[Text, Field(max_length=MAX_TEXT, description="the question")]
    k: Count(50) = 8
    model: Model | None = None


class AskRequest(Dated):
    question: Annotated[str, Field(max_length=MAX_TEXT)] = ""
    buffer: str | None = Field(None, description="the text the question is about (e.g. the Emacs buffer)")
    file: RelPath | None = None
    line: Line = 1
    visiting: RelPath | None = Field(
        None, description="the file the buffer is a state of, saved or not: where the setup files it names are looked for"
    )
    k: Count(50) = 8
    model: Model | None = None
    stream: bool | None = Field(None, description="NDJSON events (default: when Accept names application/x-ndjson)")
    progress: bool = Field(False, description="with stream: a 'found' event once the notes are found (README, /ask)")


class RecallRequest(Dated):
    question: Annotated[Text, Field(max_length=10_000)]
    k: Count(50) = 8
    multi_query: bool = Field(False, description="the chat model writes up to three more search strings")
    model: Model | None = None


class SummarizeRequest(Request):
    node: Annotated[str, Field(max_length=200)] | None = None
    file: RelPath | None = None
    question: Annotated[str, Field(max_length=MAX_TEXT)] | None = None
    k: Count(50) = 5
    model: Model | None = None
    stream: bool | None = None


class ConverseRequest(Request):
    org: Annotated[Text, Field(description="the org subtree holding the conversation so far")]
    file: RelPath | None = Field(None, description="the file the conversation is saved in: refused where that file is private")
    line: Line | None = Field(None, description="with file: the line of the conversation's root heading")
    marker: Annotated[str, Field(max_length=50)] = "oracle"
    k: Count(50) = 8
    model: Model | None = None


# --------------------------------------------------------------------------- answers

MODE_FIELD = Field(description="how the notes were found, as /search's mode: keyword when the question's embedding"
                   " did not come within search_embed_wait")


class AskAnswer(Answer):
    answer: str
    sources: list[Source]
    used_notes: bool
    model: str
    date_range: DateRangeUsed | None = Field(None, description="the dates the notes were taken from")
    mode: Literal["vector", "keyword"] = MODE_FIELD


class Recalled(Answer):
    question: str
    queries: list[str]
    date_range: DateRangeUsed | None
    notes: list[dict[str, Any]] = Field(description="sources, each with its fused_score and text")
    multi_query_error: str | None = None
    note: str | None = Field(None, description="why there are no notes: the question is only stop words or particles")
    mode: Literal["vector", "keyword"] = Field(description="how the notes were found, as /search's mode: keyword when"
                                              " any query's embedding did not come within search_embed_wait")


class Summary(Answer):
    summary: str
    sources: list[Source]
    cached: bool
    used_notes: bool
    model: str
    mode: Literal["vector", "keyword"] | None = Field(
        description="with only a question: how the notes were found, as /ask's mode; null for a note named by node or file"
    )


class Conversation(Answer):
    org: str
    answer: str
    sources: list[Source]
    used_notes: bool
    model: str
    mode: Literal["vector", "keyword"] = MODE_FIELD
