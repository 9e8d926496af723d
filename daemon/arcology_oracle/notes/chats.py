"""Conversations kept as org headings, read as dialogue: the ``/converse`` format and gptel chats.

Pure text in, turns out (:class:`~.records.Turn`, lines counted in the file), for
:mod:`.turns`, which stores them on one heading per conversation and embeds their scenes:

* a **conversation** (:mod:`.conversations`): a heading with a child whose ``:ROLE:``
  names the user or the assistant. Its turns are the heading itself (the topic, the
  user's) and each child with everything under it; the speaker is ``Oracle`` for the
  oracle's answers (``:ROLE: oracle``, the ``:oracle:`` tag, a title ``Oracle``, alone or
  before punctuation) and ``Me`` for the rest; the date is each turn heading's
  (``:CREATED:``, its timestamp, the daily's). An answer's ``Sources:`` list and its ``[n]`` markers are left out (they
  number the sources of that answer, not of a later one);
* a **gptel chat** saved as org (file properties ``GPTEL_*``, or a ``gptel`` mode line):
  the whole file. The model's responses are where ``GPTEL_BOUNDS`` (character positions,
  as gptel saves them) says (its reasoning and tool calls too; the ``#+begin_reasoning``
  and ``#+begin_tool`` lines around them are no one's), the rest is the user's prompts (heading stars and
  ``@user``-style prefix lines dropped); without bounds, lines holding only ``@name``
  switch speaker; else, with gptel's state saved (``GPTEL_*`` properties: gptel saves
  the bounds of every reply with it), all is the user's; else (a mode line alone) each
  heading's title is a prompt and its body the response.
  The speakers are ``user`` and the model (``:GPTEL_MODEL:``, else ``assistant``).
  The file record holds the turns (the first heading, when the file starts with one);
* an **org-ai chat** (a ``#+begin_ai`` ... ``#+end_ai`` block in a heading's body, as
  org-ai writes it; one never closed, or inside a verbatim block such as ``src`` or
  ``example``, is no block, as Org reads it): ``[ME]:``, ``[AI]:``, ``[AI_REASON]:`` and ``[SYS]:`` lines switch
  speaker (text before the first is the user's, as org-ai reads it). The speakers are
  ``Me``, ``System`` and the block's ``:model`` (else ``AI``); the heading holds the
  turns, its text outside the blocks a turn without speaker.

Only headings the reader kept are read, so private subtrees never become turns.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from .capture import is_captured
from .conversations import ORACLE_ROLES, USER_ROLES, is_marker_title, without_sources_lists
from .org_syntax import link_text
from .records import Heading, ParsedFile, Turn

ME, ORACLE = "Me", "Oracle"
GPTEL_USER, GPTEL_MODEL = "user", "assistant"
_CITATION = re.compile(r"[ \t]?\[\d{1,3}\]")
_MODE_LINE = re.compile(r"-\*-.*\bgptel\b.*-\*-")
_LOCAL_BOUNDS = re.compile(r"^\W*gptel--bounds:[ \t]*(\(.*\))[ \t]*$", re.MULTILINE)
_LOCAL_VARIABLES = re.compile(r"^\W*Local Variables:\s*$")
_PREFIX_LINE = re.compile(r"^[ \t]*@([\w-]+):?[ \t]*$")
_AI_BEGIN = re.compile(r"^[ \t]*#\+begin_ai\b(.*)$", re.IGNORECASE)
# A block's first and last lines (Org's): one without its end is no block, and what a
# verbatim one holds (a source block showing org-ai's syntax) is text, no element.
_BLOCK_BEGIN = re.compile(r"^[ \t]*#\+begin_(\S+)", re.IGNORECASE)
_VERBATIM_BLOCKS = frozenset({"src", "example", "export", "comment", "verse"})
_AI_ROLE = re.compile(r"^[ \t]*\[(SYS|ME|AI|AI_REASON)\]:[ \t]?(.*)$")
_AI_MODEL = re.compile(r'(?:^|\s):model[ \t]+(?:"([^"]*)"|([^\s:"]\S*))')  # quoted or not, as Babel reads it
ORG_AI_USER, ORG_AI_MODEL, ORG_AI_SYSTEM = "Me", "AI", "System"
_SEXP_TOKEN = re.compile(r'\(|\)|"(?:[^"\\]|\\.)*"|[^\s()"]+')
_MODEL_KINDS = frozenset({"response", "ignore", "tool"})  # gptel's bounds that are the model's words
# The lines gptel writes around a reasoning block or a tool call in org, with no
# property of their own: no one's words, and no turn of the user between the model's.
_GPTEL_BLOCK_LINE = re.compile(r"^[ \t]*#\+(?:begin|end)_(?:reasoning|tool)\b", re.IGNORECASE)


# -- /converse conversations ---------------------------------------------------------


def turn_role(heading: Heading) -> str | None:
    """``"user"``/``"assistant"`` when the heading says who speaks (``:ROLE:``, the
    ``:oracle:`` tag or an ``Oracle`` title), else None. Words kept by ``/memorize``
    (``:CAPTURED_BY:``) are in no conversation: only their ``:ROLE:`` says whose they are
    (a capture titled "Oracle bones" is the user's)."""
    role = heading.properties.get("ROLE", "").strip().lower()
    if role in USER_ROLES:
        return "user"
    if role in ORACLE_ROLES:
        return "assistant"
    if is_captured(heading.properties):
        return None
    if "oracle" in (t.lower() for t in heading.tags) or is_marker_title(heading.title):
        return "assistant"
    return None


def is_conversation_turn(heading: Heading) -> bool:
    """Whether ``heading`` has a ``:ROLE:`` naming the user or the assistant, and is no
    words kept by ``/memorize`` (``:CAPTURED_BY:``), which are in no conversation."""
    return heading.properties.get("ROLE", "").strip().lower() in USER_ROLES | ORACLE_ROLES and not is_captured(
        heading.properties
    )


def _content(heading: Heading, speaker: str) -> str:
    title = "" if heading.title.strip().lower() in {speaker.lower(), "me", "oracle"} else heading.title
    body = heading.text
    if speaker == ORACLE:
        body = _CITATION.sub("", without_sources_lists(body))
    return "\n\n".join(p for p in (title.strip(), body.strip()) if p)


def conversation_turns(root: Heading, members: Sequence[Heading]) -> list[Turn]:
    """The turns of the conversation whose topic is ``root`` and whose headings below it
    are ``members`` (in file order; the children of ``root`` start the turns, deeper
    headings belong to the turn above them)."""
    level = min((h.level for h in members), default=root.level + 1)
    groups: list[list[Heading]] = [[root]]
    for h in members:
        if h.level <= level:
            groups.append([h])
        else:
            groups[-1].append(h)
    turns: list[Turn] = []
    for group in groups:
        head = group[0]
        speaker = ORACLE if head is not root and turn_role(head) == "assistant" else ME
        parts = [_content(head, speaker)] + [f"{h.title}\n\n{h.text}".strip() for h in group[1:]]
        text = "\n\n".join(p for p in parts if p)
        if text:
            turns.append(Turn(len(turns), speaker, f"{speaker}: {text}", head.start_line, group[-1].end_line, head.date))
    return turns


# -- gptel chats ---------------------------------------------------------------------


def _sexp(text: str):
    """The first s-expression of ``text`` as nested lists of ints and strings."""
    stack: list[list] = [[]]
    for token in _SEXP_TOKEN.findall(text):
        if token == "(":
            stack.append([])
        elif token == ")":
            if len(stack) == 1:
                break
            done = stack.pop()
            stack[-1].append(done)
            if len(stack) == 1:
                break
        else:
            stack[-1].append(int(token) if token.lstrip("-").isdigit() else token)
    return stack[0][0] if stack[0] else None


def _response_spans(bounds: str) -> list[tuple[int, int]]:
    """The ``(beg, end)`` points of the model's words in gptel's bounds: ``((response (B E)
    ...) (ignore (B E) ...) (tool (B E ID) ...))`` or the older ``((B . E) ...)``. Text
    gptel leaves unsent (``ignore``: a reasoning block with ``gptel-include-reasoning``
    set to ``ignore``) and its tool calls with their results (``tool``) are the model's
    too, never the user's prompt."""
    try:
        tree = _sexp(bounds)
    except ValueError:
        return []
    spans: list[tuple[int, int]] = []
    for entry in tree if isinstance(tree, list) else []:
        if isinstance(entry, list) and len(entry) == 3 and entry[1] == "." and all(isinstance(x, int) for x in entry[::2]):
            spans.append((entry[0], entry[2]))  # (BEG . END)
        elif isinstance(entry, list) and entry and entry[0] in _MODEL_KINDS:
            spans += [(b[0], b[1]) for b in entry[1:] if isinstance(b, list) and len(b) >= 2 and all(isinstance(x, int) for x in b[:2])]
    return spans


def response_lines(lines: Sequence[str], properties: dict[str, str]) -> tuple[tuple[int, int], ...] | None:
    """The file lines (first, last; 1-based) of a gptel chat's responses, from its
    ``GPTEL_BOUNDS`` property or a ``gptel--bounds`` file variable; None when the file
    has neither. Bounds past the end of the file are ignored."""
    bounds = properties.get("GPTEL_BOUNDS")
    if bounds is None:  # a file variable, in the last lines
        tail = "\n".join(lines[-40:])
        found = _LOCAL_BOUNDS.search(tail) if "gptel--bounds" in tail else None
        bounds = found[1] if found else None
    if bounds is None:
        return None
    # The file's text as Emacs counts its points: a final newline is one (a response that
    # ends the file with its line ending is bounded past the last line).
    text = "\n".join(lines) + "\n"
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    out = []
    for beg, end in _response_spans(bounds):
        piece = text[beg - 1 : end - 1]  # Emacs points are 1-based
        if beg < 1 or end - 1 > len(text) or not piece.strip():
            continue
        first = beg - 1 + (len(piece) - len(piece.lstrip()))
        last = beg - 1 + len(piece.rstrip()) - 1
        out.append((bisect.bisect_right(starts, first), bisect.bisect_right(starts, last)))
    return tuple(out)


def is_gptel_chat(parsed: ParsedFile) -> bool:
    """Whether the file is a gptel chat saved as org: file-level ``GPTEL_*`` properties,
    a ``gptel--bounds`` file variable or a mode line naming gptel."""
    first = parsed.headings[0] if parsed.headings else None
    if first is None:
        return False
    return parsed.responses is not None or (
        first.level == 0
        and (any(k.startswith("GPTEL_") for k in first.properties) or _MODE_LINE.search(first.body.split("\n", 1)[0]) is not None)
    )


def gptel_turns(parsed: ParsedFile) -> list[Turn]:
    """The turns of a gptel chat (see the module docstring), in file order."""
    model = parsed.headings[0].properties.get("GPTEL_MODEL", "").strip() or GPTEL_MODEL
    responses = parsed.responses or ()
    # (file line, text, heading): every heading line and body line, in file order.
    lines: list[tuple[int, str, Heading]] = []
    for h in parsed.headings:
        body = h.body.split("\n")
        offset = h.end_line - len(body)
        if h.level:
            lines.append((h.start_line, h.title, h))
        lines += [(offset + 1 + i, line, h) for i, line in enumerate(body) if not (h.level == 0 and i == 0 and _MODE_LINE.search(line))]
    # A file variables section (gptel's bounds outside Org) is no one's turn.
    end = next((i for i, (_, text, _) in enumerate(lines) if _LOCAL_VARIABLES.match(text)), len(lines))
    lines = lines[:end]
    prefixed = parsed.responses is None and any(_PREFIX_LINE.match(text) for _, text, _ in lines)
    # gptel saves its state (GPTEL_MODEL...) with the bounds of the replies the buffer
    # holds: saved without bounds, it held none (gptel-mode turned on in a notes file).
    saved = any(k.startswith("GPTEL_") for k in parsed.headings[0].properties)

    def speaker_of(number: int, text: str, h: Heading, current: str) -> str:
        if parsed.responses is not None:
            return model if any(a <= number <= b for a, b in responses) else GPTEL_USER
        if prefixed:
            return current
        return GPTEL_USER if saved or (number == h.start_line and h.level) else model

    said: list[tuple[str, int, str, Heading]] = []
    current = GPTEL_USER
    for number, text, h in lines:
        marker = _PREFIX_LINE.match(text) if prefixed else None
        if marker:
            current = GPTEL_USER if marker[1].lower() in USER_ROLES else model
            continue
        if h.level == 0 and (text.startswith("#+") or (not text.strip() and not said)):
            continue  # the file's keywords (#+title)
        if _GPTEL_BLOCK_LINE.match(text):
            continue
        speaker = speaker_of(number, text, h, current)
        if speaker == GPTEL_USER and parsed.responses is not None and _PREFIX_LINE.match(text):
            continue  # gptel's "@user" / "@assistant" prefix, outside the responses: no one's
        said.append((speaker, number, text, h))
    return line_turns(said)


def line_turns(said: Sequence[tuple[str, int, str, Heading]]) -> list[Turn]:
    """The turns of ``said``, ``(speaker, file line, text, heading)`` in file order: each
    run of one speaker's lines is a turn (:func:`run_text`; none when it is all blank),
    dated by the heading of its first line."""
    runs: list[list] = []  # [speaker, first line, last line, texts, heading]
    for speaker, number, text, h in said:
        if runs and runs[-1][0] == speaker:
            runs[-1][2] = number
            runs[-1][3].append(text)
        else:
            runs.append([speaker, number, number, [text], h])
    turns: list[Turn] = []
    for speaker, first, last, texts, h in runs:
        body, first, last = run_text(texts, first, last)
        if body:
            turns.append(Turn(len(turns), speaker, f"{speaker}: {body}", first, last, h.date))
    return turns


def run_text(texts: list[str], first: int, last: int) -> tuple[str, int, int]:
    """The text of a speaker's run of lines ``texts`` (file lines ``first``..``last``),
    links as their descriptions, and the lines it spans once its blank lines at either
    end are left out."""
    while texts and not texts[-1].strip():
        texts.pop()
        last -= 1
    while texts and not texts[0].strip():
        texts.pop(0)
        first += 1
    return link_text("\n".join(texts)).strip(), first, last


# -- org-ai chats --------------------------------------------------------------------


def org_ai_turns(heading: Heading) -> list[Turn]:
    """The turns of the org-ai chats in ``heading``'s body (see the module docstring),
    lines counted in the file; ``[]`` when it holds no block with an ``[AI]:`` turn."""
    if "#+begin_ai" not in heading.body.lower():
        return []
    body = heading.body.split("\n")
    offset = heading.end_line - len(body)
    blocks = _ai_blocks(body)
    if not blocks:
        return []
    runs: list[list] = []  # [speaker, first line, last line, texts]
    model, speaker, answered, end = ORG_AI_MODEL, None, False, -1  # speaker None: outside a block
    for i, line in enumerate(body):
        number = offset + 1 + i
        if speaker is None and i in blocks and (begin := _AI_BEGIN.match(line)):
            found = _AI_MODEL.search(begin[1])
            model, speaker, end = ((found[1] or found[2]) if found else None) or ORG_AI_MODEL, ORG_AI_USER, blocks[i]
            continue
        if speaker is not None and i == end:
            speaker = None
            continue
        if speaker is not None and (role := _AI_ROLE.match(line)):
            speaker = {"ME": ORG_AI_USER, "SYS": ORG_AI_SYSTEM}.get(role[1], model)
            answered = answered or speaker == model
            line = role[2]
        who = "" if speaker is None else speaker
        if runs and runs[-1][0] == who:
            runs[-1][2] = number
            runs[-1][3].append(line)
        else:
            runs.append([who, number, number, [line]])
    if not answered:
        return []
    turns: list[Turn] = []
    for who, first, last, texts in runs:
        text, first, last = run_text(texts, first, last)
        if text:
            turns.append(Turn(len(turns), who, f"{who}: {text}" if who else text, first, last, heading.date))
    return turns


def _ai_blocks(lines: Sequence[str]) -> dict[int, int]:
    """``{first line: last line}`` (indices in ``lines``) of the org-ai blocks, as Org
    reads blocks: a ``#+begin_ai`` line with its ``#+end_ai`` after it, not inside a
    verbatim block (``src``, ``example``...: a note showing org-ai's syntax)."""
    found: dict[int, int] = {}
    i = 0
    while i < len(lines):
        begin = _BLOCK_BEGIN.match(lines[i])
        name = begin[1].lower() if begin else ""
        if name == "ai" or name in _VERBATIM_BLOCKS:
            end_re = re.compile(rf"^[ \t]*#\+end_{re.escape(name)}[ \t]*$", re.IGNORECASE)
            end = next((j for j in range(i + 1, len(lines)) if end_re.match(lines[j])), None)
            if end is not None:
                if name == "ai":
                    found[i] = end
                i = end + 1
                continue
        i += 1
    return found
