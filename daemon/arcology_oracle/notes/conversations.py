"""Org outlines as conversations: reading the turns, writing the oracle's answer heading.

Pure text in, text out (no index, no network). A conversation is an org subtree: its
first heading is the **root** (the topic; its title and body open the conversation) and
the headings one level below it are the **turns**, each with everything under it.

Who speaks in a turn:

1. a ``:ROLE:`` property (``user``/``me``/``human`` or ``oracle``/``assistant``/``ai``);
2. else the marker (default ``oracle``): a turn tagged ``:oracle:`` or titled
   ``Oracle`` (alone or before punctuation, :func:`is_marker_title`) is the oracle's;
3. else, when some turn of the conversation is marked by 1 or 2, an unmarked turn is the
   user's; when none is, the turns alternate user, oracle, user... (first one user).

:func:`render_answer` writes the oracle's reply as a heading one level below the root,
with a property drawer (``ROLE``, ``ORACLE_MODEL``, ``CREATED``, ``SOURCES``) and the
sources as a plain list (or ``[[id:...][title]]`` links, ``answer_source_links``), ready
to insert.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from ..errors import BadRequest
from .model_text import quiet, quiet_links
from .org_escape import escape_line, inert, without_controls
from .org_syntax import (
    DRAWER_END_RE,
    DRAWER_START_RE,
    HEADING_LINE_RE,
    PLANNING_RE,
    PROPERTIES_START_RE,
    property_line,
    split_heading_tags,
)

USER_ROLES = frozenset({"user", "me", "human", "you", "question"})
ORACLE_ROLES = frozenset({"oracle", "assistant", "ai", "model", "bot", "answer"})
# The daemon's grounded models are named ``MODEL+notes`` (``llama3.2+notes``, or with a
# tag after it, ``qwen2.5+notes:7b``): a gptel chat whose model is one is the oracle's.
GROUNDED_SUFFIX = "+notes"


def is_grounded_speaker(speaker: str) -> bool:
    """Whether a dialogue turn's ``speaker`` (or a model's name) is one of the daemon's
    grounded models (``llama3.2+notes``, ``qwen2.5+notes:7b``; any letter case, as SQL's
    ``LIKE`` in :func:`arcology_oracle.store.oracle_words.oracle_turn_sql`)."""
    name = speaker.strip().lower()
    return name.endswith(GROUNDED_SUFFIX) or GROUNDED_SUFFIX + ":" in name

_FENCE = re.compile(r"^([ \t]*)```[ \t]*([\w+-]*)[ \t]*$")
_BLOCK_START = re.compile(r"^([ \t]*)#\+begin_(src|example)(?:[ \t]+([\w+-]*).*)?$", re.IGNORECASE)
_BLOCK_END = {kind: re.compile(rf"^[ \t]*#\+end_{kind}[ \t]*$", re.IGNORECASE) for kind in ("src", "example")}
# Org's escape inside a block (org-escape-code-in-string): one more comma.
_BLOCK_ESCAPE = re.compile(r"^[ \t]*,*(?:\*|#\+)")
_MD_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_STAR_LINE = re.compile(r"^([ \t]*)(\*+)([ \t]+)(.*)$")
# Markdown's **bold** and `code`, as Org writes them (Emacs's answers buffer does the same).
_MD_BOLD = re.compile(r"\*\*([^*\s](?:[^*\n]*[^*\s])?)\*\*")
_MD_CODE = re.compile(r"`([^`~\s](?:[^`~\n]*[^`~\s])?)`")
_SOURCES_LINE = re.compile(r"^[ \t]*Sources:[ \t]*$")
_LIST_ITEM = re.compile(r"^[ \t]*(?:-|\+|\d+[.)])[ \t]")
_CITATION = re.compile(r"[ \t]?\[\d{1,3}\]")
# Babel's header arguments: this block is never evaluated, nor tangled into a file (as a
# file's ``#+PROPERTY: header-args :tangle yes`` would have it, a literate config's).
_NO_EVAL = ":eval no :tangle no :noweb no"


@dataclass(slots=True)
class Turn:
    """One message: ``role`` is "user" or "assistant"; ``text`` is the heading title and
    everything under it (property drawers and planning lines left out)."""

    role: str
    title: str
    text: str
    line: int


@dataclass(slots=True)
class Conversation:
    """The parsed subtree: ``level`` of the root, its ``title`` and ``body``, the turns."""

    level: int
    title: str
    body: str
    turns: list[Turn] = field(default_factory=list)

    def messages(self) -> list[dict[str, str]]:
        """Chat messages: the topic as the first user message, then the turns, with
        consecutive messages of one role joined."""
        out: list[dict[str, str]] = []
        opening = self.title + ("\n\n" + self.body if self.body else "")
        for role, text in [("user", opening), *((t.role, t.text) for t in self.turns)]:
            if not text.strip():
                continue
            if out and out[-1]["role"] == role:
                out[-1]["content"] += "\n\n" + text
            else:
                out.append({"role": role, "content": text})
        return out

    @property
    def history(self) -> str:
        """The conversation before the last user turn (the topic first), or ``""``."""
        if not self.turns:
            return ""
        parts = [self.title, self.body, *(t.text for t in self.turns[:-1])]
        return "\n\n".join(p for p in parts if p)

    @property
    def question(self) -> str:
        """What the user said last (the topic when there are no turns)."""
        for turn in reversed(self.turns):
            if turn.role == "user":
                return turn.text
        return self.title + ("\n\n" + self.body if self.body else "")


@dataclass(slots=True)
class _Heading:
    level: int
    title: str
    tags: list[str]
    properties: dict[str, str]
    lines: list[str]  # body lines without drawer and planning
    line: int


def _heading_line(line: str) -> tuple[int, str] | None:
    """``(level, text after the stars)`` of a heading line (Org's: stars, a space), else None."""
    if not HEADING_LINE_RE.match(line):
        return None
    stars = len(line) - len(line.lstrip("*"))
    return stars, line[stars:].strip()


def _title_and_tags(text: str) -> tuple[str, list[str]]:
    """A heading's title and tags by Org's rule: tags (Org's characters) follow a space,
    and empty ones (``:a::b:``) are none."""
    title, tags = split_heading_tags(text)
    if tags and title and text[len(title)] == ":":  # "Re:a:" has no tag in Org (orgparse reads one)
        return text, []
    return title, [t for t in tags if t]


def _headings(text: str) -> list[_Heading]:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[_Heading] = []
    i = 0
    while i < len(lines):
        found = _heading_line(lines[i])
        if not found:
            i += 1
            if out:
                out[-1].lines.append(lines[i - 1])
            continue
        title, tags = _title_and_tags(found[1])
        heading = _Heading(found[0], title, tags, {}, [], i + 1)
        i += 1
        if i < len(lines) and PLANNING_RE.match(lines[i]):
            i += 1
        if i < len(lines) and PROPERTIES_START_RE.match(lines[i]):
            j = i + 1
            props: dict[str, str] = {}
            while j < len(lines) and not DRAWER_END_RE.match(lines[j]) and not HEADING_LINE_RE.match(lines[j]):
                pair = property_line(lines[j])
                if pair and pair[0]:
                    props[pair[0].upper()] = pair[1]
                j += 1
            if j < len(lines) and DRAWER_END_RE.match(lines[j]):
                heading.properties = props
                i = j + 1
        out.append(heading)
    for heading in out:
        heading.lines = _drop_drawers(heading.lines)
    return out


def _drop_drawers(lines: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        if DRAWER_START_RE.match(lines[i]) and not DRAWER_END_RE.match(lines[i]):
            j = i + 1
            while j < len(lines) and not DRAWER_END_RE.match(lines[j]):
                j += 1
            if j < len(lines):
                i = j + 1
                continue
        out.append(lines[i])
        i += 1
    return out


def _explicit_role(h: _Heading, marker: str) -> str | None:
    role = h.properties.get("ROLE", "").strip().lower()
    if role in USER_ROLES:
        return "user"
    if role in ORACLE_ROLES:
        return "assistant"
    if marker:
        if marker.lower() in (t.lower() for t in h.tags):
            return "assistant"
        if is_marker_title(h.title, marker):
            return "assistant"
    return None


def is_marker_title(title: str, marker: str = "oracle") -> bool:
    """Whether a turn's ``title`` marks it as the oracle's: the marker alone or followed
    by punctuation (``Oracle``, ``Oracle:``, ``Oracle (llama3.2)``, ``Oracle <2024-03-01>``),
    any letter case. Followed by a word it is the user's subject (``Oracle of Delphi``,
    ``Oracle Database``), as is ``Oracle's ...``."""
    return re.match(rf"{re.escape(marker)}\s*(?:$|[^\w\s'’])", title.strip(), re.IGNORECASE) is not None


def _strip_sources(lines: list[str]) -> list[str]:
    """An oracle turn without its Sources list (old [n] numbers mean nothing now)."""
    for i, line in enumerate(lines):
        if _SOURCES_LINE.match(line):
            return lines[:i]
    return lines


def parse_conversation(org: str, *, marker: str = "oracle") -> Conversation:
    """Read ``org`` (text before the first heading is ignored). Raises BadRequest when
    there is no heading or the last turn is the oracle's (nothing to answer)."""
    headings = _headings(org)
    if not headings:
        raise BadRequest("the org text has no heading: give the conversation's subtree")
    root = headings[0]
    turn_level = None
    groups: list[tuple[_Heading, list[str]]] = []
    for h in headings[1:]:
        if h.level <= root.level:
            break  # past the subtree
        if turn_level is None or h.level <= turn_level:
            turn_level = h.level
            groups.append((h, list(h.lines)))
        else:
            # Deeper headings belong to their turn, kept as text (one level shallower).
            stars = "*" * max(1, h.level - turn_level)
            groups[-1][1].append(f"{stars} {h.title}")
            groups[-1][1].extend(h.lines)
    explicit = [_explicit_role(h, marker) for h, _ in groups]
    marked = any(r is not None for r in explicit)
    turns: list[Turn] = []
    for i, ((h, lines), role) in enumerate(zip(groups, explicit)):
        if role is None:
            role = "user" if marked or i % 2 == 0 else "assistant"
        if role == "assistant":
            lines = [_CITATION.sub("", line) for line in _strip_sources(lines)]
        body = "\n".join(lines).strip()
        title = h.title
        if role == "assistant" and re.fullmatch(rf"{re.escape(marker)}\W*", title, re.IGNORECASE):
            title = ""  # a bare "Oracle" title says nothing
        text = "\n\n".join(p for p in (title, body) if p)
        turns.append(Turn(role, h.title, text, h.line))
    if turns and turns[-1].role == "assistant":
        raise BadRequest("the last turn is the oracle's: add your reply as a new heading first")
    return Conversation(root.level, root.title, "\n".join(root.lines).strip(), turns)


def org_safe(text: str) -> str:
    """Model output made safe as the body of an org heading: no line becomes a heading
    (``* item`` bullets become ``- item``), markdown headings become bold lines, ``**bold**``
    becomes ``*bold*`` and backquoted code ``~code~`` (as Emacs shows a streamed answer), fenced
    code becomes ``#+begin_src`` blocks, and the model's own ``#+begin_src`` and
    ``#+begin_example`` blocks stay blocks (header arguments such as ``:tangle`` dropped,
    an unclosed block closed), with Org's comma escapes inside; a source block with a
    language gets ``:eval no :tangle no :noweb no``, so Babel never runs the model's code (an
    export would, in a file whose ``header-args`` export results, and ``C-c C-v b`` would)
    nor writes it into a file (``C-c C-v t``, where they say ``:tangle yes``), and an
    export expands no noweb reference of the model's (where they say ``:noweb yes``,
    ``<<name(x=(lisp))>>`` ran the user's block ``name`` and the model's Lisp in its
    argument, on export with ``org-confirm-babel-evaluate`` nil). Every other line is made
    inert as captured text is (:func:`~.org_escape.escape_line`: a keyword, block,
    drawer or footnote definition line gets a comma, ``Local Variables:``, ``<<`` and a
    labelled inline footnote a zero-width space), no line holds a link that runs
    code, an active timestamp or LaTeX that reads or runs (:func:`~.model_text.quiet`:
    in blocks and the model's name, a zero-width space after a timestamp's ``<``), and
    control characters (NUL, form feed, ESC) become U+FFFD, so an answer cannot set the
    file's tags, TODO keywords, mode, coding, targets or footnotes. A lone carriage
    return is a line break like any other (and escaped as one): Emacs keeps it in the
    buffer as a character, but in a file with CR line endings it is one once saved, so
    a CR before ``* heading`` or ``#+filetags:`` would make the user's heading or tags."""
    out: list[str] = []
    end: re.Pattern[str] | None = None  # the line closing the block we are in
    end_line = ""
    for line in without_controls(text).replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if end is not None:
            if end.match(line):
                out.append(end_line)
                end = None
            else:
                # Blocks are verbatim to Org (no targets), not to Emacs's search for Local Variables.
                out.append(inert(quiet("," + line if _BLOCK_ESCAPE.match(line) else line, verbatim=True), targets=False))
            continue
        fence = _FENCE.match(line)
        block = _BLOCK_START.match(line)
        if fence or block:
            indent, kind, language = (fence[1], "src", fence[2]) if fence else (block[1], block[2].lower(), block[3] or "")
            # The model's code runs only when the user takes it as theirs (deletes the
            # ":eval no"): not on export, where the file's header-args may export results.
            out.append(f"{indent}#+begin_{kind} {language + ' ' + _NO_EVAL if kind == 'src' and language else ''}".rstrip())
            end, end_line = (_FENCE if fence else _BLOCK_END[kind]), f"{indent}#+end_{kind}"
            continue
        star = _STAR_LINE.match(line)
        md = _MD_HEADING.match(line)
        if star:
            line = f"{star[1]}{'  ' * (len(star[2]) - 1)}-{star[3]}{star[4]}"
        elif md:
            line = f"*{md[2].strip('* ')}*"
        line = _MD_CODE.sub(r"~\1~", _MD_BOLD.sub(r"*\1*", line))
        out.append(escape_line(quiet(line)))
    if end is not None:
        out.append(end_line)
    return quiet_links("\n".join(out).strip())  # a bracket link over lines is one to Org


def without_sources_lists(text: str) -> str:
    """``text`` without the ``Sources:`` lists the daemon writes (a ``Sources:`` line and
    the list items right under it), whose links are its citations, not the user's links."""
    out: list[str] = []
    in_list = False
    for line in text.split("\n"):
        if _SOURCES_LINE.match(line):
            in_list = True
            continue
        if in_list and _LIST_ITEM.match(line):
            continue
        in_list = False
        out.append(line)
    return "\n".join(out)


def is_sources_list(paragraph: str) -> bool:
    """Whether a paragraph is one of the daemon's ``Sources:`` lists."""
    return bool(_SOURCES_LINE.match(paragraph.split("\n", 1)[0]))


def is_oracle_answer(properties: dict[str, str]) -> bool:
    """Whether a heading with these properties is one of the oracle's own answers (its
    ``:ROLE:`` names the assistant, as :func:`render_answer` writes)."""
    return properties.get("ROLE", "").strip().lower() in ORACLE_ROLES


def org_timestamp(when: datetime) -> str:
    """An inactive org timestamp, ``[2024-03-01 Fri 14:05]``."""
    return when.strftime("[%Y-%m-%d %a %H:%M]")


def _property_value(text: str) -> str:
    """``text`` as one inert property value: a model's name comes from the request, or
    from whatever server answers as Ollama, and a line break in it ended the drawer."""
    return inert(quiet(" ".join(without_controls(text).split()), verbatim=True), targets=False)


def render_answer(
    answer: str,
    sources_block: str,
    *,
    level: int,
    model: str,
    when: datetime,
    title: str = "Oracle",
    used_notes: bool = True,
    source_targets: str | None = None,
) -> str:
    """The oracle's heading at ``level`` (the root's level + 1): properties (``ORACLE_MODEL``
    on one line whatever the name holds; ``SOURCES`` when ``source_targets`` is given:
    the cited notes' IDs in order), the answer (see
    :func:`org_safe`), then ``Sources:`` and ``sources_block`` (an org list; empty with
    ``used_notes``: the notes used left the index while the model answered)."""
    sources = [f":SOURCES:  {source_targets}"] if source_targets and used_notes else []
    lines = [
        f"{'*' * level} {title}",
        ":PROPERTIES:",
        ":ROLE:     oracle",
        f":ORACLE_MODEL: {_property_value(model)}",
        f":CREATED:  {org_timestamp(when)}",
        *sources,
        ":END:",
        org_safe(answer),
        "",
        "Sources:",
        sources_block if used_notes and sources_block
        else "- none: the notes used have left the index since (made private or deleted)" if used_notes
        else "- none: no notes were relevant enough, so none were used",
    ]
    return "\n".join(lines) + "\n"
