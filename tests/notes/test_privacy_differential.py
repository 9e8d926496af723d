"""Differential property test: the indexer's reading and the cleaning of client text
never disagree about what is private (issue 14, item 3).

Hypothesis writes org text: nested headings (levels may jump) with tags (``private``,
``crypt``, a configured ``secret``, decoys, tags with ``#``, ``%`` and ``@``), property
drawers with ``ROAM_EXCLUDE`` set to ``t``, ``nil``, ``NIL``, empty or ``yes`` at file and
heading level, PGP blocks, ``#+filetags`` in the preamble or in any heading's body (some
inside src blocks, where Org does not read them, some inside quote blocks, where it
does), body lines. Every title and body line carries its own marker word. The drawers'
``:PROPERTIES:``/``:END:`` lines and their keys come in any letter case (upper, lower,
capitalised, alternating), which Org 9.5.5 and org-roam 2.2.1 read alike.

Checked line by line (marker by marker): the markers left by
:func:`~arcology_oracle.notes.cleaning.strip_private` are exactly the markers in the records
:func:`~arcology_oracle.notes.reader.read_org_bytes` keeps for the index (nothing the
indexer drops survives the cleaning; the cleaning drops nothing the indexer keeps), and
both are what an independent model of the rules (written here from Org's and org-roam
2.2's behaviour) says is visible.
"""

from __future__ import annotations

import os
from datetime import timedelta
import re
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arcology_oracle.notes.cleaning import strip_private
from arcology_oracle.notes.reader import read_org_bytes

PRIVATE_TAGS = ("private", "secret")
HIDDEN = {"private", "secret", "crypt"}
TAGS = ("private", "Private", "crypt", "secret", "#health", "%fin", "a@b", "x#y", "work", "privateer", "%private")
EXCLUDE_VALUES = (None, None, None, "t", "nil", "NIL", "", "yes", " nil ")
FILETAGS_PLACES = (None, None, "plain", "indented", "src", "quote", "example")
EXAMPLES = int(os.environ.get("ARCOLOGY_DIFFERENTIAL_EXAMPLES", "200"))
MARKER = re.compile(r"mk[a-j]{4}z")


def _alternating(word: str) -> str:
    return "".join(c.upper() if i % 2 else c.lower() for i, c in enumerate(word))


# How a drawer's words are written: Org matches them in any letter case.
CASINGS = (str.upper, str.upper, str.lower, str.capitalize, _alternating)
# (":PROPERTIES:", ":END:", property key) casings of one drawer.
casing_spec = st.tuples(*[st.sampled_from(CASINGS)] * 3)

filetags_spec = st.tuples(st.sampled_from(FILETAGS_PLACES), st.lists(st.sampled_from(TAGS), min_size=1, max_size=2))
heading_spec = st.fixed_dictionaries(
    {
        "level": st.integers(1, 4),
        "tags": st.lists(st.sampled_from(TAGS), max_size=3),
        "exclude": st.sampled_from(EXCLUDE_VALUES),
        "has_id": st.booleans(),
        "pgp": st.integers(0, 6).map(lambda n: n == 0),
        "body": st.integers(0, 2),
        "filetags": filetags_spec,
        "casing": casing_spec,
    }
)
doc_spec = st.fixed_dictionaries(
    {
        "file_exclude": st.sampled_from(EXCLUDE_VALUES),
        "title": st.booleans(),
        "preamble": st.integers(0, 2),
        "preamble_pgp": st.integers(0, 8).map(lambda n: n == 0),
        "filetags": filetags_spec,
        "headings": st.lists(heading_spec, max_size=8),
        "casing": casing_spec,
    }
)


@dataclass
class Doc:
    lines: list[str] = field(default_factory=list)
    file_tags: list[str] = field(default_factory=list)  # as Org collects them
    n: int = 0

    def marker(self) -> str:
        self.n += 1
        return "mk" + "".join(chr(ord("a") + int(d)) for d in f"{self.n:04d}") + "z"

    def filetags(self, place: str | None, tags: list[str]) -> None:
        if place is None:
            return
        line = ("  " if place == "indented" else "") + "#+filetags: :" + ":".join(tags) + ":"
        if place in ("src", "example", "quote"):
            self.lines += [f"#+begin_{place}", line, f"#+end_{place}"]
        else:
            self.lines.append(line)
        if place not in ("src", "example"):  # not keywords inside those blocks (Org 9.5)
            self.file_tags += tags


def drawer(casing, props: list[tuple[str, str]]) -> list[str]:
    """A property drawer holding ``props`` (key, value), its words in ``casing``."""
    start, end, key = casing
    lines = [f":{key(k)}: {v}".rstrip() for k, v in props]
    return [f":{start('properties')}:", *lines, f":{end('end')}:"]


def excludes(value: str | None) -> bool:
    """org-roam 2.2: ROAM_EXCLUDE set to anything but nil."""
    return value is not None and value.strip() != "nil"


def hidden(tags) -> bool:
    return any(t.lower() in HIDDEN for t in tags)


def build(spec) -> tuple[str, set[str], set[str]]:
    """The org text, every marker, and the markers the model says are visible."""
    doc = Doc()
    every: set[str] = set()
    # (markers, own tags, own exclusion, level) per record; index 0 is the text before the first heading.
    records: list[tuple[set[str], list[str], bool, int]] = []
    preamble: set[str] = set()
    if spec["file_exclude"] is not None or spec["title"]:
        props = [("ID", "f0000000-0000-4000-8000-000000000000")]
        if spec["file_exclude"] is not None:
            props.append(("ROAM_EXCLUDE", spec["file_exclude"]))
        doc.lines += drawer(spec["casing"], props)
    if spec["title"]:
        m = doc.marker()
        preamble.add(m)
        doc.lines.append(f"#+title: Title {m}")
    doc.filetags(*spec["filetags"])
    for _ in range(spec["preamble"]):
        m = doc.marker()
        preamble.add(m)
        doc.lines.append(f"Preamble {m} text.")
    preamble_pgp = spec["preamble_pgp"] and bool(doc.lines)
    if preamble_pgp:
        m = doc.marker()
        preamble.add(m)
        doc.lines += ["-----BEGIN PGP MESSAGE-----", f"hQEMA{m}", "-----END PGP MESSAGE-----"]
    has_preamble = bool(doc.lines)
    for h in spec["headings"]:
        title = doc.marker()
        mine = {title}
        doc.lines.append("*" * h["level"] + f" Title {title}" + (f" :{':'.join(h['tags'])}:" if h["tags"] else ""))
        props = [("ID", "10000000-0000-4000-8000-000000000000")] if h["has_id"] else []
        if h["exclude"] is not None:
            props.append(("ROAM_EXCLUDE", h["exclude"]))
        if props:
            doc.lines += drawer(h["casing"], props)
        for _ in range(h["body"]):
            m = doc.marker()
            mine.add(m)
            doc.lines.append(f"Body {m} line.")
        doc.filetags(*h["filetags"])
        if h["pgp"]:
            m = doc.marker()
            mine.add(m)
            doc.lines += ["-----BEGIN PGP MESSAGE-----", f"hQEMA{m}", "-----END PGP MESSAGE-----"]
        records.append((mine, h["tags"], excludes(h["exclude"]) or h["pgp"], h["level"]))
        every |= mine
    every |= preamble

    visible: set[str] = set()
    if hidden(doc.file_tags) or excludes(spec["file_exclude"]):
        return "\n".join(doc.lines) + "\n", every, visible
    if has_preamble and not preamble_pgp:
        visible |= preamble
    stack: list[tuple[int, bool, list[str]]] = []  # (level, private, inherited tags)
    for mine, tags, own_exclusion, level in records:
        while stack and stack[-1][0] >= level:
            stack.pop()
        inherited = [*(stack[-1][2] if stack else doc.file_tags), *tags]
        private = (bool(stack) and stack[-1][1]) or own_exclusion or hidden(inherited)
        stack.append((level, private, inherited))
        if not private:
            visible |= mine
    return "\n".join(doc.lines) + "\n", every, visible


# A generous per-example deadline (a few ms is typical): catches a super-linear reader
# without failing on a loaded machine.
@settings(max_examples=EXAMPLES, deadline=timedelta(seconds=2), suppress_health_check=[HealthCheck.too_slow])
@given(spec=doc_spec)
def test_cleaning_and_indexer_keep_the_same_lines(spec):
    text, every, visible = build(spec)
    parsed = read_org_bytes(text.encode("utf-8"), "gen.org", frozenset(PRIVATE_TAGS), log_problems=False)
    indexed = set()
    for h in parsed.headings:
        indexed |= set(MARKER.findall(h.title + "\n" + h.body))
    cleaned_text = strip_private(text, PRIVATE_TAGS)
    cleaned = set(MARKER.findall(cleaned_text))
    assert cleaned - indexed == set(), "the cleaning keeps lines the index leaves out"
    assert indexed - cleaned == set(), "the cleaning drops lines the index keeps"
    assert indexed == visible, (sorted(indexed - visible), sorted(visible - indexed))
    # Nothing but the marked lines' own words is lost or added: each kept line is a line of the text.
    source_lines = set(text.split("\n"))
    assert all(line in source_lines for line in cleaned_text.split("\n") if line)
    assert every >= indexed
