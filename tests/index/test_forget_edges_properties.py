"""Property test of a forget at the edges of a capture (issue 25's rule: a write never
loses, hides or changes a byte it did not add; bad input changes nothing).

Hypothesis draws a daily as the user left it (none, empty, blank lines only, text with or
without a final line ending; LF or CRLF; a byte order mark or not), a capture appended to
it by index/note_io.py with a write lease or without one (it then starts with a line
ending: an empty line after a final one), and up to three edits at the capture's edges: a
save by Emacs with ``whitespace-cleanup`` (real Emacs, :mod:`tests.org_reading`: it
deletes a buffer's first empty lines and the blanks ending lines), text typed at the top,
on the line above the heading, above the heading, right after the capture or at the end,
the line above the heading deleted, a backspace at the heading's start, everything above
it deleted. Each byte is tagged with who wrote it (the user, the capture's separator or
head, its subtree) as the edits go.

The forget (:func:`~arcology_oracle.notes.capture.plan_forget`) may refuse. When it takes
bytes, they must be the capture's: its whole subtree and, of the rest, only its separator
or head, under one reading the bytes allow. Two readings are allowed besides the edits as
made: text typed next to a line ending may have been typed on its other side (the same
bytes: RET then ``x`` at a line's end, or ``x`` then RET at the next line's start), and
bytes that are exactly those of a capture nobody touched after a daily that ended as
they do (a capture of an older version too, whose hash covered its separator alone after
any daily) may be forgotten as that capture is, whatever made them: no forget can tell
them apart. Blank
text is typed only below the capture: typed above it, it can make the very bytes of
another untouched capture, and no forget can tell which one it is. Untouched, saved
through ``whitespace-cleanup``, or with a heading typed after it, the capture must be
forgotten; untouched, byte for byte.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st

from arcology_oracle.index import note_io
from arcology_oracle.notes.capture import (
    AFTER_BLANKS,
    AFTER_TEXT,
    FILE_START,
    Changed,
    NotCaptured,
    make_capture,
    new_file_head,
    plan_forget,
    render_capture,
)
from arcology_oracle.notes.capture_blanks import is_blank_line
from tests.emacs_batch import emacs_env
from tests.org_reading import OrgProcess

pytestmark = pytest.mark.timeout(900)

EXAMPLES = int(os.environ.get("ARCOLOGY_WRITE_EXAMPLES", "50"))
REL = "daily/d.org"
NODE = "c0000000-0000-4000-8000-000000000001"
NOW = datetime.datetime(2026, 3, 14, 9, 26)
BOM = b"\xef\xbb\xbf"
USER, LEAD, SUBTREE = "u", "c", "s"  # who wrote a byte: the user, the capture's separator or head, its subtree
HEADING, TEXT = b"* groceries", b"Buy oat milk"
DAILIES = (None, "", "\n", "\n\n", "  \t", " \n", "  \n\n", "A line", "A line\n", "A line\n\n", "* Mine\nA line",
           "* Mine\nA line\n", "* Mine\nA line\n\n", "A line\n\u00a0")  # fmt: skip
TYPED = ("typed{eol}", "* Mine too{eol}more text{eol}", "typed", "{eol}typed")
WHERE = ("top", "line_above_end", "heading", "after", "end")
EDITS = st.one_of(
    st.just(("cleanup",)),
    st.tuples(st.just("type"), st.sampled_from(WHERE), st.sampled_from(TYPED)),
    st.tuples(st.just("type"), st.sampled_from(("after", "end")), st.sampled_from(("{eol}", "  {eol}"))),
    st.just(("kill_line_above",)),
    st.just(("backspace_at_heading",)),
    st.just(("clear_above",)),
)
# Edits after which the capture must still be forgotten.
KEEP_FORGETTABLE = {("cleanup",)} | {("type", where, TYPED[1]) for where in ("after", "end")}


class Tagged:
    """The file's bytes and the readings of who wrote each of them."""

    def __init__(self, data: bytes, tags: tuple[str, ...]):
        self.data = data
        self.readings = {tags}

    def insert(self, at: int, chunk: bytes) -> None:
        """The user types ``chunk`` at ``at``; typed a few line endings to one side, it
        would have made the same bytes: those readings count too."""
        old, new = self.data, self.data[:at] + chunk + self.data[at:]
        readings = set()
        for tags in self.readings:
            for q in range(max(0, at - 8), min(len(old), at + 8) + 1):
                lo, hi = min(q, at), max(q, at)
                if set(old[lo:hi]) <= set(b"\r\n") and new[:q] + new[q + len(chunk) :] == old:
                    readings.add(tags[:q] + (USER,) * len(chunk) + tags[q:])
        self.data, self.readings = new, readings

    def delete(self, lo: int, hi: int) -> None:
        self.data = self.data[:lo] + self.data[hi:]
        self.readings = {tags[:lo] + tags[hi:] for tags in self.readings}

    def saved_as(self, after: bytes) -> None:
        """The file as a save left it, deleting bytes only (the first of equal ones kept)."""
        kept, j = [], 0
        for i, byte in enumerate(self.data):
            if j < len(after) and after[j] == byte:
                kept.append(i)
                j += 1
        assert j == len(after), f"the save did more than delete: {self.data!r} -> {after!r}"
        self.data = after
        self.readings = {tuple(tags[i] for i in kept) for tags in self.readings}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("forget-edges")
    note_io.prepare_leases()
    with OrgProcess(emacs_env(root)) as org:
        yield root, org


def capture_into(root: Path, daily: bytes | None, leased: bool) -> tuple[Tagged, bytes, bytes, str]:
    """Capture into ``daily`` (None: no daily yet, the capture makes it); return the tagged
    file, the bytes written, the lead its hash covers and the file's real relative path."""
    (root / "daily").mkdir()
    if daily is not None:
        (root / REL).write_bytes(daily)
    entry = make_capture(TEXT.decode(), title="groceries", tags=(), now=NOW, node_id=NODE)
    hashed = []

    def build(eol: bytes, lead: bytes, real: str) -> bytes:
        hashed.append(lead)
        return render_capture(entry, rel=real, eol=eol, lead=lead)

    head = new_file_head("2026-03-14", "f0000000-0000-4000-8000-000000000001").encode() if daily is None else None
    with mock.patch.object(note_io, "take_lease", lambda fd, attempts: False) if not leased else contextlib.nullcontext():
        done = note_io.append_note(root, REL, build, head)
    before = daily or b""
    assert (root / REL).read_bytes() == before + done.added
    at = done.added.index(HEADING)
    tags = (USER,) * len(before) + (LEAD,) * at + (SUBTREE,) * (len(done.added) - at)
    return Tagged(before + done.added, tags), done.added, hashed[-1], done.real_rel


def as_untouched(data: bytes, added: bytes, hashed: bytes, created: bool) -> tuple[str, ...] | None:
    """The reading of ``data`` as the capture ``added`` (its hash covering ``hashed``
    before it) nobody touched, after a daily that ends as the bytes before it do; None
    when no daily could have."""
    at = data.find(added)
    if at < 0:
        return None
    body = data[:at].removeprefix(BOM)
    eol = b"\r\n" if b"\r\n" in added else b"\n"
    could = {
        b"": not body or body.endswith(eol),  # with a write lease, after a final line ending
        # An older version's separator, hashed alone: after a last line without its ending,
        # and without a lease at an empty file's start and after a final line ending.
        eol: True,
        eol + eol: bool(body) and body.endswith(eol),
        FILE_START + eol: not body,
        AFTER_TEXT + eol: not is_blank_line(body.rsplit(eol, 1)[-1]),
        AFTER_BLANKS + eol: bool(body) and not body.endswith(eol) and is_blank_line(body.rsplit(eol, 1)[-1]),
    }.get(hashed, created and at == 0)
    if not could:
        return None
    lead = added.index(HEADING)
    return (USER,) * at + (LEAD,) * lead + (SUBTREE,) * (len(added) - lead) + (USER,) * (len(data) - at - len(added))


def takes_only_the_captures(tags: tuple[str, ...], data: bytes, start: int, end: int) -> bool:
    """Whether taking ``[start, end)`` out of ``data`` leaves what taking out all of the
    capture's subtree and none of the user's bytes, under the reading ``tags``, leaves:
    the same file, whichever of two equal bytes side by side is said to go (of two line
    endings side by side, the user's and the capture's separator, either)."""
    left = data[:start] + data[end:]
    reach = {0}  # how much of ``left`` the bytes of ``data`` read so far can make
    for byte, tag in zip(data, tags):
        kept = {j + 1 for j in reach if j < len(left) and left[j] == byte} if tag != SUBTREE else set()
        reach = kept if tag == USER else kept | reach
        if not reach:
            return False
    return len(left) in reach


def edit(file: Tagged, step: tuple, eol: bytes, org: OrgProcess, path: Path) -> None:
    data = file.data
    top = len(BOM) if data.startswith(BOM) else 0
    heading = data.index(HEADING)
    after = data.index(TEXT, heading) + len(TEXT) + len(eol)
    above = heading - len(eol) if heading - len(eol) >= top and data[heading - len(eol) : heading] == eol else heading
    if step[0] == "cleanup":
        path.write_bytes(data)
        org.cleanup(path)
        file.saved_as(path.read_bytes())
    elif step[0] == "type":
        at = {"top": top, "line_above_end": above, "heading": heading, "after": after, "end": len(data)}[step[1]]
        file.insert(at, step[2].format(eol="\n").replace("\n", eol.decode()).encode())
    elif step[0] == "kill_line_above" and heading > top:
        start = data.rfind(eol, top, above)
        file.delete(top if start < 0 else start + len(eol), heading)
    elif step[0] == "backspace_at_heading" and heading > top:
        file.delete(above if above < heading else heading - 1, heading)
    elif step[0] == "clear_above":
        file.delete(top, heading)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
@given(
    daily=st.sampled_from(DAILIES),
    crlf=st.booleans(),
    bom=st.booleans(),
    leased=st.booleans(),
    steps=st.lists(EDITS, max_size=3),
)
# A daily with no text, its blank lines and the capture's separator deleted on save.
@example(daily="", crlf=False, bom=False, leased=False, steps=[("cleanup",)])
@example(daily="\n", crlf=True, bom=True, leased=False, steps=[("type", "end", TYPED[1]), ("cleanup",)])
@example(daily="  \t", crlf=False, bom=False, leased=True, steps=[("cleanup",)])
# A last line of a no-break space, which whitespace-cleanup deletes as it does spaces.
@example(daily="A line\n\u00a0", crlf=False, bom=False, leased=True, steps=[("cleanup",)])
# A line ending typed right below the separator, the line between deleted: either may go.
@example(daily="A line\n\u00a0", crlf=False, bom=False, leased=True,
         steps=[("type", "heading", TYPED[3]), ("kill_line_above",)])  # fmt: skip
# An empty line typed at the top, then the line of blanks killed with the separator: the
# line ending above the capture is the user's empty line's.
@example(daily="  \t", crlf=False, bom=False, leased=True, steps=[("type", "top", TYPED[3]), ("kill_line_above",)])
# That line deleted and a line typed above the heading: the line ending above it is the user's.
@example(daily="", crlf=False, bom=True, leased=False, steps=[("kill_line_above",), ("type", "heading", TYPED[0])])
def test_a_forget_takes_only_the_captures_bytes_whatever_was_done_at_its_edges(world, daily, crlf, bom, leased, steps):
    root, org = world
    eol = b"\r\n" if crlf else b"\n"
    before = None if daily is None else (BOM if bom else b"") + daily.replace("\n", eol.decode()).encode()
    with tempfile.TemporaryDirectory(dir=root) as where:
        file, added, hashed, real = capture_into(Path(where), before, leased)
        eol = b"\r\n" if b"\r\n" in added else b"\n"
        note(f"written: {file.data!r} (hash over the lead {hashed!r})")
        for step in steps:
            edit(file, step, eol, org, Path(where) / REL)
            note(f"after {step}: {file.data!r}")
    data = file.data
    try:
        removal = plan_forget(data, real, NODE)
    except (Changed, NotCaptured) as refused:
        removal, why = None, str(refused)
    else:
        why = "no heading has its ID"
    forgettable = all(step in KEEP_FORGETTABLE for step in steps)
    if removal is None:
        assert not forgettable, f"the capture was not forgotten: {why}"
        return
    left = data[: removal.start] + data[removal.end :]
    note(f"forgotten: {left!r}")
    assert not removal.whole_file or (before is None and (removal.start, removal.end) == (0, len(data)))
    readings = file.readings | ({untouched} if (untouched := as_untouched(data, added, hashed, before is None)) else set())
    assert any(takes_only_the_captures(tags, data, removal.start, removal.end) for tags in readings), (
        f"the forget took bytes that are not the capture's: {data[removal.start : removal.end]!r} of {data!r}"
    )
    if not steps:
        assert (None if removal.whole_file else left) == before, "an untouched capture's forget did not restore the file"
