"""A safer orgparse: node classes that never raise on a broken note and skip the parts
of orgparse that are slow or that the reader does not use (timestamps in bodies, clocks,
repeated tasks); :func:`load_org` parses lines with them.

orgparse's internals are subclassed here and nowhere else (see the version cap in
pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

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

from .org_syntax import CLOCK_RE, DRAWER_END_RE, HEADING_LINE_RE, PLANNING_RE, PROPERTIES_IN_RE, property_line, split_heading_tags


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
        # orgparse's start (the first line containing :PROPERTIES:), in any letter case as
        # in Org (orgparse's own is case-sensitive), without its value conversion;
        # _drawer() applies Org's placement rules. The drawer ends, as in Org, at a line
        # that is only :END: (orgparse's, at any line containing it, ended it inside
        # ":NOTE: see :END:" and lost the ROAM_EXCLUDE below it).
        self._properties = {}
        for line in ilines:
            if ":" in line and PROPERTIES_IN_RE.search(line):
                break
            yield line
        else:
            return
        lines = []
        for line in ilines:
            if DRAWER_END_RE.match(line):
                break
            prop = property_line(line)
            if prop is not None:
                lines.append(prop)
        self._properties = entry_values(lines)
        yield from ilines


def entry_values(lines: Sequence[tuple[str, str]]) -> dict[str, str]:
    """A drawer's ``(key, value)`` lines read as Org's ``org-entry-get`` reads them
    (checked with Emacs 28.2, Org 9.5): keys in any letter case are one key, named as
    first written; the first plain ``KEY`` line gives its value, wherever it stands,
    and every ``KEY+`` line adds a word after it; a plain value ``nil`` adds nothing to
    the words (``nil`` + ``t`` is ``t``). So ``ROAM_EXCLUDE: t`` then ``ROAM_EXCLUDE:
    nil`` is ``t``, and ``ROAM_EXCLUDE+: t`` alone is ``t``."""
    names: dict[str, str] = {}
    plain: dict[str, str] = {}
    added: dict[str, list[str]] = {}
    for key, value in lines:
        adds = key.endswith("+") and len(key) > 1
        name = key[:-1] if adds else key
        upper = name.upper()
        names.setdefault(upper, name)
        if adds:
            added.setdefault(upper, []).append(value)
        else:
            plain.setdefault(upper, value)
    out = {}
    for upper, name in names.items():
        base = plain.get(upper)
        if upper not in added:
            out[name] = base
        else:
            out[name] = " ".join(([base] if base is not None and base != "nil" else []) + added[upper])
    return out


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
            if not PLANNING_RE.match(line):
                yield line
            break
        yield from ilines

    def _iparse_clock(self, ilines: Iterator[str]) -> Iterator[str]:
        return (line for line in ilines if not CLOCK_RE.match(line))

    def _iparse_repeated_tasks(self, ilines: Iterator[str]) -> Iterator[str]:
        self._repeated_tasks = []
        return ilines


class _Env(OrgEnv):
    def from_chunks(self, chunks):
        yield _Root.from_chunk(self, next(chunks))
        for chunk in chunks:
            yield _Node.from_chunk(self, chunk)


def load_org(lines: Sequence[str], path: str) -> OrgRootNode:
    return orgparse.loadi(lines, filename=path, env=_Env(filename=path))


def load_org_by_chunks(lines: list[str], path: str, problems: list[str], unreadable: set[int]) -> OrgRootNode:
    """:func:`load_org` of a copy of ``lines`` (same length) without the chunks that fail
    to parse alone; raises as :func:`load_org` when even that copy fails.

    Only for lines that :func:`load_org` still raises on. A chunk is a heading with its
    own text, or the text before the first heading. The 1-based start lines of blanked
    chunks go into ``unreadable`` (0 for the text before the first heading) so the caller
    leaves them out with their subtree (their tags and drawer, which may exclude them, are
    unknown); each is told in ``problems``.
    """
    repaired = list(lines)
    for start, end in _chunk_ranges(lines):
        try:
            load_org(lines[start:end], path)
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
    return load_org(repaired, path)


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
