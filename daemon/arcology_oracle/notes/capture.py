"""Pure org edits for memory: the bytes a capture appends, and which bytes a forget may
remove again. Nothing here touches the disk (:mod:`arcology_oracle.index.note_io` does).

A captured heading, as appended to a file whose line ending is ``eol``::

    * Title :tag:
    :PROPERTIES:
    :ID:       6f0c...
    :CREATED:  [2026-12-03 Thu 07:30]
    :CAPTURED_BY: arcology-oracle
    :CAPTURE_HASH: 3b1f...
    :END:
    The text.

(with ``:SOURCE:`` when the text says where it came from, and ``:ROLE: oracle`` when it
is the oracle's own words: an answer or a summary kept).

Contracts:

* **Inert text.** No line of the captured text can change how Org or Emacs reads
  anything else in the file (:mod:`.org_escape`): a line Org would read as a heading
  (``*`` at the start), a keyword or block line (``#+...``, indented or not:
  ``#+filetags``, ``#+title``, ``#+begin_src``...), a drawer line (``:NAME:`` alone,
  ``:END:``) or a footnote definition (``[fn:1] ...``) gets a leading comma, Org's own
  escape (``org-escape-code-in-string``); a zero-width space goes into each ``Local
  Variables:`` and breaks each ``-*-`` (text, title and source: no mode or coding cookie,
  on the first line of a file that was empty or anywhere in a file with CR line endings),
  and goes between two ``<`` (text and title: no ``<<target>>`` takes the user's links),
  after the ``[`` of an inline footnote definition with a label (``[fn:name:...]``: no
  footnote the user refers to is defined by a capture) and into each ``src_``, ``call_``,
  macro ``{{{`` and ``@@`` (no code runs when the file is exported). In plain text Org shows
  the comma and reads the line as a paragraph; nothing is lost, nothing else is escaped.
* **The oracle's words** (a capture with ``role``: an answer or a summary kept) are
  quieted as a conversation's answer is (:func:`~.model_text.quiet`: no link that runs
  code, no active timestamp, no LaTeX that reads or runs), and their title is no TODO,
  priority or ``COMMENT`` heading (:func:`~.model_text.quiet_heading`); the user's
  typing is not.
* **No control characters.** Text, title or source holding NUL or another C0 control but
  tab, line feed and carriage return (a form feed would start a page hiding the user's
  ``Local Variables``) is a 400, never rewritten into something else.
* **As Emacs saves it.** No line ends in what Emacs's ``delete-trailing-whitespace`` (a
  common ``before-save-hook``) deletes: blanks (U+00A0, U+3000 and U+200B too) at line
  ends and blank lines at the text's end are dropped, and no escape's zero-width space
  ends a line; else a capture the user never edited could not be forgotten once saved.
  Tabs stay as sent: the hash counts them as spaces (``whitespace-cleanup``, below). A
  separator at the top of the file may be gone (``whitespace-cleanup`` deletes a buffer's
  first empty lines): the subtree, matching its hash, is forgotten alone.
* **Tags** are Org's tag words, ``[[:alnum:]_@#%]+`` (``org-tag-re``); anything else is a
  400, never rewritten into something else.
* **Titles** are the given title, or the text's first words, with each org link replaced
  by its description (or its target) and whitespace folded; a derived title is cut at a
  word boundary. :func:`capture_link` is always a valid Org link (brackets escaped as
  ``/suggest-links`` does, :func:`~.org_syntax.org_link`).
* **The hash.** ``:CAPTURE_HASH:`` is the SHA-256 of the bytes appended (the separator
  line ending, if one was needed, or the head of a file the capture created, and the
  subtree with the hash line left out and each tab as the spaces up to its column,
  :mod:`.capture_blanks`; the file's last line ending before them too when the separator
  makes an empty line, :data:`FILE_START` when it is an empty file's first line, or
  :data:`AFTER_TEXT` (:data:`AFTER_BLANKS`) when it ends a last line of text (of blanks)), of
  the file's real path relative to the roam dir, and of a fixed domain string. It is in
  the file, the source of truth, so it survives any rebuild of the database, and it
  cannot match by accident: editing one byte of the subtree (but for tabs and spaces
  swapped keeping every character's column, as a save's ``whitespace-cleanup`` swaps
  them), adding text or headings below it, or moving it to another file or under
  another heading all change it. :func:`plan_forget` removes a
  subtree only when the hash (or an older version's, of tabs as tabs) still matches.
"""

from __future__ import annotations

import datetime
import hashlib
import re
import uuid
from collections.abc import Collection
from dataclasses import dataclass

from ..errors import BadRequest
from .conversations import ORACLE_ROLES
from .model_text import quiet
from .org_escape import cookie_brought_up, escape_line, inert, refuse_controls
from .capture_blanks import blank_form, is_blank_line
from .capture_tags import clean_tags  # noqa: F401 (part of this module's interface)
from .capture_headings import find_heading, heading_properties  # noqa: F401 (part of this module's interface)
from .capture_title import TRAILING_BLANKS, capture_title
from .line_endings import file_eol, split_keeping_ends  # noqa: F401 (part of this module's interface)
from .org_syntax import HEADING_LINE_RE, org_link, plain_title

CAPTURED_BY = "CAPTURED_BY"
CAPTURED_BY_VALUE = "arcology-oracle"


def is_captured(properties: dict[str, str]) -> bool:
    """Whether a heading with these properties is one the daemon captured (``/memorize``)."""
    return properties.get(CAPTURED_BY) == CAPTURED_BY_VALUE
CAPTURE_HASH = "CAPTURE_HASH"
_DOMAIN = b"arcology-oracle capture v1\x00"
_HASH_LINE_RE = re.compile(rb"^:CAPTURE_HASH: ([0-9a-f]{64})(?:\r\n|\r|\n)$")
_SPACE_RE = re.compile(r"\s+")
BOM = b"\xef\xbb\xbf"
# In a capture's hash, before the separator written into an empty file: no byte of a note,
# it stands for the file's start, so a line the user typed there is never taken for it.
FILE_START = b"\x00"
# The same before the separator that ends the file's last line (written without its line
# ending), of text or of blanks only (which a save may delete): an older version hashed
# that line ending alone, as the one ending its empty line.
AFTER_TEXT, AFTER_BLANKS = b"\x01", b"\x02"
_FORMS = (bytes, blank_form)  # a line's bytes as they are, and with its tabs as spaces


class NotCaptured(Exception):
    """The heading exists but the daemon did not write it (it belongs to the user)."""


class Changed(Exception):
    """The daemon wrote the heading, but its bytes are not the ones written any more, or
    taking them out would change how Emacs reads the user's; the message says which."""


@dataclass(frozen=True)
class Capture:
    """A heading to append: its ID, title and lines (no line endings, no hash line)."""

    id: str
    title: str
    lines: tuple[str, ...]

    @property
    def link(self) -> str:
        return capture_link(self.id, self.title)


def inactive_timestamp(moment: datetime.datetime) -> str:
    """``[2026-12-03 Thu 07:30]`` (English day names, as Org writes them by default)."""
    day = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")[moment.weekday()]
    return f"[{moment:%Y-%m-%d} {day} {moment:%H:%M}]"


def capture_link(node_id: str, title: str) -> str:
    """A valid Org link to the capture: its description is the title as Org shows it."""
    return org_link(node_id, plain_title(title))


def make_capture(
    text: str,
    *,
    title: str | None,
    tags: tuple[str, ...],
    now: datetime.datetime,
    node_id: str | None = None,
    source: str | None = None,
    role: str | None = None,
    quiet_title: bool = False,
    keywords: Collection[str] = (),
    task: str | None = None,
) -> Capture:
    """The level-1 heading for ``text`` (see the module docstring); BadRequest for empty
    text, text that is not valid Unicode, or a control character in text, title or
    source. ``source`` (one line: where the text came from, an org link) becomes
    ``:SOURCE:``; ``role`` (``oracle`` for the oracle's own words, which are then marked as its answers
    are: :mod:`arcology_oracle.answers.roles`, and quieted as they are: :func:`~.model_text.quiet`, as is
    a ``title`` sent with them) ``:ROLE:``. Text without a role is the user's typing, written as typed:
    their ``elisp:`` link and appointment work. ``quiet_title``: the title is not the user's typing
    either (an agent's), its first word quieted as the oracle's. ``keywords``: the TODO keywords the
    target file declares, which such a title does not start with (:func:`~.model_text.quiet_heading`).
    ``task``: the state (:func:`~.todo_keywords.file_task_keyword`) the heading starts with, a task."""
    if role is not None and role not in ORACLE_ROLES:
        raise BadRequest(f"role must be one of {', '.join(sorted(ORACLE_ROLES))}, not {role!r}")
    refuse_controls(text=text, title=title, source=source)
    # No blank ends a line (nor blank lines the text): what Emacs's delete-trailing-whitespace,
    # a common hook on save, would delete, leaving a capture that can never be forgotten.
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    body = "\n".join(line.rstrip(TRAILING_BLANKS) for line in lines).strip("\n")
    body = quiet(body) if role else body  # the oracle's words, not the user's typing
    if not body.strip():
        raise BadRequest("text must not be empty")
    for part in (text, title or ""):
        try:
            part.encode("utf-8")
        except UnicodeEncodeError:
            raise BadRequest("text and title must be valid Unicode (no lone surrogates)") from None
    given = quiet(plain_title(title)) if role and title else title  # sent with them: theirs
    name = capture_title(body, given, theirs=bool(role) or quiet_title, keywords=keywords, task=task)
    node_id = node_id or str(uuid.uuid4())
    tag_text = f" :{':'.join(tags)}:" if tags else ""
    lines = [
        f"* {name}{tag_text}",
        ":PROPERTIES:",
        f":ID:       {node_id}", f":CREATED:  {inactive_timestamp(now)}",
        f":{CAPTURED_BY}: {CAPTURED_BY_VALUE}",
        *([f":SOURCE:   {inert(where, targets=False)}"] if (where := _one_line(source or "")) else []),
        *([f":ROLE:     {role}"] if role else []),
        ":END:",
        *(escape_line(line) for line in body.split("\n")),
    ]
    return Capture(node_id, name, tuple(lines))


def _one_line(text: str) -> str:
    """``text`` on one line: a property value cannot hold a newline."""
    return _SPACE_RE.sub(" ", text).strip().rstrip(TRAILING_BLANKS)


def new_file_head(title: str, file_id: str | None = None) -> str:
    """The head of a new note file: a file-level ``:ID:`` drawer and ``#+title:``."""
    return f":PROPERTIES:\n:ID:       {file_id or uuid.uuid4()}\n:END:\n#+title: {_SPACE_RE.sub(' ', title)}\n"


def _digest(rel: str, lead: bytes) -> hashlib._Hash:
    h = hashlib.sha256(_DOMAIN + rel.encode("utf-8", "surrogateescape") + b"\x00%d\x00" % len(lead))
    h.update(lead)
    return h


def _digest_of(rel: str, lead: bytes, sub: list[bytes], hash_at: int | None, form) -> str:
    """The hash of a captured subtree's lines ``sub`` (its hash line at ``hash_at`` left
    out) after ``lead``, each line in ``form``."""
    h = _digest(rel, lead)
    for i, line in enumerate(sub):
        if i != hash_at:
            h.update(form(line))
    return h.hexdigest()


def render_capture(capture: Capture, *, rel: str, eol: bytes, lead: bytes = b"") -> bytes:
    """The bytes to append to the file ``rel`` (line ending ``eol``): ``lead`` (the
    separator line ending when the file does not end with one, or the head of a file
    the daemon creates), then the subtree with its hash, which covers ``lead`` too."""
    encoded = [line.encode("utf-8") + eol for line in capture.lines]
    h = _digest(rel, lead)
    h.update(b"".join(map(blank_form, encoded)))
    at = capture.lines.index(":END:")
    encoded.insert(at, f":{CAPTURE_HASH}: {h.hexdigest()}".encode() + eol)
    return lead + b"".join(encoded)


# -- forgetting -------------------------------------------------------------------------


@dataclass(frozen=True)
class Removal:
    """Bytes ``[start, end)`` of the file to remove; ``line`` is the heading's 1-based
    line and ``lines`` how many lines go; ``whole_file``: the daemon created the file for
    this capture and nothing else is in it, so the file itself goes."""

    start: int
    end: int
    line: int
    lines: int
    whole_file: bool = False


def plan_forget(data: bytes, rel: str, node_id: str) -> Removal | None:
    """What to remove to forget the captured heading ``node_id`` of the file ``rel``
    (bytes ``data``); None when no heading has that ID.

    Raises NotCaptured for a heading the daemon did not write, and Changed when it did
    but the bytes are not the ones it wrote (the message says what changed). The
    separator line ending the capture added goes too when the capture is the file's last
    text, so forgetting an untouched capture restores the file byte for byte (but after a
    line of blanks since left empty, where it may be the user's: it stays); before a
    later heading it stays (that heading must stay a heading). A capture at the very top
    of the file, its separator deleted (whitespace-cleanup on save), goes without it. The
    empty line that ends a subtree when the next heading is a capture written without a
    lease is that capture's separator when its hash says so: it is not text added, and it
    is left where that capture's hash still matches (its own empty line goes instead).
    """
    eol = file_eol(data)
    bom = len(BOM) if data.startswith(BOM) else 0
    raw = split_keeping_ends(data[bom:], eol)
    lines = [line.removesuffix(eol).decode("utf-8", "surrogateescape") for line in raw]
    found = find_heading(lines, node_id)
    if found is None:
        return None
    start, end = found
    props = heading_properties(lines, start)
    if not is_captured(props):
        raise NotCaptured(f"the heading {node_id} was not captured by arcology-oracle: it is yours to edit")
    where = f"the captured heading {node_id} in {rel}"
    stored = props.get(CAPTURE_HASH)
    if stored is None:
        raise Changed(f"{where} was written by an older arcology-oracle that kept no hash of its bytes, so it cannot be "
                      "told apart from your edits: edit it in Emacs")  # fmt: skip
    sub = raw[start:end]
    hash_at = next((i for i, line in enumerate(sub) if _HASH_LINE_RE.match(line)), None)
    offsets = [bom]
    for line in raw:
        offsets.append(offsets[-1] + len(line))
    first, last = offsets[start], offsets[end]
    top = first == bom
    empty_line, ends_line = (eol + eol, FILE_START + eol), (AFTER_TEXT + eol, AFTER_BLANKS + eol)
    matched_at, full = _matched_leads(data, raw, offsets, start, end, rel, stored, eol)
    # The empty line ending the subtree may be the separator of a capture right below
    # (written without a lease): its hash covers it, so it is that capture's, not text.
    next_lead = None
    if not full and sub[-1] == eol and (next_lead := _separator_of(data, raw, lines, offsets, end, rel, eol)):
        full, last = [lead for lead, at in matched_at.items() if at == len(sub) - 1], offsets[end - 1]
    if not full:
        unlike = _what_changed(lines, start, end, matched_at, sub)
        if any(_digest_of(rel, lead, sub, hash_at, f) == stored for lead in empty_line for f in _FORMS):  # as written
            unlike = "the empty line above it was deleted (or text written there), so the line ending above it is not its own"
        elif any(_digest_of(rel, lead, sub, hash_at, f) == stored for lead in ends_line for f in _FORMS):
            unlike = "the line above it was deleted or written on, so the line ending above it may not be its own"
        raise Changed(f"{where} is not as arcology-oracle wrote it: {unlike}; it is yours now: edit it in Emacs")
    # The lead goes too when the capture is still the file's last text (a created file
    # then goes whole; after an empty line the line ending before it stays). Before a
    # later heading, only the empty line it made goes (that heading must stay one, at a
    # line's start).
    lead = full[0]
    if next_lead:
        # Its hash covers its separator (and the line ending above): this subtree goes with
        # its own empty line if any (the same bytes); at the file's start, with that
        # separator too, and the next capture stands at the top, forgotten alone there.
        first -= len(eol) if lead in empty_line and not top else 0
        last = offsets[end] if first == bom and next_lead != eol else last
    elif end == len(raw) and not top:
        first -= len(eol) if lead in (*empty_line, *ends_line) else len(lead)
        # After a line of blanks left empty (a save trimmed it, or the user killed it with
        # the separator, ending the empty line above with their own): it stays.
        first += len(eol) if lead == AFTER_BLANKS + eol and (first == bom or data[first - len(eol) : first] == eol) else 0
        # An older version's lone line ending after text: the one it wrote after a last line
        # without one, or the user's once its empty line was deleted. Unknowable: it stays.
        first += len(eol) if lead == eol and first > bom and data[first - len(eol) : first] != eol else 0
    elif lead in empty_line and not top:
        first -= len(eol)
    head = lead not in (b"", eol, *ends_line, *empty_line)
    whole_file = head and first == 0 and last == len(data)
    if not whole_file and (line := cookie_brought_up(data, bom, first, last, eol)):
        raise Changed(f"forgetting {where} would bring the -*- of your line {line} to the top of the file, where "
                      "Emacs reads it as the file's mode, coding and variables: not forgotten; delete it in Emacs")  # fmt: skip
    return Removal(first, last, start + 1, end - start, whole_file=whole_file)


def _matched_leads(
    data: bytes, raw: list[bytes], offsets: list[int], start: int, end: int, rel: str, stored: str, eol: bytes
) -> tuple[dict[bytes, int], list[bytes]]:
    """For the captured subtree of lines ``raw[start:end]`` (hash ``stored``): each lead
    with which its hash matches a first part of it (how many lines), and those with
    which it matches the whole subtree."""
    first, bom = offsets[start], offsets[0]
    sub = raw[start:end]
    hash_at = next((i for i, line in enumerate(sub) if _HASH_LINE_RE.match(line)), None)
    # What may stand before the subtree: nothing, the separator (a line ending), that and
    # the separator written after the file's own last line ending or at an empty file's
    # start (an empty line; the hash covers that line ending, or FILE_START, too), or the
    # head of the file the capture created (then the subtree's hash covers those bytes
    # too). At the file's top (after a BOM at most) the separator may be gone whole:
    # whitespace-cleanup, a common before-save-hook, deletes a buffer's first empty lines.
    # Nothing stands before the subtree then, so the subtree alone goes.
    leads = {b"", eol, eol + eol} | ({data[:first]} if start and not bom else set())
    leads = {lead for lead in leads if first >= len(lead) and data[first - len(lead) : first] == lead}
    if first == bom:
        leads |= {eol, eol + eol, FILE_START + eol, AFTER_TEXT + eol, AFTER_BLANKS + eol}
    elif data[first - len(eol) : first] == eol:  # a separator ending the line above (of text or blanks)
        at = data.rfind(eol, bom, first - len(eol))
        above = data[bom if at < 0 else at + len(eol) : first - len(eol)]
        leads.add((AFTER_BLANKS if is_blank_line(above) else AFTER_TEXT) + eol)
        if data[bom:first] == eol:  # the file's first line is empty, as a capture into an empty file made it
            leads.add(FILE_START + eol)
    # Each line as written (an older version hashed tabs) and in capture_blanks' form.
    hashers = {(lead, form): _digest(rel, lead) for lead in leads for form in _FORMS}
    matched_at: dict[bytes, int] = {}
    full: list[bytes] = []
    for i, line in enumerate(sub):
        for (lead, form), h in hashers.items():
            if i != hash_at:
                h.update(form(line))
            if h.hexdigest() == stored:
                matched_at.setdefault(lead, i + 1)
                full += [lead] if i + 1 == len(sub) and lead not in full else []
    return matched_at, full


def _separator_of(
    data: bytes, raw: list[bytes], lines: list[str], offsets: list[int], at: int, rel: str, eol: bytes
) -> bytes | None:
    """The lead with which the captured heading on line ``at`` matches its hash, when that
    lead holds the empty line above it (its separator); else None."""
    props = heading_properties(lines, at) if at < len(lines) else {}
    stored, node_id = props.get(CAPTURE_HASH), props.get("ID", "")
    found = find_heading(lines[at:], node_id) if is_captured(props) and stored and node_id else None
    if found is None or found[0] != 0:
        return None
    matched_at, _ = _matched_leads(data, raw, offsets, at, at + found[1], rel, stored, eol)
    return next((lead for lead in (eol + eol, eol, AFTER_TEXT + eol, AFTER_BLANKS + eol) if lead in matched_at), None)


def _what_changed(lines: list[str], start: int, end: int, matched_at: dict[bytes, int], sub: list[bytes]) -> str:
    if matched_at:
        first_extra = start + min(matched_at.values()) + 1
        if any(HEADING_LINE_RE.match(line) for line in lines[first_extra - 1 : end]):
            return f"headings were added under it (from line {first_extra})"
        return f"text was added below it (lines {first_extra}-{end}) without a heading of its own"
    if any(HEADING_LINE_RE.match(line) for line in lines[start + 1 : end]):
        return "it was edited and headings were added under it"
    if not lines[start].startswith("* "):
        return "it was moved under another heading (refiled)"
    if not sub[-1].endswith((b"\n", b"\r")):
        return "its last line ending was removed"
    return "its title, tags, properties or text were edited, or it was moved here from another file"
