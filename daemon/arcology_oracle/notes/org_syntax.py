"""Org syntax the reader needs around orgparse: decoding bytes, splitting lines, links and
their text, org-roam's quoted lists, heading tags, property lines, dates and timestamps.

Pure functions of text, shared by :mod:`.reader` and :mod:`.orgparse_safe` (and the
cleaning of client text); none of them reads a file.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Mapping, Sequence

from .privacy import is_tag_char

# orgparse's own test for a heading line (node.RE_NODE_HEADER): stars then a space.
HEADING_LINE_RE = re.compile(r"^\*+ ")
_LINK_RE = re.compile(r"\[\[([^\[\]]+)\](?:\[([^\[\]]*)\])?\]")
_ID_LINK_RE = re.compile(r"\[\[id:([^\[\]]+)\](?:\[[^\[\]]*\])?\]")
KEYWORD_LINE_RE = re.compile(r"^[ \t]*#\+[^\s:]+:.*$", re.MULTILINE)
_NOTE_LINKS = ("id:", "roam:")
_TOKEN_RE = re.compile(r'"((?:[^"\\]|\\.)*)"|(\S+)')
ISO_DATE_RE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
COMPACT_DATE_RE = re.compile(r"(?<!\d)(\d{4})(\d{2})(\d{2})(?:T?\d{4,6})?(?!\d)")
STAMP_DATE_RE = re.compile(r"[<\[](\d{4})-(\d{2})-(\d{2})")
CLOSED_DATE_RE = re.compile(r"CLOSED:\s*\[(\d{4})-(\d{2})-(\d{2})")
# A daily note's file name: the date alone (org-roam-dailies' default).
DAILY_NAME_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
# Set off by spaces and tabs only, as Org's regexps have it (``[ \t]``; a no-break space,
# U+2028 or a form feed before them makes the line text): notes/drawers.py.
PLANNING_RE = re.compile(r"^[ \t]*(?:SCHEDULED|DEADLINE|CLOSED):")
# Drawers (org-drawer-regexp): a line that is only ``:NAME:``, up to a line ``:END:``.
PROPERTIES_START_RE = re.compile(r"^[ \t]*:PROPERTIES:[ \t]*$", re.IGNORECASE | re.ASCII)
DRAWER_START_RE = re.compile(r"^[ \t]*:([\w-]+):[ \t]*$")
DRAWER_END_RE = re.compile(r"^[ \t]*:END:[ \t]*$", re.IGNORECASE | re.ASCII)
# Drawer lines fold ASCII letters only, as Org does (Python's Unicode IGNORECASE would
# also take ``ı`` for ``i`` and ``ſ`` for ``s``). orgparse's drawer start (a line *containing* ``:PROPERTIES:``,
# ended by a line that is only ``:END:``), in any case of ASCII letters as Org matches them (``case-fold-search``:
# ``:properties:``/``:Properties:`` ... ``:end:``, checked with Org 9.5.5 and org-roam 2.2.1,
# both read such a drawer's ID and ROAM_EXCLUDE); Unicode look-alikes (``ı``, ``ſ``) are
# not folded, as in Emacs.
PROPERTIES_IN_RE = re.compile(r":PROPERTIES:", re.IGNORECASE | re.ASCII)
CLOCK_RE = re.compile(r"^[ \t]*CLOCK:[ \t]*\[")

# A timestamp's date and optional time (checked for validity, never rewritten).
TIMESTAMP_RE = re.compile(r"[<\[](\d{4})-(\d{2})-(\d{2})(?: +[^\s\d<>\[\]]+)?(?: +(\d{1,2}):(\d{2}))?")


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


def without_note_links(raw: str) -> str:
    """Org text with each link to a note (``id:``, and org-roam's ``roam:`` by title)
    taken out, description and all, the other links as their descriptions (a bare one as
    nothing), and no ``#+KEYWORD:`` line (a file's title and tags): what names a note
    without linking it (:mod:`~arcology_oracle.answers.mentions`)."""
    text = KEYWORD_LINE_RE.sub(" ", raw)
    return _LINK_RE.sub(lambda m: " " if m.group(1).startswith(_NOTE_LINKS) else f" {m.group(2) or ''} ", text)


def id_links(raw: str) -> tuple[str, ...]:
    """The ``id:`` link targets in ``raw``, in order of first appearance."""
    targets = (m.group(1).split("::", 1)[0].strip() for m in _ID_LINK_RE.finditer(raw))
    return dedupe(t for t in targets if t)


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
    return dedupe(i for i in items if i)


def split_heading_tags(heading: str) -> tuple[str, list[str]]:
    """orgparse's ``parse_heading_tags`` in linear time, with Org's tag characters
    (:func:`~.privacy.is_tag_char`; orgparse's lack ``#`` and ``%``), and U+FFFD: a
    byte of a note that is not UTF-8, a letter as Emacs reads it (``:privé:`` in Latin-1)."""
    end = len(heading.rstrip())
    if end < 3 or heading[end - 1] != ":":
        return heading, []
    start = end
    while start > 0 and (heading[start - 1] in ":\ufffd" or is_tag_char(heading[start - 1])):
        start -= 1
    colon = heading.find(":", start, end - 2)
    if colon < 0:
        return heading, []
    return heading[:colon].rstrip(), heading[colon + 1 : end - 1].split(":")


def property_line(line: str) -> tuple[str, str] | None:
    """orgparse's property line rule (``^\\s*:(.*?):\\s*(.*?)\\s*$``), linear, no conversion."""
    stripped = line.lstrip()
    if not stripped.startswith(":"):
        return None
    close = stripped.find(":", 1)
    if close < 0:
        return None
    return stripped[1:close], stripped[close + 1 :].strip()


def invalid_timestamp_lines(lines: Sequence[str]) -> list[int]:
    """1-based numbers of lines with a timestamp that is not a real date or time."""
    bad: list[int] = []
    for number, line in enumerate(lines, 1):
        if "-" not in line:
            continue
        for m in TIMESTAMP_RE.finditer(line):
            try:
                datetime.date(int(m[1]), int(m[2]), int(m[3]))
            except ValueError:
                bad.append(number)
                break
            if m[4] is not None and (int(m[4]) > 24 or int(m[5]) > 59):
                bad.append(number)
                break
    return bad


def dedupe(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def date_in(text: str, *patterns: re.Pattern[str]) -> str | None:
    """The first valid calendar date matched by the patterns (tried in order), ISO."""
    for pattern in patterns:
        for m in pattern.finditer(text):
            try:
                return datetime.date(int(m[1]), int(m[2]), int(m[3])).isoformat()
            except ValueError:
                continue
    return None


def heading_date(
    daily: str | None, props: Mapping[str, str], heading_line: str, lines: Sequence[str], number: int, body: str
) -> tuple[str | None, str | None]:
    """A heading's own ``(date, source)``, in this order: a daily note's date (what is
    written there happened that day), ``:CREATED:``, a timestamp in the heading line, the
    planning line's ``CLOSED:`` (line ``number``, 0-based: orgparse keeps it out of the
    body), the first timestamp of the body; else ``(None, None)`` (inherited). Tried
    lazily: this runs for every heading."""
    if daily:
        return daily, "daily"
    planning = lines[number] if number < len(lines) else ""
    for present, text, patterns, source in (
        ("CREATED" in props, props.get("CREATED", ""), (ISO_DATE_RE, COMPACT_DATE_RE), "created"),
        ("<" in heading_line or "[" in heading_line, heading_line, (STAMP_DATE_RE,), "timestamp"),
        ("CLOSED:" in planning, planning, (CLOSED_DATE_RE,), "closed"),
        ("<" in body or "[" in body, body, (STAMP_DATE_RE,), "timestamp"),
    ):
        if present and (day := date_in(text, *patterns)):
            return day, source
    return None, None


def first_date(*candidates: tuple[str | None, str | None]) -> tuple[str | None, str | None]:
    """The first ``(date, source)`` whose date is known, else ``(None, None)``."""
    return next(((d, src) for d, src in candidates if d), (None, None))


def plain_title(raw: str) -> str:
    """A heading as orgparse's ``.heading`` shows it: each link becomes its description,
    or its target when it has none (``[[id:x]]`` -> ``id:x``)."""
    return _LINK_RE.sub(lambda m: m.group(2) or m.group(1), raw).strip()


def org_link(node_id: str, title: str) -> str:
    """``[[id:NODE][Title]]``, brackets in the title made harmless as Org does."""
    safe = title.replace("[", "{").replace("]", "}")
    return f"[[id:{node_id}][{safe}]]"


def _link_replacement(m: re.Match[str]) -> str:
    if m.group(2):
        return m.group(2)
    target = m.group(1)
    return "" if target.startswith("id:") else target
