"""Property tests (issue 9): the reader never raises and its line numbers always hold.

Generated org text is mutated the ways real files are damaged: unbalanced drawers,
invalid dates, random bytes, deep nesting, very long lines, NUL bytes, UTF-16, CRLF/CR,
src blocks full of ``*`` lines.
"""

from __future__ import annotations

import logging
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arcology_oracle.notes.chunking import chunk_heading
from arcology_oracle.notes.records import ParsedFile
from orgparse.node import parse_heading_tags

from arcology_oracle.notes.org_syntax import HEADING_LINE_RE, decode_org_bytes, split_heading_tags, split_lines
from arcology_oracle.notes.reader import read_org_bytes

SECRET = "qqsecretqq"

PROPERTY_SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

words = st.sampled_from(
    ["flour", "borrow", "tomato", "index", "[[id:abc][desc]]", "[[https://x.y]]", "=code=", "*bold*",
     ":tag:", "::", "|", "<<target>>", "日本語", "émigré", "\t", "\x0c", "\u2028", "\x00", "\r", "-"]
)  # fmt: skip
stamps = st.sampled_from(
    ["<2024-03-01 Fri>", "<2025-02-30 Sun>", "[2024-01-01 Mon 25:00]", "<2024-13-01>", "[0000-00-00]",
     "<2024-02-29 Thu 10:00-11:00 +1w>", "<2024-01-01>--<2023-01-01>", "[99999-1-1 10:00]"]
)  # fmt: skip
text_line = st.lists(st.one_of(words, stamps, st.text(max_size=12)), max_size=12).map(" ".join)


@st.composite
def heading_line(draw) -> str:
    stars = "*" * draw(st.integers(1, 40))
    todo = draw(st.sampled_from(["", "TODO ", "DONE "]))
    tags = draw(st.sampled_from(["", " :a:", " :a:b:", " :crypt:", " :weird tag:"]))
    return f"{stars} {todo}{draw(text_line)}{tags}"


special_lines = st.sampled_from(
    [":PROPERTIES:", ":END:", ":ID: 11111111-2222-4333-8444-555555555555", ":ROAM_EXCLUDE: t",
     ":ROAM_ALIASES: \"a b\" c \"unterminated", ":Effort: 1:30", ":Effort: soon", ":LOGBOOK:",
     "CLOCK: [2024-01-01 Mon 10:00]--[2024-01-01 Mon 11:00] =>  1:00",
     "CLOCK: [2024-02-30 Fri 10:00]--[2024-02-30 Fri 11:00] =>  1:00",
     "SCHEDULED: <2024-02-31 Sat>", "DEADLINE: <2024-04-01 Mon>",
     '- State "DONE"       from "TODO"       [2024-02-31 Sat 10:00]',
     "#+begin_src org", "#+end_src", "* inside a src block", "** also", "#+title: T", "#+filetags: :x:",
     "#+TODO: A B | C", "#+TODO: |", "| a | b |", "|---+---|", "-----BEGIN PGP MESSAGE-----",
     "\\begin{equation}", "*", "**", "* ", "*\t", " * not a heading", ""]
)  # fmt: skip


@st.composite
def org_document(draw) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 40))):
        kind = draw(st.integers(0, 9))
        if kind <= 2:
            parts.append(draw(heading_line()))
        elif kind <= 5:
            parts.append(draw(special_lines))
        elif kind == 6:
            parts.append("#+begin_src org\n" + "\n".join(draw(st.lists(heading_line(), max_size=5))) + "\n#+end_src")
        elif kind == 7:
            parts.append(draw(st.sampled_from(["x", "* ", "<2024-01-01 Mon> "])) * draw(st.integers(100, 5_000)))
        else:
            parts.append(draw(text_line))
    return "\n".join(parts) + draw(st.sampled_from(["", "\n", "\n\n"]))


@st.composite
def org_bytes(draw) -> bytes:
    text = draw(org_document())
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    text = text.replace("\n", newline)
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-32", "latin-1"]))
    data = text.encode(encoding, errors="replace")
    for _ in range(draw(st.integers(0, 3))):
        action = draw(st.integers(0, 2))
        if not data:
            break
        at = draw(st.integers(0, len(data)))
        if action == 0:
            data = data[:at] + draw(st.binary(max_size=16)) + data[at:]
        elif action == 1:
            data = data[:at] + data[at + draw(st.integers(1, 8)) :]
        else:
            data = data[:at]
    return data


def check(parsed: ParsedFile, data: bytes) -> None:
    lines = split_lines(decode_org_bytes(data))
    previous_end = 0
    for h in parsed.headings:
        assert 1 <= h.start_line <= h.end_line <= len(lines), (h.start_line, h.end_line, len(lines))
        assert h.start_line > previous_end  # in file order, never overlapping
        previous_end = h.end_line
        if h.level > 0:
            line = lines[h.start_line - 1]
            assert HEADING_LINE_RE.match(line), line
            assert line.startswith("*" * h.level + " ")
        else:
            assert h.start_line == 1
        h.content_hash()  # every string encodes as UTF-8
        for chunk in chunk_heading(h, parsed.title, max_chars=300, overlap=60):
            chunk.text.encode("utf-8")
    for problem in parsed.problems:
        assert isinstance(problem, str) and problem


@pytest.fixture(autouse=True)
def quiet_reader():
    """The reader warns once per problem; thousands of examples would flood the output."""
    logger = logging.getLogger("arcology_oracle.notes.reader")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


@PROPERTY_SETTINGS
@given(data=org_bytes())
def test_never_raises_and_lines_hold(data):
    check(read_org_bytes(data, "gen/file.org"), data)


@PROPERTY_SETTINGS
@given(data=st.binary(max_size=2000))
def test_random_bytes(data):
    check(read_org_bytes(data, "random.org"), data)


@PROPERTY_SETTINGS
@given(doc=org_document(), secret_at=st.lists(st.integers(0, 1000), max_size=4))
def test_private_text_never_leaks(doc, secret_at):
    lines = doc.split("\n")
    for at in sorted(secret_at, reverse=True):
        at = min(at, len(lines))
        # A private heading whose own body holds the secret (a following "* " line would
        # legitimately end the subtree, so the secret comes right after the heading).
        lines[at:at] = [f"* Private {at} :private:", f"{SECRET} body", f"** child {SECRET}"]
    text = "\n".join(lines)
    parsed = read_org_bytes(text.encode("utf-8"), "p.org")
    check(parsed, text.encode("utf-8"))
    for h in parsed.headings:
        assert SECRET not in h.body and SECRET not in h.text and SECRET not in h.title


# orgparse's rule (RE_HEADING_TAGS) with Org's tag characters [[:alnum:]_@#%] (org-tag-re).
_ORG_HEADING_TAGS = re.compile(r"(.*?)\s*:([\w@#%:]+):\s*$")


@settings(max_examples=500, deadline=None)
@given(heading=st.text(alphabet=" \t:a@_1é-\u3000#%", max_size=14))
def test_tag_split_matches_orgparse_with_orgs_tag_characters(heading):
    m = _ORG_HEADING_TAGS.search(heading)
    assert split_heading_tags(heading) == ((m[1], m[2].split(":")) if m else (heading, []))
    if "#" not in heading and "%" not in heading:
        assert split_heading_tags(heading) == parse_heading_tags(heading)


def test_ten_thousand_messy_headings():
    parts = []
    for i in range(10_000):
        parts.append("*" * (1 + i % 7) + f" H{i}" + (" :private:" if i % 501 == 0 else ""))
        if i % 3 == 0:
            parts.append(":PROPERTIES:\n:ID: id-%d\n:END:" % i)
        if i % 97 == 0:
            parts.append("#+begin_src org\n* fake\n#+end_src")
        if i % 499 == 0:
            parts.append("bad <2025-02-30 Sun> and CLOCK: [2024-01-01 Mon 25:00]")
        if i % 251 == 0:
            parts.append(":PROPERTIES:\nunclosed")
        parts.append(f"body {i}\x00")
    data = "\r\n".join(parts).encode("utf-8")
    parsed = read_org_bytes(data, "many.org")
    check(parsed, data)
    assert len(parsed.headings) > 9_000
    assert parsed.problems
