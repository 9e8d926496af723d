"""Read one org file into :class:`~arcology_oracle.notes.Heading` records.

Pure: bytes in, records out; no SQLite, no network. The one promise that matters most is
that :func:`read_org_bytes` never raises, whatever the bytes: a part that cannot be read is
left out, and the reason is appended to ``ParsedFile.problems`` and logged once (with the
path and the reason, never the note's text).

Decisions worth knowing (see the tests for each):

* Lines are the file's lines: CRLF and lone CR (old Mac files without any LF) end lines,
  a stray CR inside an LF file is dropped, a final newline does not start a new line.
  So an empty file has 0 lines and yields **no headings at all**.
* A level-0 record exists when the file has at least one line before its first heading.
  A file that starts with a heading has no level-0 record (it cannot be a file node:
  org-roam needs the file's ``:ID:`` drawer before the first heading).
* Property keys are upper-cased (Org property names are case-insensitive); values are
  strings.
* Exclusions (privacy) are decided by :class:`~arcology_oracle.notes.privacy.Privacy` (tags,
  inherited tags and ``#+filetags`` wherever they stand, ``ROAM_EXCLUDE`` but for
  ``nil``, PGP blocks): an excluded heading is left out together with its whole
  subtree, as is a heading whose text could not be parsed. An excluded file (file-level
  ``ROAM_EXCLUDE`` or an excluding file tag) has no headings, ``file_id`` None and the
  file name as title. A PGP block before the first heading drops only the level-0
  record. Heading tags are read with Org's tag characters ``[[:alnum:]_@#%]``.
* Timestamps are never parsed as dates, so invalid ones (``<2025-02-30 Sun>``, hour 25)
  cannot spoil a file: the text stays as written, and the lines holding them are reported
  once as a problem. (orgparse itself rejects the whole file on one invalid date and has
  super-linear regexes; :class:`_SafeParsing` replaces those steps.) Should orgparse still
  raise, each heading whose text fails to parse alone is left out with its subtree.
* Planning lines (SCHEDULED/DEADLINE/CLOSED right after the heading) and ``CLOCK:`` lines
  are not part of the body; everything else is, as written.
"""

from __future__ import annotations

import datetime
import logging
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import orgparse
from orgparse.date import OrgDateClosed, OrgDateDeadline, OrgDateScheduled
from orgparse.node import (
    OrgBaseNode,
    OrgEnv,
    OrgNode,
    OrgRootNode,
    parse_comment,
    parse_heading_priority,
    parse_heading_todos,
    parse_seq_todo,
)

from .privacy import DEFAULT_PRIVATE_TAGS, TAG_CHARS, Privacy, file_tags
from .records import Heading, ParsedFile

log = logging.getLogger(__name__)

# orgparse's own test for a heading line (node.RE_NODE_HEADER): stars then a space.
HEADING_LINE_RE = re.compile(r"^\*+ ")

_LINK_RE = re.compile(r"\[\[([^\[\]]+)\](?:\[([^\[\]]*)\])?\]")
_ID_LINK_RE = re.compile(r"\[\[id:([^\[\]]+)\](?:\[[^\[\]]*\])?\]")
_TOKEN_RE = re.compile(r'"((?:[^"\\]|\\.)*)"|(\S+)')
_ISO_DATE_RE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_COMPACT_DATE_RE = re.compile(r"(?<!\d)(\d{4})(\d{2})(\d{2})(?:T?\d{4,6})?(?!\d)")
_STAMP_DATE_RE = re.compile(r"[<\[](\d{4})-(\d{2})-(\d{2})")
_TEXT_KEYWORD_RE = re.compile(r"^[ \t]*#\+(?:title|filetags):.*$\n?", re.IGNORECASE | re.MULTILINE)
_PLANNING_RE = re.compile(r"^\s*(?:SCHEDULED|DEADLINE|CLOSED):")
_DRAWER_START_RE = re.compile(r"^\s*:PROPERTIES:\s*$", re.IGNORECASE)
_CLOCK_RE = re.compile(r"^\s*CLOCK:\s*\[")
_TAG_RUN_RE = re.compile(rf"(?:{TAG_CHARS}|:)+")
# A timestamp's date and optional time (checked for validity, never rewritten).
_STAMP_RE = re.compile(r"[<\[](\d{4})-(\d{2})-(\d{2})(?: +[^\s\d<>\[\]]+)?(?: +(\d{1,2}):(\d{2}))?")


def read_org_file(
    abs_path: Path, rel_path: str, private_tags: frozenset[str] = DEFAULT_PRIVATE_TAGS
) -> ParsedFile:
    """Read the file at ``abs_path`` (recorded as ``rel_path``); see :func:`read_org_bytes`.

    Raises ``OSError`` when the file cannot be read; never raises on its content.
    """
    data = abs_path.read_bytes()
    return read_org_bytes(data, rel_path, private_tags)


def read_org_bytes(
    data: bytes, path: str, private_tags: frozenset[str] = DEFAULT_PRIVATE_TAGS, *, log_problems: bool = True
) -> ParsedFile:
    """Parse org ``data`` (the bytes of the file ``path``, relative to the roam dir).

    Never raises on any content. Returns the headings that could be read, minus the
    excluded ones (see the module docstring), in file order; the level-0 record first.
    Each problem is logged with the path unless ``log_problems`` is false (a worker
    process: its parent calls :func:`report_problems`).
    """
    problems: list[str] = []
    stem = _file_stem(path)
    try:
        text = decode_org_bytes(data, problems)
        lines = split_lines(text)
        parsed = _read_lines(lines, path, stem, Privacy.from_tags(private_tags), problems)
    except Exception as exc:  # noqa: BLE001 - the contract is to never raise
        problems.append(f"could not read the file ({type(exc).__name__}); it was skipped")
        parsed = ParsedFile(path=path, title=stem, file_id=None)
    parsed.problems = problems
    if log_problems:
        report_problems(parsed)
    return parsed


def report_problems(parsed: ParsedFile) -> None:
    """Log each of ``parsed.problems`` once, with the file's path."""
    for problem in parsed.problems:
        log.warning("%s: %s", parsed.path, problem)


def decode_org_bytes(data: bytes, problems: list[str] | None = None) -> str:
    """Decode file bytes to text: UTF-8 (BOM stripped) or UTF-16/32 with a BOM.

    Invalid bytes become U+FFFD and NUL characters become U+FFFD; each kind of damage is
    reported once in ``problems``. The result never contains lone surrogates, so it
    always encodes back to UTF-8.
    """
    problems = problems if problems is not None else []
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        codec = "utf-32"
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        codec = "utf-16"
    else:
        codec = "utf-8-sig"
    try:
        text = data.decode(codec)
    except UnicodeDecodeError:
        text = data.decode(codec, errors="replace")
        problems.append(f"invalid {codec.removesuffix('-sig').upper()} bytes were replaced")
    text = text.removeprefix("\ufeff")
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
        problems.append("NUL characters were replaced")
    return text


def split_lines(text: str) -> list[str]:
    """Split ``text`` into the lines an editor shows (see the module docstring)."""
    if "\r" in text:
        if "\n" in text:
            text = text.replace("\r\n", "\n").replace("\r", "")
        else:
            text = text.replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def link_text(raw: str) -> str:
    """Org text with links replaced by their descriptions.

    ``[[id:x][desc]]`` and ``[[https://u][desc]]`` become ``desc``; a link without a
    description becomes its target (``[[https://u]]`` -> ``https://u``), except an
    ``id:`` link, which becomes nothing (a bare UUID only adds noise to search).
    """
    return _LINK_RE.sub(_link_replacement, raw)


def id_links(raw: str) -> tuple[str, ...]:
    """The ``id:`` link targets in ``raw``, in order of first appearance."""
    targets = (m.group(1).split("::", 1)[0].strip() for m in _ID_LINK_RE.finditer(raw))
    return _dedupe(t for t in targets if t)


def split_roam_list(value: str) -> tuple[str, ...]:
    """Split a ``ROAM_ALIASES``/``ROAM_REFS`` value as org-roam does.

    Space separated; ``"double quoted"`` items may contain spaces (``\\"`` escapes a
    quote); ``[[link][desc]]`` items count as one item and yield their target.
    """
    if not value.strip():
        return ()
    items: list[str] = []
    rest: list[str] = []
    last = 0
    for m in _LINK_RE.finditer(value):
        rest.append(value[last : m.start()])
        rest.append(" ")
        items.append(m.group(1).strip())
        last = m.end()
    rest.append(value[last:])
    for m in _TOKEN_RE.finditer("".join(rest)):
        if m.group(1) is not None:
            items.append(re.sub(r"\\(.)", r"\1", m.group(1)))
        else:
            items.append(m.group(2))
    return _dedupe(i for i in items if i)


# --- parsing -------------------------------------------------------------------------


@dataclass(slots=True)
class _Frame:
    """What a heading passes on to its descendants."""

    level: int
    title: str
    olp: tuple[str, ...]
    tags: tuple[str, ...]
    node_id: str | None
    node_title: str
    date: str | None
    excluded: bool


def _read_lines(
    lines: list[str], path: str, stem: str, private: Privacy, problems: list[str]
) -> ParsedFile:
    bad_stamps = _invalid_timestamp_lines(lines)
    if bad_stamps:
        shown = ", ".join(map(str, bad_stamps[:10]))
        more = f" (+{len(bad_stamps) - 10} more)" if len(bad_stamps) > 10 else ""
        problems.append(f"invalid timestamps (kept as text) on line(s) {shown}{more}")
    unreadable: set[int] = set()  # 1-based start lines of chunks left out
    try:
        root = _load(lines, path)
    except Exception:  # noqa: BLE001 - the contract is to never raise
        try:
            root = _load(_unreadable_chunks(lines, path, problems, unreadable), path)
        except Exception:  # noqa: BLE001
            return _read_preamble_only(lines, path, stem, private, problems)
    return _build(root, lines, path, stem, private, unreadable, problems)


def _read_preamble_only(
    lines: list[str], path: str, stem: str, private: Privacy, problems: list[str]
) -> ParsedFile:
    """Last resort: the text before the first heading, if even that parses."""
    first = next((i for i, line in enumerate(lines) if HEADING_LINE_RE.match(line)), len(lines))
    problems.append("the headings could not be read; only the text before the first heading was kept")
    try:
        root = _load(lines[:first], path)
        return _build(root, lines[:first], path, stem, private, set(), problems)
    except Exception:  # noqa: BLE001
        problems.append("the text before the first heading could not be read either")
        return ParsedFile(path=path, title=stem, file_id=None)


def _build(
    root: OrgRootNode,
    lines: Sequence[str],
    path: str,
    stem: str,
    private: Privacy,
    unreadable: set[int],
    problems: list[str],
) -> ParsedFile:
    file_props, root_body, file_flags = _drawer(root, lines, problems)
    file_id = _id(file_props)
    file_title = _plain_title(" ".join(t.strip() for t in root.get_file_property_list("TITLE")))
    file_title = file_title or stem
    tags_of_file = file_tags(lines)
    if private.excludes(tags=tags_of_file, properties=file_flags) or 0 in unreadable:
        return ParsedFile(path=path, title=stem, file_id=None)

    file_date = (
        _date_in(file_props.get("CREATED", ""), _ISO_DATE_RE, _COMPACT_DATE_RE)
        or _date_in(stem, _ISO_DATE_RE, _COMPACT_DATE_RE)
        or _date_in(" ".join(root.get_file_property_list("DATE")), _ISO_DATE_RE)
    )
    headings: list[Heading] = []
    if root.end_linenumber >= 1 and not private.excludes(tags=(), properties={}, text=str(root)):
        body = root_body
        headings.append(
            _heading(
                node_id=file_id, own_id=file_id, level=0, title=file_title, olp=(),
                tags=tags_of_file, todo=None, properties=file_props, body=body,
                text=link_text(_TEXT_KEYWORD_RE.sub("", body)).strip(),
                start_line=1, end_line=root.end_linenumber, node_title=file_title,
                links=id_links(body), date=file_date,
            )
        )  # fmt: skip

    stack: list[_Frame] = []
    for node in root.env.nodes[1:]:
        level = node.level
        while stack and stack[-1].level >= level:
            stack.pop()
        parent = stack[-1] if stack else None
        props, body, flags = _drawer(node, lines, problems)
        own_id = _id(props)
        title = _plain_title(node.get_heading(format="raw"))
        tags = _dedupe([*(parent.tags if parent else tags_of_file), *sorted(t for t in node.shallow_tags if t)])
        heading_line = lines[node.linenumber - 1]
        excluded = (
            (parent is not None and parent.excluded)
            or node.linenumber in unreadable
            or private.excludes(tags=tags, properties=flags, text=str(node))
        )
        frame = _Frame(
            level=level,
            title=title,
            olp=(*parent.olp, parent.title) if parent else (),
            tags=tags,
            node_id=own_id or (parent.node_id if parent else file_id),
            node_title=title if own_id else (parent.node_title if parent else file_title),
            date=(
                _date_in(props.get("CREATED", ""), _ISO_DATE_RE, _COMPACT_DATE_RE)
                or _date_in(heading_line, _STAMP_DATE_RE)
                or (parent.date if parent else file_date)
            ),
            excluded=excluded,
        )
        stack.append(frame)
        if excluded:
            continue
        headings.append(
            _heading(
                node_id=frame.node_id, own_id=own_id, level=level, title=title, olp=frame.olp,
                tags=tags, todo=node.todo, properties=props, body=body,
                text=link_text(body).strip(), start_line=node.linenumber,
                end_line=node.end_linenumber, node_title=frame.node_title,
                links=id_links(heading_line + "\n" + body), date=frame.date,
            )
        )  # fmt: skip
    return ParsedFile(path=path, title=file_title, file_id=file_id, headings=headings)


def _drawer(
    node: OrgBaseNode, lines: Sequence[str], problems: list[str]
) -> tuple[dict[str, str], str, dict[str, str]]:
    """The node's properties, its raw body, and the properties that count for exclusion.

    orgparse takes the first line containing ``:PROPERTIES:`` anywhere in the node as a
    drawer and, when ``:END:`` is missing, swallows (drops) the rest of the body. Org only
    knows a drawer right after the heading (or its planning line), or at the top of the
    file after comments and keywords, and closed. Otherwise, as in Org, there are no
    properties and the drawer lines stay in the body. For exclusion the properties count
    wherever orgparse found them (a misplaced ``ROAM_EXCLUDE``): excluding too much is
    the safe side.
    """
    lenient = {str(k).upper(): str(v) for k, v in node.properties.items()}
    own = str(node)
    if ":PROPERTIES:" not in own:
        return lenient, node.get_body(format="raw"), lenient
    start = node.linenumber - 1
    node_lines = lines[start : node.end_linenumber]
    is_root = node.level == 0
    first = 0 if is_root else 1
    at = next(i for i in range(first, len(node_lines)) if ":PROPERTIES:" in node_lines[i])
    closed = any(":END:" in line for line in node_lines[at + 1 :])
    if is_root:
        placed = all(not ln.strip() or ln.lstrip().startswith("#") for ln in node_lines[:at])
    else:
        placed = at == 1 or (at == 2 and _PLANNING_RE.match(node_lines[1]) is not None)
    if closed and placed and _DRAWER_START_RE.match(node_lines[at]):
        return lenient, node.get_body(format="raw"), lenient
    line_no = start + at + 1
    if not closed:
        problems.append(f"unclosed property drawer at line {line_no} read as text")
    elif "ID" in lenient:
        problems.append(f"misplaced property drawer at line {line_no} (with an ID) read as text, as Org does")
    body = "\n".join(node_lines[first:])
    return {}, body, lenient


def _heading(*, properties: dict[str, str], **fields) -> Heading:
    return Heading(
        properties=properties,
        aliases=split_roam_list(properties.get("ROAM_ALIASES", "")),
        refs=split_roam_list(properties.get("ROAM_REFS", "")),
        **fields,
    )


# --- a safer orgparse ----------------------------------------------------------------


class _SafeParsing:
    """Replacements for the orgparse steps that raise or take super-linear time.

    orgparse parses every timestamp of every line (an invalid date raises ``ValueError``
    and aborts the whole file; a line with thousands of timestamps overflows the stack;
    its timestamp regex is cubic on an unclosed ``<2024-01-01 ...`` line with many
    times), converts ``Effort`` values (raising on bad ones), and splits heading tags
    with a regex that is quadratic in the heading length (cubic for ``:a:a:a...``).
    The reader uses none of the parsed dates, so these steps are replaced by linear ones
    that keep the text as written.
    """

    def _iparse_timestamps(self, ilines: Iterator[str]) -> Iterator[str]:
        self._timestamps = []
        return ilines

    def _parse_comments(self) -> None:
        # orgparse's, with a substring test first: it ran a regex on every line of every
        # node (a seventh of parsing), and only a line holding "#+" can match it.
        special: dict[str, list[str]] = {}
        for line in self._lines:
            if "#+" in line and (parsed := parse_comment(line)):
                key, values = parsed
                special.setdefault(key.upper(), []).extend(values)
        self._special_comments = special
        for key in ("TODO", "SEQ_TODO", "TYP_TODO"):
            for value in special.get(key, []):
                self.env.add_todo_keys(*parse_seq_todo(value))

    def _iparse_properties(self, ilines: Iterator[str]) -> Iterator[str]:
        # orgparse's rule (the first line containing :PROPERTIES: up to one containing
        # :END:), without its value conversion; _drawer() applies Org's placement rules.
        self._properties = {}
        for line in ilines:
            if ":PROPERTIES:" in line:
                break
            yield line
        else:
            return
        for line in ilines:
            if ":END:" in line:
                break
            prop = _property(line)
            if prop is not None:
                self._properties[prop[0]] = prop[1]
        yield from ilines


class _Root(_SafeParsing, OrgRootNode):
    pass


# Shared stand-ins for the planning dates of every heading (never read by the reader).
_NO_DATES = (OrgDateScheduled(None), OrgDateDeadline(None), OrgDateClosed(None))


class _Node(_SafeParsing, OrgNode):
    def __init__(self, *args, **kwargs) -> None:
        # OrgNode's, without building three empty date objects per heading (6% of parsing).
        OrgBaseNode.__init__(self, *args, **kwargs)
        self._heading = self._level = self._tags = self._todo = self._priority = None
        self._scheduled, self._deadline, self._closed = _NO_DATES
        self._clocklist = []
        self._body_lines = []
        self._repeated_tasks = []

    def _parse_heading(self) -> None:
        line = self._lines[0]
        self._level = len(line) - len(line.lstrip("*"))
        heading, self._tags = split_heading_tags(line[self._level :].strip())
        heading, self._todo = parse_heading_todos(heading, self.env.all_todo_keys)
        self._heading, self._priority = parse_heading_priority(heading)

    def _iparse_sdc(self, ilines: Iterator[str]) -> Iterator[str]:
        for line in ilines:
            if not _PLANNING_RE.match(line):
                yield line
            break
        yield from ilines

    def _iparse_clock(self, ilines: Iterator[str]) -> Iterator[str]:
        return (line for line in ilines if not _CLOCK_RE.match(line))

    def _iparse_repeated_tasks(self, ilines: Iterator[str]) -> Iterator[str]:
        self._repeated_tasks = []
        return ilines


class _Env(OrgEnv):
    def from_chunks(self, chunks):
        yield _Root.from_chunk(self, next(chunks))
        for chunk in chunks:
            yield _Node.from_chunk(self, chunk)


def _load(lines: Sequence[str], path: str) -> OrgRootNode:
    return orgparse.loadi(lines, filename=path, env=_Env(filename=path))


def split_heading_tags(heading: str) -> tuple[str, list[str]]:
    """orgparse's ``parse_heading_tags`` in linear time, with Org's tag characters
    (orgparse's lack ``#`` and ``%``)."""
    end = len(heading.rstrip())
    if end < 3 or heading[end - 1] != ":":
        return heading, []
    run = _TAG_RUN_RE.match(heading[:end][::-1])
    start = end - run.end()
    colon = heading.find(":", start, end - 2)
    if colon < 0:
        return heading, []
    return heading[:colon].rstrip(), heading[colon + 1 : end - 1].split(":")


def _property(line: str) -> tuple[str, str] | None:
    """orgparse's property line rule (``^\\s*:(.*?):\\s*(.*?)\\s*$``), linear, no conversion."""
    stripped = line.lstrip()
    if not stripped.startswith(":"):
        return None
    close = stripped.find(":", 1)
    if close < 0:
        return None
    return stripped[1:close], stripped[close + 1 :].strip()


def _invalid_timestamp_lines(lines: Sequence[str]) -> list[int]:
    """1-based numbers of lines with a timestamp that is not a real date or time."""
    bad: list[int] = []
    for number, line in enumerate(lines, 1):
        if "-" not in line:
            continue
        for m in _STAMP_RE.finditer(line):
            try:
                datetime.date(int(m[1]), int(m[2]), int(m[3]))
            except ValueError:
                bad.append(number)
                break
            if m[4] is not None and (int(m[4]) > 24 or int(m[5]) > 59):
                bad.append(number)
                break
    return bad


def _unreadable_chunks(lines: list[str], path: str, problems: list[str], unreadable: set[int]) -> list[str]:
    """A copy of ``lines`` (same length) without the chunks that fail to parse alone.

    Only reached when orgparse still raises. A chunk is a heading with its own text, or
    the text before the first heading. The 1-based start lines of blanked chunks go into
    ``unreadable`` (0 for the text before the first heading) so the caller leaves them
    out with their subtree (their tags and drawer, which may exclude them, are unknown).
    """
    repaired = list(lines)
    for start, end in _chunk_ranges(lines):
        try:
            _load(lines[start:end], path)
            continue
        except Exception:  # noqa: BLE001
            pass
        first_line = start + 1 if HEADING_LINE_RE.match(lines[start]) else 0
        unreadable.add(first_line)
        blank = [""] * (end - start)
        if first_line:
            blank[0] = "*" * (len(lines[start]) - len(lines[start].lstrip("*"))) + " "
        repaired[start:end] = blank
        where = f"the heading at line {first_line} and its subtree" if first_line else "the whole file"
        problems.append(f"unreadable text; {where} left out")
    return repaired


def _chunk_ranges(lines: Sequence[str]) -> Iterable[tuple[int, int]]:
    """0-based [start, end) of each orgparse chunk: the preamble, then each heading."""
    start = 0
    for i, line in enumerate(lines):
        if HEADING_LINE_RE.match(line):
            if i > start:
                yield start, i
            start = i
    if len(lines) > start:
        yield start, len(lines)


# --- small helpers -------------------------------------------------------------------


def _id(props: dict[str, str]) -> str | None:
    return props.get("ID", "").strip() or None


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _file_stem(path: str) -> str:
    name = PurePosixPath(path.replace("\\", "/")).name
    return name[: -len(".org")] if name.lower().endswith(".org") and len(name) > 4 else name


def _date_in(text: str, *patterns: re.Pattern[str]) -> str | None:
    """The first valid calendar date matched by the patterns (tried in order), ISO."""
    for pattern in patterns:
        for m in pattern.finditer(text):
            try:
                return datetime.date(int(m[1]), int(m[2]), int(m[3])).isoformat()
            except ValueError:
                continue
    return None


def _plain_title(raw: str) -> str:
    """A heading as orgparse's ``.heading`` shows it: each link becomes its description,
    or its target when it has none (``[[id:x]]`` -> ``id:x``)."""
    return _LINK_RE.sub(lambda m: m.group(2) or m.group(1), raw).strip()


def _link_replacement(m: re.Match[str]) -> str:
    if m.group(2):
        return m.group(2)
    target = m.group(1)
    return "" if target.startswith("id:") else target
