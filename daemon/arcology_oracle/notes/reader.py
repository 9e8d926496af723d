"""Read one org file into :class:`~arcology_oracle.notes.records.Heading` records.

Pure: bytes in, records out; no SQLite, no network. The one promise that matters most is
that :func:`read_org_bytes` never raises, whatever the bytes: a part that cannot be read is
left out, and the reason is appended to ``ParsedFile.problems`` and logged once (with the
path and the reason, never the note's text).

Decisions worth knowing (see the tests for each):

* Lines are the lines Emacs shows (its end-of-line detection, checked with Emacs 28 on
  mixed files): a file with any LF has LF lines (CRLF ends a line too), a file without
  LF but with CR has CR lines (``mac``). A CR that does not end a line there (Emacs shows
  ``^M``) is dropped: the reader then sees a tag or drawer line that Org, reading the
  ``^M``, does not, which only ever makes more private. A final newline does not start a
  new line, so an empty file has 0 lines and yields **no headings at all**. (Captures
  write the file's own line ending, so they never mix them:
  :func:`arcology_oracle.notes.line_endings.file_eol`.)
* A level-0 record exists when the file has at least one line before its first heading.
  A file that starts with a heading has no level-0 record (it cannot be a file node:
  org-roam needs the file's ``:ID:`` drawer before the first heading).
* Property keys are upper-cased (Org property names are case-insensitive); values are
  strings.
* Exclusions (privacy) are decided by :class:`~arcology_oracle.notes.privacy.Privacy` (tags,
  inherited tags and ``#+filetags`` wherever they stand, ``ROAM_EXCLUDE`` but for
  ``nil``, PGP blocks): an excluded heading is left out together with its whole
  subtree, as is a heading whose text could not be parsed. An excluded file (file-level
  ``ROAM_EXCLUDE`` or an excluding file tag) has no headings, ``file_id`` None, the
  file name as title, no problems and ``private`` set: the index keeps nothing of it. A PGP block before the first heading drops only the level-0
  record. Heading tags are read with Org's tag characters ``[[:alnum:]_@#%]``.
* Timestamps are never parsed as dates, so invalid ones (``<2025-02-30 Sun>``, hour 25)
  cannot spoil a file: the text stays as written, and the lines holding them are reported
  once as a problem. (orgparse itself rejects the whole file on one invalid date and has
  super-linear regexes; :mod:`.orgparse_safe` replaces those steps.) Should orgparse still
  raise, each heading whose text fails to parse alone is left out with its subtree.
* Planning lines (SCHEDULED/DEADLINE/CLOSED right after the heading) and ``CLOCK:`` lines
  are not part of the body; everything else is, as written.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from orgparse.node import OrgRootNode

from .org_syntax import (
    COMPACT_DATE_RE,
    DAILY_NAME_RE,
    HEADING_LINE_RE,
    ISO_DATE_RE,
    date_in,
    decode_org_bytes,
    dedupe,
    first_date,
    heading_date,
    id_links,
    invalid_timestamp_lines,
    link_text,
    plain_title,
    split_lines,
    split_roam_list,
)
from .chats import response_lines
from .codings import private_elsewhere, shown_text
from .conversations import is_oracle_answer, without_sources_lists
from .drawers import read_drawer
from .ellama import read_session
from .orgparse_safe import load_org, load_org_by_chunks
from .privacy import DEFAULT_PRIVATE_TAGS, Privacy, file_tags
from .records import Heading, ParsedFile
from .setup_files import read_setup_files, split_private_names

log = logging.getLogger(__name__)

# What the reader reads the same way: raised when a file may now be read differently (the
# index records it with the files read; a change reads every file again, see
# Indexer.reconcile). 2: #+SETUPFILE's file tags; tags in every script (marks are tag
# characters). 3: id links in property values. 4: a private tag in a note that is not
# UTF-8 (its non-ASCII letters read as U+FFFD). 5: what is private in any text Emacs may
# read from a note that is not UTF-8 (Shift-JIS, EUC-JP...: notes/codings.py). 6: and from
# a 7-bit one in ISO-2022-JP (its escape sequences). 7: a #+SETUPFILE given by URL makes
# the note private (notes/setup_files.py). 8: a planning line or property drawer set off by
# other than spaces and tabs (U+00A0, U+2028, a form feed) is text, as in Org (notes/drawers.py).
# 9: a note that is not UTF-8 read in the coding it names, else Latin-1, as Emacs shows it.
READER_VERSION = 9

_TEXT_KEYWORD_RE = re.compile(r"^[ \t]*#\+(?:title|filetags):.*$\n?", re.IGNORECASE | re.MULTILINE)


def heading_text(body: str, level: int) -> str:
    """A heading's ``text`` (:class:`~.records.Heading`) from its ``body``: links as their
    descriptions, and a file record's (``level`` 0) ``#+title`` and ``#+filetags`` lines
    left out."""
    return link_text(_TEXT_KEYWORD_RE.sub("", body) if level == 0 else body).strip()


def read_org_file(
    abs_path: Path, rel_path: str, private_tags: frozenset[str] = DEFAULT_PRIVATE_TAGS
) -> ParsedFile:
    """Read the file at ``abs_path`` (recorded as ``rel_path``); see :func:`read_org_bytes`.

    Raises ``OSError`` when the file cannot be read; never raises on its content.
    """
    data = abs_path.read_bytes()
    return read_org_bytes(data, rel_path, private_tags)


def read_org_bytes(
    data: bytes, path: str, private_tags: frozenset[str] = DEFAULT_PRIVATE_TAGS, *, log_problems: bool = True,
    root: Path | None = None,
) -> ParsedFile:
    """Parse org ``data`` (the bytes of the file ``path``, relative to the roam dir).

    Never raises on any content. Returns the headings that could be read, minus the
    excluded ones (see the module docstring), in file order; the level-0 record first.
    Each problem is logged with the path unless ``log_problems`` is false (a worker
    process: its parent calls :func:`report_problems`). ``root``: the roam directory,
    for the setup files ``#+SETUPFILE`` names relative to the file (:mod:`.setup_files`),
    whose file tags count as the file's own, and for an ellama session's ``.session.el``
    beside the file (:mod:`.ellama`: ``ParsedFile.ellama``, the companion recorded with the
    setup files); for a text of no file (``path`` empty: a client's unsaved text), setup
    files relative to ``root`` itself, where a new note is made, and no session.
    Without ``root`` neither is read.
    """
    problems: list[str] = []
    stem = _file_stem(path)
    try:
        text = decode_org_bytes(data, problems)
        lines = split_lines(text)
        setup_dir = None if root is None else (root / path).parent if path else root
        privacy = Privacy.from_tags(private_tags)
        # No U+FFFD read: the bytes are UTF-8 (or UTF-16/32 with a BOM). One read (a NUL, a
        # U+FFFD written in the note) leaves it to be told from the bytes: a UTF-8 note
        # holding one is no note to read again in every coding Emacs may guess.
        elsewhere = private_elsewhere(
            data, len(lines), lambda alt, found: _read_lines(alt, path, stem, privacy, [], setup_dir, found_private=found),
            utf8=True if "\ufffd" not in text else None,
        )
        if isinstance(elsewhere, ParsedFile):
            problems.clear()  # nothing is told of a private file
            parsed = elsewhere
        else:
            parsed = _read_lines(lines, path, stem, privacy, problems, setup_dir, also_private=elsewhere)
            if "\ufffd" in text and (shown := shown_text(data)):
                parsed = _as_shown(parsed, shown, lines, stem, privacy, problems, setup_dir, elsewhere)
        if parsed.setup_files and not parsed.private and setup_dir is not None:  # the names in private parts apart
            spans = [(h.start_line, h.end_line) for h in parsed.headings]
            parsed.setup_files, parsed.private_setup = split_private_names(lines, spans, parsed.setup_files, setup_dir)
        if parsed.headings:
            parsed.responses = response_lines(lines, parsed.headings[0].properties)
        if parsed.headings and path and setup_dir is not None:  # its .session.el is beside it
            parsed.ellama, seen = read_session(parsed.headings, setup_dir, path)
            parsed.setup_files += seen
    except Exception as exc:  # noqa: BLE001 - the contract is to never raise
        problems.append(f"could not read the file ({type(exc).__name__}); it was skipped")
        parsed = ParsedFile(path=path, title=stem, file_id=None)
    parsed.problems = problems
    if log_problems:
        report_problems(parsed)
    return parsed


def _as_shown(
    parsed: ParsedFile, shown: tuple[str, str], lines: list[str], stem: str, privacy: Privacy, problems: list[str],
    setup_dir: Path | None, elsewhere: frozenset[int],
) -> ParsedFile:
    """``parsed``, the reading of a note that is not UTF-8 (each byte it could not read a
    U+FFFD: "cr\ufffdme" in snippets and answers), with each heading as Emacs shows it
    (``shown``: the text and its coding, :func:`~.codings.shown_text`). What is left out
    stays ``parsed``'s (its U+FFFD rule, notes/privacy.py, may keep out a tag no coding
    reads): a heading is taken from the text shown only where ``parsed`` has one of its
    level on the same lines; the others, and a text of other lines, keep the U+FFFD."""
    text, coding = shown
    shown_lines = split_lines(text)
    if parsed.private or len(shown_lines) != len(lines):
        return parsed
    other = _read_lines(shown_lines, parsed.path, stem, privacy, [], setup_dir, also_private=elsewhere)
    if other.private:  # (private_elsewhere read this coding too: kept out as it would have)
        problems.clear()
        return other
    same = {(h.level, h.start_line, h.end_line): h for h in other.headings}
    parsed.headings = [same.get((h.level, h.start_line, h.end_line), h) for h in parsed.headings]
    if parsed.headings and parsed.headings[0].level == 0 and parsed.headings[0] is same.get((0, 1, parsed.headings[0].end_line)):
        parsed.title = other.title
    problems[:] = [f"not UTF-8: read in {coding}, as Emacs shows it" if p.startswith("invalid UTF-8") else p
                   for p in problems]  # fmt: skip
    return parsed


def report_problems(parsed: ParsedFile) -> None:
    """Log each of ``parsed.problems`` once, with the file's path."""
    for problem in parsed.problems:
        log.warning("%s: %s", parsed.path, problem)


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
    date_source: str | None
    excluded: bool  # left out with its subtree: kept out by the privacy rule, or unreadable
    private: bool  # kept out by the privacy rule (its own or an ancestor's)


def _read_lines(
    lines: list[str], path: str, stem: str, private: Privacy, problems: list[str], setup_dir: Path | None,
    *, also_private: frozenset[int] = frozenset(), found_private: list[int] | None = None,
) -> ParsedFile:
    """``also_private``: the lines of headings private whatever they hold; the line of each
    heading found private is appended to ``found_private``."""
    # The file's tags (its own and its setup files'), wherever they stand: when they make
    # it private, nothing more of it is read (the indexer reads a private file again at
    # each start, nothing of it being stored) and nothing is told of it.
    elsewhere: list[str] = []  # the setup files' tags as Emacs may read them in other codings
    setup_tags, setup_files = (
        read_setup_files(lines, setup_dir, elsewhere=elsewhere) if setup_dir is not None else ((), ())
    )
    tags_of_file = tuple(dict.fromkeys((*file_tags(lines), *setup_tags)))
    if private.tags_exclude((*tags_of_file, *elsewhere)):
        problems.clear()
        return ParsedFile(path=path, title=stem, file_id=None, setup_files=setup_files, private=True)
    bad_stamps = invalid_timestamp_lines(lines)
    if bad_stamps:
        shown = ", ".join(map(str, bad_stamps[:10]))
        more = f" (+{len(bad_stamps) - 10} more)" if len(bad_stamps) > 10 else ""
        problems.append(f"invalid timestamps (kept as text) on line(s) {shown}{more}")
    unreadable: set[int] = set()  # 1-based start lines of chunks left out
    file_level = (tags_of_file, setup_files)
    try:
        root = load_org(lines, path)
    except Exception:  # noqa: BLE001 - the contract is to never raise
        try:
            root = load_org_by_chunks(lines, path, problems, unreadable)
        except Exception:  # noqa: BLE001
            return _read_preamble_only(lines, path, stem, private, problems, file_level)
    return _build(root, lines, path, stem, private, unreadable, problems, file_level, also_private, found_private)


def _read_preamble_only(
    lines: list[str], path: str, stem: str, private: Privacy, problems: list[str], file_level: tuple
) -> ParsedFile:
    """Last resort: the text before the first heading, if even that parses."""
    first = next((i for i, line in enumerate(lines) if HEADING_LINE_RE.match(line)), len(lines))
    problems.append("the headings could not be read; only the text before the first heading was kept")
    try:
        root = load_org(lines[:first], path)
        return _build(root, lines[:first], path, stem, private, set(), problems, file_level)
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
    file_level: tuple[tuple[str, ...], tuple],
    also_private: frozenset[int] = frozenset(),
    found_private: list[int] | None = None,
) -> ParsedFile:
    """``file_level``: the file's tags (its setup files' too) and the setup files it names;
    ``also_private`` and ``found_private`` as :func:`_read_lines` says."""
    file_props, root_body, file_flags = read_drawer(root, lines, problems)
    file_id = _id(file_props)
    file_title = plain_title(" ".join(t.strip() for t in root.get_file_property_list("TITLE")))
    file_title = file_title or stem
    tags_of_file, setup_files = file_level
    kept_out = private.excludes(tags=tags_of_file, properties=file_flags)
    if kept_out or 0 in unreadable:
        if kept_out:
            problems.clear()  # nothing is told of a private file
        return ParsedFile(path=path, title=stem, file_id=None, setup_files=setup_files, private=kept_out)

    daily = date_in(stem, DAILY_NAME_RE)
    file_date, file_date_source = first_date(
        (daily, "daily"),
        (date_in(file_props.get("CREATED", ""), ISO_DATE_RE, COMPACT_DATE_RE), "created"),
        (date_in(stem, ISO_DATE_RE, COMPACT_DATE_RE), "filename"),
        (date_in(" ".join(root.get_file_property_list("DATE")), ISO_DATE_RE), "file-date"),
    )
    headings: list[Heading] = []
    kept_out_ids: list[str] = []  # the IDs of the nodes the privacy rule keeps out
    if root.end_linenumber >= 1 and private.excludes(tags=(), properties={}, text=str(root)):
        kept_out_ids.extend(filter(None, [file_id]))
    elif root.end_linenumber >= 1:
        body = root_body
        headings.append(
            _heading(
                node_id=file_id, own_id=file_id, level=0, title=file_title, olp=(),
                tags=tags_of_file, todo=None, properties=file_props, body=body,
                text=heading_text(body, 0),
                start_line=1, end_line=root.end_linenumber, node_title=file_title,
                links=_user_links(body, file_props), date=file_date, date_source=file_date_source,
            )
        )  # fmt: skip

    stack: list[_Frame] = []
    for node in root.env.nodes[1:]:
        level = node.level
        while stack and stack[-1].level >= level:
            stack.pop()
        parent = stack[-1] if stack else None
        props, body, flags = read_drawer(node, lines, problems)
        own_id = _id(props)
        title = plain_title(node.get_heading(format="raw"))
        tags = dedupe([*(parent.tags if parent else tags_of_file), *sorted(t for t in node.shallow_tags if t)])
        heading_line = lines[node.linenumber - 1]
        kept_out = (
            (parent is not None and parent.private)
            or node.linenumber in also_private
            or private.excludes(tags=tags, properties=flags, text=str(node))
        )
        if kept_out and found_private is not None:
            found_private.append(node.linenumber)
        excluded = kept_out or (parent is not None and parent.excluded) or node.linenumber in unreadable
        if kept_out and (kept_out_id := own_id or _id(flags)):  # a misplaced drawer's too
            kept_out_ids.append(kept_out_id)
        date, date_source = heading_date(daily, props, heading_line, lines, node.linenumber, body)
        if date is None:
            date, date_source = (parent.date, parent.date_source) if parent else (file_date, file_date_source)
        frame = _Frame(
            level=level,
            title=title,
            olp=(*parent.olp, parent.title) if parent else (),
            tags=tags,
            node_id=own_id or (parent.node_id if parent else file_id),
            node_title=title if own_id else (parent.node_title if parent else file_title),
            date=date,
            date_source=date_source,
            excluded=excluded,
            private=kept_out,
        )
        stack.append(frame)
        if excluded:
            continue
        headings.append(
            _heading(
                node_id=frame.node_id, own_id=own_id, level=level, title=title, olp=frame.olp,
                tags=tags, todo=node.todo, properties=props, body=body,
                text=heading_text(body, level), start_line=node.linenumber,
                end_line=node.end_linenumber, node_title=frame.node_title,
                links=_user_links(heading_line + "\n" + body, props), date=frame.date, date_source=frame.date_source,
            )
        )  # fmt: skip
    return ParsedFile(path=path, title=file_title, file_id=file_id, headings=headings, setup_files=setup_files,
                      kept_out_ids=tuple(kept_out_ids))  # fmt: skip


def _user_links(raw: str, properties: dict[str, str]) -> tuple[str, ...]:
    """The ``id:`` links of a heading that are the user's, in its text and its property
    values (as org-roam finds them: a capture's ``:SOURCE:`` links it to the heading it
    came from): none in the oracle's own answers (``:ROLE: oracle``), none in the
    ``Sources:`` lists the daemon writes. They are its citations and must not count in
    the link graph (suggestions, similarity)."""
    if is_oracle_answer(properties):
        return ()
    return id_links(without_sources_lists(raw) + "\n" + "\n".join(properties.values()))


def _heading(*, properties: dict[str, str], **fields) -> Heading:
    return Heading(
        properties=properties,
        aliases=split_roam_list(properties.get("ROAM_ALIASES", "")),
        refs=split_roam_list(properties.get("ROAM_REFS", "")),
        **fields,
    )


def _id(props: dict[str, str]) -> str | None:
    return props.get("ID", "").strip() or None


def _file_stem(path: str) -> str:
    name = PurePosixPath(path.replace("\\", "/")).name
    return name[: -len(".org")] if name.lower().endswith(".org") and len(name) > 4 else name
