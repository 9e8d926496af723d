"""The writing routes' requests and answers: /memorize and /forget (see :mod:`.schemas`
for the conventions; :mod:`.openapi` describes them with the rest)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .request_paths import NewFolder
from .schemas import Answer, Line, NodeId, RelPath, Request, Text


class MemorizeRequest(Request):
    text: Annotated[Text, Field(max_length=200_000, description="what to remember")]
    title: Annotated[str, Field(max_length=500)] | None = Field(None, description="the heading (default: the first words)")
    tags: Annotated[list[Annotated[str, Field(max_length=100)]], Field(max_length=50)] | None = None
    source: Annotated[str, Field(max_length=2000)] | None = Field(
        None, description="where the text came from, e.g. an org link; written as the :SOURCE: property")
    dailies_dir: NewFolder | None = Field(None, description="the daily notes' folder (default: the dailies_dir setting;"
                                          " '.' is the roam directory itself)")
    role: Literal["oracle"] | None = Field(
        None,
        description="'oracle' for words the oracle wrote (an answer or a summary kept): written as :ROLE: oracle, so"
        " that they are marked as its own and never read as the user's notes",
    )
    quiet_title: bool = Field(
        False, description="the text is not the user's typing (an agent's): a first word of its title Org would read as"
        " a TODO keyword (one the daily declares too), a priority or COMMENT gets a zero-width space before it, and"
        " an id: link to an ID no note has one before its colon")
    task: bool = Field(False, description="the heading is a task: it starts with the first TODO state the note it goes"
                       " to declares (TODO when it declares none), a first word TODO of the title not said twice")
    unsaved: Annotated[list[RelPath], Field(max_length=10_000)] | None = Field(
        None, description="notes (relative to the roam directory) with unsaved edits in the client's editor, taken as"
        " locked by Emacs: today's daily among them sends the capture to the inbox (an Emacs without lock files)")
    file: RelPath | None = Field(None, description="the note the text was cut from: text from a private part of it, or"
                                 " of a private note, is refused (400, nothing written)")
    line: Line | None = Field(None, description="with file: the text's first line there (none: a buffer with unsaved edits)")


class ForgetRequest(Request):
    id: Annotated[NodeId, Field(description="the ID of a heading the daemon captured")]
    unsaved: Annotated[list[RelPath], Field(max_length=10_000)] | None = Field(
        None, description="notes (relative to the roam directory) with unsaved edits in the client's editor, taken as"
        " locked by Emacs: the capture's note among them is a 409 (retry true), nothing removed")


class Memorized(Answer):
    ok: bool
    id: str
    title: str
    file: str
    line: int
    link: str
    inbox: bool = Field(description="written to the capture inbox: Emacs holds today's daily, or it links out of the notes")
    indexed: bool = Field(description="whether the index holds the capture now (false for a private one: written, never indexed)")
    note: str | None


class Forgotten(Answer):
    ok: bool
    id: str
    file: str
    line: int
    removed_lines: int
    remaining_rows: int
    note: str | None = Field(None, description="set when the note was changed but the index could not take it yet")
