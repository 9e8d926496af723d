"""A title derived from captured text is the text's first words as Emacs shows them:
Emacs breaks a line at a line feed only (a carriage return too, as the file's line
endings are read), never at U+2028, U+2029 or U+0085, which it shows inside the line.
Through the real daemon and a real daily, read back by batch Emacs's Org."""

from __future__ import annotations

import re

import pytest

from tests.emacs_batch import emacs_env
from tests.index.test_write_attacks import post
from tests.index.test_write_refusals import daily_of
from tests.org_reading import OrgProcess

HEAD = b"#+title: Today\n* Mine\nkept as it is\n"


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Plan\x85#+begin_src sh then more", "Plan #+begin_src sh then more"),
        ("Hello\u2028* world and more", "Hello * world and more"),
        ("Talk\u2029:PROPERTIES:\u2029:ID: x\u2029:END:\u2029after", "Talk :PROPERTIES: :ID: x :END: after"),
        ("See\u2028#+title: Other\nsecond line", "See #+title: Other second line"),
    ],
    ids=["nel-block", "line-separator-heading", "paragraph-separator-drawer", "line-separator-keyword"],
)
async def test_a_title_from_the_text_is_not_cut_where_emacs_breaks_no_line(daemon, roam_dir, tmp_path, text, title):
    daily = daily_of(roam_dir)
    daily.write_bytes(HEAD)
    status, answer = await post(daemon, "/memorize", {"text": text})
    assert status == 200, answer
    written = daily.read_bytes()
    expected = (
        re.escape(HEAD + b"* " + title.encode() + b"\n:PROPERTIES:\n:ID:       " + answer["id"].encode())
        + rb"\n:CREATED:  \[\d{4}-\d\d-\d\d [A-Z][a-z]{2} \d\d:\d\d\]\n"
        + re.escape(b":CAPTURED_BY: arcology-oracle\n")
        + rb":CAPTURE_HASH: [0-9a-f]{64}\n"
        + re.escape(b":END:\n" + text.encode() + b"\n")
    )
    assert re.fullmatch(expected, written, re.DOTALL), written  # the text is written whole
    with OrgProcess(emacs_env(tmp_path)) as org:
        headings = org.read(daily).headings
    assert [(h.title, h.id) for h in headings] == [("Mine", None), (title, answer["id"])]
