"""Property test of the write path (issue 25): captures and forgets never lose, hide or
change a byte they did not add, and never change how the rest of the file is read.

Hypothesis draws a daily note (LF, CRLF or CR line endings, a final newline or not, a
UTF-8 byte order mark, private, ``crypt``, ``ROAM_EXCLUDE`` and PGP headings, drawers,
blocks, planning lines; or no daily at all) and a run of steps: captures (hostile text:
file keywords, drawers, headings, blocks, links, ``Local Variables`` blocks, ``-*-``
cookies, targets, control characters (a 400); titles with links, tag-like ends and
cookies; valid and invalid tags), bursts of captures while a thread appends lines to
the file, forgets (of captures, of the user's headings, of unknown IDs), headings and
text the user adds, and text the user types into a capture. The daemon's :class:`Memory` and
:class:`OracleIndex` run in-process (one index, one daily per example) so that examples
are cheap; one batch Emacs answers on a pipe for the whole run (:mod:`tests.org_reading`).

After every step:

* every byte the user or the appender wrote is still in the file, in order;
* the file keeps one kind of line ending (its own) and its byte order mark, and Emacs
  still reads it as UTF-8 (no cookie or Local Variables block set its coding);
* Org (Emacs) and the index agree on the ID, the tags and the privacy of every heading,
  and Org reads each of the user's headings exactly as before (ID, title, tags, privacy);
* Org sees the user's headings and one heading per live capture, nothing else; a
  capture's own tags are the ones asked for, and ``indexed`` is what the index holds;
* a forget of a capture nothing touched since restores the file byte for byte; a forget
  of a capture the user wrote into is a 409 that changes nothing; a forget of a private
  heading of the user's answers as one of an unknown ID.
"""

from __future__ import annotations

import asyncio
import datetime
import itertools
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from arcology_oracle.config import load_settings
from arcology_oracle.errors import BadRequest, Conflict, NotFound
from arcology_oracle.index.memory import Memory
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.notes.capture import clean_tags
from tests.emacs_batch import emacs_env
from tests.org_reading import OrgFile, OrgProcess, index_view, org_view

pytestmark = pytest.mark.timeout(600)

EXAMPLES = int(os.environ.get("ARCOLOGY_WRITE_EXAMPLES", "50"))
BOM = b"\xef\xbb\xbf"
APPENDED_LINES = 60  # at most, per burst: the appender stops when the burst is answered

KINDS = ("plain", "tagged", "private", "crypt", "exclude", "exclude_nil", "pgp", "logbook", "src", "quote", "planning")
HOSTILE = (
    "#+filetags: :private:", "#+FILETAGS: :crypt:work:", "  #+filetags: :private:", "#+title: Hijacked",
    "#+todo: Heading User | DONE", "#+property: ROAM_EXCLUDE t", "#+startup: overview", ":PROPERTIES:",
    ":ID: forged-id-0000", ":ROAM_EXCLUDE: t", ":END:", "* heading inside", "** deeper heading :private:",
    "\t* tab star", "#+begin_src emacs-lisp", "#+end_src", "#+begin_example", ":LOGBOOK:",
    "-----BEGIN PGP MESSAGE-----", "*bold* start", "[[id:0000][a link]] first", "a line :tag:",
    "#+include: \"other.org\"", "", "   ", ",* already escaped", "#+begin_quote", "#+end_quote",
    "Local Variables:\ncoding: latin-1\nmode: text\nEnd:", "# local variables: #", "-*- coding: latin-1 -*-",
    "<<Heading>> target", "<<<Body>>> radio", "page\fbreak", "nul\x00byte", "esc\x1b[0m",
)  # fmt: skip
PLAIN = ("Remember the milk", "Call Ana about the lease", "ünïcode café line", "numbers 42 and 7")
TITLES = (
    None, None, None, "A plain title", "See [[id:x][the note]] here", "[[https://example.org][site]] first",
    "brackets ] [ ]] [[", "ends like tags :private:", "ends :a:b:", "TODO maybe a keyword", "* starred title",
    "#+filetags: :private:", "title\nwith newline", "Plan -*- coding: latin-1 -*-", "Local Variables: x",
    "<<Heading>> title", "form\ffeed", "nul\x00title",
)  # fmt: skip
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")  # refused in text and title: a 400
GOOD_TAGS = ((), (), ("work",), ("private",), ("Private",), ("crypt",), ("a_b", "@home"), ("#x", "%p"))
BAD_TAGS = (("x\n:",), ("a b",), ("a:b",), ("private\n:",))

heading_spec = st.tuples(st.integers(1, 3), st.sampled_from(KINDS), st.booleans())
daily_spec = st.fixed_dictionaries({
    "exists": st.sampled_from((True, True, True, True, False)),
    "eol": st.sampled_from(("\n", "\r\n", "\r")),
    "bom": st.booleans(),
    "final_newline": st.booleans(),
    "file_drawer": st.booleans(),
    "filetags": st.sampled_from((None, None, ":work:", ":private:")),
    "preamble": st.booleans(),
    "headings": st.lists(heading_spec, max_size=5),
})  # fmt: skip
capture_spec = st.tuples(
    st.lists(st.sampled_from(HOSTILE + PLAIN * 3), min_size=1, max_size=4),
    st.lists(st.sampled_from(("\n", "\r\n", "\r")), min_size=3, max_size=3),
    st.sampled_from(TITLES),
    st.sampled_from(GOOD_TAGS * 3 + BAD_TAGS),
)
step_spec = st.one_of(
    st.tuples(st.just("capture"), capture_spec),
    st.tuples(st.just("burst"), st.lists(capture_spec, min_size=1, max_size=3)),
    st.tuples(st.just("forget"), st.integers(0, 20)),
    st.tuples(st.just("forget_other"), st.sampled_from(("unknown", "user"))),
    st.tuples(st.just("user_heading"), st.tuples(st.sampled_from(KINDS), st.booleans())),
    st.tuples(st.just("user_text"), st.just(None)),
    st.tuples(st.just("type_into"), st.integers(0, 20)),
)


def heading_lines(level: int, kind: str, node_id: str | None, marker: str, title: str = "Heading") -> list[str]:
    tag = {"tagged": " :work:", "private": " :private:", "crypt": " :crypt:"}.get(kind, "")
    lines = [f"{'*' * level} {title} {marker}{tag}"]
    if kind == "planning":
        lines.append("SCHEDULED: <2024-01-01 Mon>")
    props = [f":ID:       {node_id}"] if node_id else []
    props += {"exclude": [":ROAM_EXCLUDE: t"], "exclude_nil": [":ROAM_EXCLUDE: nil"]}.get(kind, [])
    if props:
        lines += [":PROPERTIES:", *props, ":END:"]
    lines.append(f"Body of {marker} in words.")
    lines += {
        "pgp": ["-----BEGIN PGP MESSAGE-----", "", "hQEMA5vYxyz", "-----END PGP MESSAGE-----"],
        "logbook": [":LOGBOOK:", "- Note taken on [2024-01-01 Mon 10:00]", ":END:"],
        "src": ["#+begin_src python", "#+filetags: :private:", "print(1)", "#+end_src"],
        "quote": ["#+begin_quote", "A quoted line.", "#+end_quote"],
    }.get(kind, [])
    return lines


@dataclass
class Capture:
    id: str
    tags: tuple[str, ...]
    state: str = "clean"  # clean | typed (must be refused) | maybe (touched by the appender)


@dataclass
class Example:
    """The model of one example: the daily, what the user wrote, the live captures."""

    path: Path
    rel: str
    now: datetime.datetime
    ids: itertools.count
    chunks: list[bytes] = field(default_factory=list)  # the user's and appender's bytes, in order
    user_ids: list[str] = field(default_factory=list)
    user_markers: set[str] = field(default_factory=set)  # one in the title of each user heading
    user_views: dict[str, tuple] = field(default_factory=dict)  # marker -> Org's first reading
    captures: list[Capture] = field(default_factory=list)
    undo: list[tuple[str, bytes | None, bytes]] = field(default_factory=list)  # (id, before, after), clean captures
    bom: bool = False
    markers: itertools.count = field(default_factory=itertools.count)

    def marker(self) -> str:
        return "mk" + "".join(chr(ord("a") + int(d)) for d in f"{next(self.markers):04d}") + "z"

    def new_id(self) -> str:
        return f"b0000000-0000-4000-8000-{next(self.ids):012d}"

    def data(self) -> bytes:
        return self.path.read_bytes() if self.path.exists() else b""

    def eol(self) -> str:
        data = self.data()
        return "\r\n" if b"\r\n" in data else "\r" if b"\r" in data and b"\n" not in data else "\n"


def render_daily(spec: dict, ex: Example) -> bytes:
    lines: list[str] = []
    if spec["file_drawer"]:
        lines += [":PROPERTIES:", f":ID:       {ex.new_id()}", ":END:"]
    if spec["preamble"] or spec["file_drawer"]:
        lines.append(f"#+title: Day {ex.marker()}")
    if spec["filetags"]:
        lines.append(f"#+filetags: {spec['filetags']}")
    if spec["preamble"]:
        lines.append(f"Preamble {ex.marker()} text.")
    level = 0
    for wished, kind, has_id in spec["headings"]:
        level = min(wished, level + 1)
        node_id = ex.new_id() if has_id else None
        if node_id:
            ex.user_ids.append(node_id)
        marker = ex.marker()
        ex.user_markers.add(marker)
        lines += heading_lines(level, kind, node_id, marker)
    if not lines:
        return b""
    text = spec["eol"].join(lines) + (spec["eol"] if spec["final_newline"] else "")
    return (BOM if spec["bom"] else b"") + text.encode()


def on_new_line(ex: Example, text: str) -> bytes:
    """``text`` as the user appends it: on a line of its own, in the file's line endings."""
    data, eol = ex.data(), ex.eol()
    lead = "" if not data or data.endswith((b"\n", b"\r")) else eol
    return (lead + text.replace("\n", eol)).encode()


class Checker:
    def __init__(self, org: OrgProcess, index: OracleIndex, memory: Memory):
        self.org, self.index, self.memory = org, index, memory

    def read(self, ex: Example) -> OrgFile:
        return self.org.read(ex.path)

    async def check(self, ex: Example, what: str) -> OrgFile | None:
        data = ex.data()
        at = 0
        for chunk in ex.chunks:
            found = data.find(chunk, at)
            assert found >= 0, f"{what}: the user's bytes {chunk[:80]!r} are gone or out of order"
            at = found + len(chunk)
        if not ex.path.exists():
            return None
        assert data.startswith(BOM) is ex.bom and data.count(BOM) == int(ex.bom), f"{what}: byte order mark"
        crlf, lf, cr = data.count(b"\r\n"), data.count(b"\n"), data.count(b"\r")
        assert cr == 0 or lf == 0 or crlf == lf == cr, f"{what}: mixed line endings ({crlf} CRLF, {lf} LF, {cr} CR)"
        reading = self.read(ex)
        assert reading.eol == (1 if crlf else 2 if cr else 0) or not (cr or lf), (what, reading.eol, reading.coding)
        # No text sets the coding (a -*- cookie, a Local Variables block) or makes the file binary.
        assert reading.coding.startswith(("utf-8", "undecided", "prefer-utf-8")), (what, reading.coding)
        rows = await self.index.read(lambda s: s.file_headings(ex.rel))
        assert index_view(rows) == org_view(reading), f"{what}: the index and Org disagree on {data!r}"
        private = reading.private_lines()
        top = [r for r in rows if r["level"] == 0]
        file_private = any(t.casefold() in ("private", "crypt") for t in reading.top.tags) or (
            reading.top.exclude not in (None, "nil")
        )
        if file_private:
            assert rows == [], what
        for r in top:
            assert r["own_id"] == reading.top.id and set(r["tags"]) == set(reading.top.tags), (what, r, reading.top)
        live = {c.id for c in ex.captures}
        found: set[str] = set()
        for h in reading.headings:
            mine = [m for m in ex.user_markers if m in h.title]
            if not mine:
                assert h.id in live, f"{what}: Org reads a heading nobody wrote: {h}"
                continue
            view = (h.id, h.title, h.tags, h.line in private)
            for m in mine:
                assert ex.user_views.setdefault(m, view) == view, f"{what}: the user's heading {m} reads differently"
            found.update(mine)
        assert found == ex.user_markers, f"{what}: Org no longer sees the user's headings {ex.user_markers - found}"
        seen_ids = [h.id for h in reading.headings if h.id in live]
        assert sorted(seen_ids) == sorted(live), f"{what}: captures in the file {seen_ids}, live {live}"
        return reading

    async def capture(self, ex: Example, spec, concurrent: bool = False) -> None:
        lines, seps, title, tags = spec
        text = "".join(line + (seps[i % 3] if i < len(lines) - 1 else "") for i, line in enumerate(lines))
        if not text.strip():
            text += " Something"
        existed, before = ex.path.exists(), ex.data()
        try:
            good = clean_tags(list(tags))
        except BadRequest:
            assert tags in BAD_TAGS, tags
            assert concurrent or ex.data() == before, "a refused capture wrote"
            return
        assert tags not in BAD_TAGS, f"invalid tags {tags!r} were accepted"
        refused = CONTROL.search(text + (title or ""))
        try:
            captured = await self.memory.memorize(text, title=title, tags=good, now=ex.now)
        except BadRequest:
            assert refused or (title and "\n" in title), f"a capture of {text!r} titled {title!r} was refused"
            assert concurrent or ex.data() == before, "a refused capture wrote"
            return
        assert not refused, f"a capture of {text!r} titled {title!r} with a control character was written"
        assert captured.file == ex.rel and not captured.inbox
        ex.captures.append(Capture(captured.id, good, "maybe" if concurrent else "clean"))
        if not concurrent:
            after = ex.data()
            assert after.startswith(before), "a capture changed bytes before its own"
            ex.undo.append((captured.id, before if existed else None, after))  # None: no file before
            reading = self.read(ex)
            mine = [h for h in reading.headings if h.id == captured.id]
            assert len(mine) == 1, mine
            assert set(mine[0].own_tags) == set(good), f"the capture's tags read as {mine[0].own_tags}, asked {good}"
            held = await self.index.read(lambda s: s.node(captured.id) is not None)
            assert captured.indexed is held is (mine[0].line not in reading.private_lines())

    async def burst(self, ex: Example, specs) -> None:
        if not ex.path.exists():
            await self.capture(ex, specs[0])
            specs = specs[1:]
        done = threading.Event()
        eol = ex.eol()
        first = on_new_line(ex, "")
        lines = [(first if i == 0 else b"") + f"- appended {ex.marker()}{eol}".encode() for i in range(APPENDED_LINES)]
        written: list[bytes] = []

        def appender():
            for line in lines:
                with open(ex.path, "ab") as fh:
                    fh.write(line)
                written.append(line)
                if done.wait(0.0005):
                    return

        last = ex.captures[-1] if ex.captures else None
        thread = threading.Thread(target=appender)
        thread.start()
        try:
            await asyncio.gather(*(self.capture(ex, s, concurrent=True) for s in specs))
        finally:
            done.set()
            await asyncio.to_thread(thread.join)
        ex.chunks += written
        ex.undo.clear()
        if last is not None and last.state == "clean":  # the appended lines may be under it
            last.state = "maybe"
        await self.index.index_paths([ex.rel])

    async def forget(self, ex: Example, which: int) -> None:
        if not ex.captures:
            return
        target = ex.captures[which % len(ex.captures)]
        before = ex.data()
        exact = ex.undo and ex.undo[-1][0] == target.id and ex.undo[-1][2] == before
        try:
            await self.memory.forget(target.id)
        except Conflict as exc:
            assert target.state != "clean", f"a forget of an untouched capture was refused: {exc}"
            assert ex.data() == before, "a refused forget wrote"
            return
        assert target.state != "typed", "a forget deleted a capture the user wrote into"
        ex.captures.remove(target)
        after = ex.data()
        assert target.id.encode() not in after
        if exact:
            restored = ex.undo[-1][1]
            assert ex.path.exists() is (restored is not None), "forget did not restore the file (or its absence)"
            assert after == (restored or b""), "forget did not restore the file byte for byte"
            ex.undo.pop()
        else:
            ex.undo.clear()

    async def forget_other(self, ex: Example, kind: str, reading: OrgFile | None) -> None:
        before = ex.data()
        unknown = "c0000000-0000-4000-8000-000000000000"
        status_unknown = await status_of(self.memory.forget(unknown))
        assert status_unknown == 404
        if kind == "user" and reading is not None:
            private = reading.private_lines()
            for h in reading.headings:
                if h.id in ex.user_ids:
                    status = await status_of(self.memory.forget(h.id))
                    assert status == (status_unknown if h.line in private else 409), (h, status)
        assert ex.data() == before

    async def user_heading(self, ex: Example, kind: str, has_id: bool) -> None:
        node_id = ex.new_id() if has_id else None
        if node_id:
            ex.user_ids.append(node_id)
        marker = ex.marker()
        ex.user_markers.add(marker)
        text = "\n".join(heading_lines(1, kind, node_id, marker, "User heading")) + "\n"
        chunk = on_new_line(ex, text)
        with open(ex.path, "ab") as fh:
            fh.write(chunk)
        ex.chunks.append(chunk)
        ex.undo.clear()
        await self.index.index_paths([ex.rel])

    async def user_text(self, ex: Example, reading: OrgFile | None) -> None:
        if reading is not None and reading.headings:
            last = next((c for c in ex.captures if c.id == reading.headings[-1].id), None)
            if last is not None:
                last.state = "typed"
        chunk = on_new_line(ex, f"Typed by hand {ex.marker()}.\n")
        with open(ex.path, "ab") as fh:
            fh.write(chunk)
        ex.chunks.append(chunk)
        ex.undo.clear()
        await self.index.index_paths([ex.rel])

    async def type_into(self, ex: Example, which: int) -> None:
        if not ex.captures:
            return
        target = ex.captures[which % len(ex.captures)]
        data, eol = ex.data(), ex.eol().encode()
        at = data.index(target.id.encode())
        at = data.index(b":END:", at)
        at = data.index(eol, at) + len(eol)
        chunk = f"Typed into the capture {ex.marker()}.".encode() + eol
        positions, pos = [], 0
        for c in ex.chunks:
            pos = data.find(c, pos)
            positions.append(pos)
            pos += len(c)
        ex.chunks.insert(sum(1 for p in positions if p < at), chunk)
        ex.path.write_bytes(data[:at] + chunk + data[at:])
        target.state = "typed"
        ex.undo.clear()
        await self.index.index_paths([ex.rel])


async def status_of(call) -> int:
    try:
        await call
    except NotFound:
        return 404
    except Conflict:
        return 409
    except BadRequest:
        return 400
    return 200


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """One event loop, index, Memory and Org process for the whole run."""
    root = tmp_path_factory.mktemp("write-properties")
    (root / "roam" / "daily").mkdir(parents=True)
    app_settings = load_settings(
        overrides={"roam_dir": root / "roam", "db_path": root / "index.sqlite3", "ollama_host": "http://127.0.0.1:9"},
        environ={},
    )
    loop = asyncio.new_event_loop()
    index = OracleIndex(app_settings)
    loop.run_until_complete(index.start())
    with OrgProcess(emacs_env(root)) as org:
        yield loop, Checker(org, index, Memory(index)), root / "roam", itertools.count(1)
    loop.run_until_complete(index.close())
    loop.close()


async def run_example(checker: Checker, roam: Path, number: int, spec: dict, steps: list) -> None:
    now = datetime.datetime(2001, 1, 1, 9, 30) + datetime.timedelta(days=number)
    rel = checker.memory.daily_rel(now.date())
    ex = Example(roam / rel, rel, now, itertools.count(number * 1000))
    if spec["exists"]:
        data = render_daily(spec, ex)
        ex.path.write_bytes(data)
        ex.chunks.append(data)
        ex.bom = data.startswith(BOM)
        await checker.index.index_paths([rel])
    reading = await checker.check(ex, "the daily as the user wrote it")
    for i, (op, arg) in enumerate(steps):
        what = f"after step {i} ({op})"
        if op == "capture":
            await checker.capture(ex, arg)
        elif op == "burst":
            await checker.burst(ex, arg)
        elif op == "forget":
            await checker.forget(ex, arg)
        elif op == "forget_other":
            await checker.forget_other(ex, arg, reading)
        elif op == "user_heading":
            if not ex.path.exists():
                continue
            await checker.user_heading(ex, *arg)
        elif op == "user_text":
            if not ex.path.exists():
                continue
            await checker.user_text(ex, reading)
        elif op == "type_into":
            await checker.type_into(ex, arg)
        reading = await checker.check(ex, what)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
@given(daily=daily_spec, steps=st.lists(step_spec, min_size=1, max_size=6))
def test_captures_and_forgets_keep_every_users_byte_and_how_org_reads_it(world, daily, steps):
    loop, checker, roam, numbers = world
    note(f"daily: {daily!r}")
    note(f"steps: {steps!r}")
    loop.run_until_complete(run_example(checker, roam, next(numbers), daily, steps))
