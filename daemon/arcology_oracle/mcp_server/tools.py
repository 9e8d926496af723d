"""The MCP server: tools and resources over a running daemon's HTTP API.

:func:`build_server` returns an SDK ``MCPServer`` whose every tool and resource is one or
a few calls to the daemon through :class:`~arcology_oracle.http.client.DaemonClient`, so
it sees exactly what the daemon serves (never private, crypt or excluded text) and works
the same over stdio (``arcology-oracle mcp``) and streamable HTTP (``serve --mcp-port``).

A failure the model can act on (daemon down, unknown ID, bad argument) comes back as a
tool error whose text says what happened and, for an unreachable daemon, its URL; the
server itself keeps running.

Tools: ``search_notes``, ``similar_notes``, ``read_note``, ``list_journal``, and
``remember`` only when ``mcp_allow_writes`` is set. ``list_journal`` is always listed (a
client reads the tool list once, often before the daemon runs or has indexed): when the
notes have no journal it answers so in its ``note``. Resources: the template
``org-roam://node/{node_id}``.
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import date
from typing import Annotated, TypeVar
from urllib.parse import quote

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from .. import __version__
from ..config import Settings
from ..errors import Conflict, NotFound, OracleError
from ..http.client import DaemonClient
from ..notes.model_text import quiet
from . import views

T = TypeVar("T")

NODE_URI = "org-roam://node/{node_id}"
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)

INSTRUCTIONS = """\
These tools read the user's personal org-roam notes (a knowledge base of headings, each
note with an ID). Search before answering questions about what the user knows, did or
wrote; read a note to see all of it with its links; cite notes with the `link` field
(an org link [[id:ID][title]]). Results never include notes the user marked private."""

Query = Annotated[str, Field(min_length=1, max_length=2000, description="what to look for, in words (a question or keywords)")]
K = Annotated[int, Field(ge=1, le=50, description="how many results to return")]
Day = Annotated[date | None, Field(description="YYYY-MM-DD; omit for no bound")]
JournalDay = Annotated[date, Field(description="YYYY-MM-DD (inclusive)")]
JournalK = Annotated[int, Field(ge=1, le=200, description="at most this many headings")]
# An ID is checked here, so that a bad one is a message about the argument, not about the
# daemon's HTTP (an empty node= or a request line too long).
NODE_ID_CHARS = {"min_length": 1, "max_length": 200}


async def ask(call: Awaitable[T]) -> T:
    """Await a daemon call; domain errors become tool errors the model can read."""
    try:
        return await call
    except OracleError as exc:
        raise ToolError(str(exc)) from None


def check_range(since: date | None, until: date | None) -> None:
    """A tool error when ``since`` is after ``until``."""
    if since and until and since > until:
        raise ToolError("since is after until")


def build_server(client: DaemonClient, settings: Settings) -> MCPServer:
    """The MCP server over ``client``'s daemon (see the module docstring)."""
    server = MCPServer(
        "arcology-oracle", title="Org-roam notes", version=__version__, instructions=INSTRUCTIONS
    )

    @server.tool(annotations=READ_ONLY)
    async def search_notes(query: Query, k: K = 8, since: Day = None, until: Day = None) -> views.Hits:
        """Search the user's notes by meaning and keywords; returns the best matching
        headings with their note IDs, outline paths, date, a snippet and a citation link.
        Use read_note with a node_id to read a whole note. With since and/or until, only
        headings dated in that range (inclusive) are returned: journal entries are dated
        by their day, other headings by a CREATED property or a timestamp (their own or
        the nearest heading above them), else by when their file was last saved."""
        check_range(since, until)
        body = await ask(client.get("/search", {"q": query, "k": k, "since": since, "until": until}))
        note = None
        if since is not None or until is not None:
            note = f"only headings dated {since or 'any time'} to {until or 'now'}"
        return views.Hits(mode=body["mode"], results=[views.hit(r) for r in body["results"]], note=note)

    @server.tool(annotations=READ_ONLY)
    async def list_journal(since: JournalDay, until: JournalDay, k: JournalK = 50) -> views.Journal:
        """List the user's journal (org-roam daily notes) between two days, inclusive:
        every heading written in a daily note of that range, oldest first, each with its
        date, a snippet and a citation link. Use it for "what did I do last week" or to
        review a period; use search_notes to find a subject. If the notes have no
        journal, or none in the range, the answer's note says so."""
        check_range(since, until)
        body = await ask(client.get("/journal", {"since": since, "until": until, "k": k}))
        return views.Journal(results=[views.hit(r) for r in body["results"]], more=body["more"], note=body.get("note"))

    @server.tool(annotations=READ_ONLY)
    async def similar_notes(
        node_id: Annotated[str | None, Field(**NODE_ID_CHARS, description="ID of a note: find notes related to it (excluding itself)")] = None,
        text: Annotated[str | None, Field(max_length=100_000, description="free text: find notes related to it")] = None,
        k: K = 8,
    ) -> views.Hits:
        """Find notes related in meaning to one note (give node_id) or to a piece of
        text (give text); exactly one of the two. Good for exploring what else the
        user wrote about a subject, or for finding notes to link."""
        if (node_id is None) == (text is None):
            raise ToolError("give exactly one of node_id or text")
        if node_id is not None:
            body = await ask(client.get("/similar", {"node": node_id, "k": k}))
        else:
            if not text.strip():
                raise ToolError("text is empty")
            body = await ask(client.post("/similar", {"text": text, "k": k}))
        return views.Hits(mode=body["mode"], results=[views.hit(r) for r in body["results"]], note=body.get("note"))

    @server.tool(annotations=READ_ONLY)
    async def read_note(
        id: Annotated[str, Field(**NODE_ID_CHARS, description="the note's node ID (node_id in search results, or the ID in an [[id:...]] link)")],
    ) -> views.Note:
        """Read one note in full: title, outline path, tags, aliases, date, its org
        text (headings and bodies, at most 20,000 characters), and the notes it links
        to and that link to it (ids with titles; read those with read_note too). A
        heading whose drawer says :ROLE: oracle is an answer the assistant itself wrote
        earlier, not the user's own note."""
        return views.note(await ask(_get_node(client, id)))

    @server.resource(NODE_URI, name="org-roam node", mime_type="text/x-org", description="A note's org text, by its ID")
    async def node_resource(node_id: str) -> str:
        try:
            node = await _get_node(client, node_id)
        except NotFound as exc:
            raise ResourceNotFoundError(str(exc)) from None
        except OracleError as exc:
            raise ResourceError(str(exc)) from None
        return views.org_text(node)[0]

    if settings.mcp_allow_writes:
        add_write_tools(server, client)
    return server


def add_write_tools(server: MCPServer, client: DaemonClient) -> None:
    """Tools that write to the notes (offered only with ``mcp_allow_writes``).

    ``remember`` posts to the daemon's ``/memorize`` (capture into today's daily note)
    the model's text quieted (:func:`~arcology_oracle.notes.model_text.quiet`: no link
    that runs code, no active timestamp, no LaTeX that reads or runs) with ``quiet_title``:
    the daemon keeps its title's first word from being read as a task's state or
    priority, and quiets its ``id:`` links to IDs no note has (they would make the daily's
    exports fail); its heading is a task on the user's agenda only when the agent says
    ``task`` (then in the first TODO state the daily declares: ``NEXT`` for
    ``#+TODO: NEXT | DONE``).
    The text is not marked as the oracle's (no ``:ROLE:``): the user asked for it.
    Until the daemon has that route it answers with a tool error saying so. A capture the
    daemon refuses (409) is a tool error that says whether to try again
    (:func:`views.refused`).
    """

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False))
    async def remember(
        text: Annotated[str, Field(min_length=1, max_length=100_000, description="what to remember, as the user would write it")],
        task: Annotated[bool, Field(description="true only when the user asked for a task or a reminder: the note is"
                                    " then a TODO on their agenda (no word of the text makes it one)")] = False,
    ) -> CallToolResult:
        """Write a short note into the user's notes (today's journal) so that it can be
        found later. Use only when the user asks you to remember something. If the notes
        cannot take it now, the error's retry says whether the same call can work in a
        moment (true: the note is open or unsaved elsewhere) or never will (false)."""
        quieted = quiet(text)  # a model's words, not the user's typing (an agent does what it read tells it)
        # The daemon takes the title from the text and quiets its first word (a keyword the
        # daily declares too) and the text's unknown id: links; a task starts with a state
        # the daily reads as one.
        body = {"text": quieted, "quiet_title": True, "task": task}
        try:
            answer = await client.post("/memorize", body)
        except NotFound:
            raise ToolError("this daemon cannot take notes yet: it has no /memorize route") from None
        except Conflict as exc:
            return views.refused(str(exc), exc.retry)
        except OracleError as exc:
            raise ToolError(str(exc)) from None
        state = str(answer.get("title") or "TODO").split(" ", 1)[0]  # the daily's own (``#+TODO: NEXT | DONE``)
        said = (answer.get("link") or f"remembered (id {answer.get('id')})") + (f" (a {state} task)" if task else "")
        return CallToolResult(content=[TextContent(type="text", text=said)])


async def _get_node(client: DaemonClient, node_id: str) -> dict:
    """The daemon's ``/nodes/ID`` answer. NotFound for "." and "..", which are no IDs:
    quoted, they stay path segments that the HTTP client resolves (``/nodes/..`` is
    ``/``, the daemon's own page)."""
    if node_id.strip(".") == "":
        raise NotFound(f"no node with ID {node_id!r}")
    return await client.get(f"/nodes/{quote(node_id, safe='')}")
