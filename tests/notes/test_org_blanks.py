"""A planning line and a property drawer's first line are indented, and that line ended,
by spaces and tabs only, as Org has them (``org-planning-line-re``,
``org-property-drawer-re``: ``[ \\t]``): indented by a no-break space (U+00A0), a line
separator (U+2028), a form feed or a vertical tab, the line is text to Org, so no
property drawer follows it, and the reader reads no ID or property from it either, and
keeps the line in the body. Each note is compared with how batch Emacs's Org reads it.
A ``ROAM_EXCLUDE`` in such a drawer still leaves the heading out (the safe side)."""

from __future__ import annotations

import pytest

from arcology_oracle.notes.reader import read_org_bytes
from tests.emacs_batch import emacs_env
from tests.org_reading import OrgProcess

PLANNED = "* Planned\n{}SCHEDULED: <2024-01-01 Mon>\n:PROPERTIES:\n:ID: {}\n:END:\nplanned words\n"
NOTES = {
    "nbsp-planning": PLANNED.format("\u00a0", "b1000000-0000-4000-8000-000000000001"),
    "line-separator-planning": PLANNED.format("\u2028", "b1000000-0000-4000-8000-000000000002"),
    "form-feed-planning": PLANNED.format("\x0c", "b1000000-0000-4000-8000-000000000003"),
    "form-feed-drawer": "* Mine\n\x0c:PROPERTIES:\n:ID: b1000000-0000-4000-8000-000000000004\n:END:\nwords\n",
    "vertical-tab-drawer": "* Mine\n:PROPERTIES:\x0b\n:ID: b1000000-0000-4000-8000-000000000005\n:END:\nwords\n",
    "form-feed-file-drawer": "\x0c:PROPERTIES:\n:ID: b1000000-0000-4000-8000-000000000006\n:END:\n#+title: Top\n* Under\n",
    "nbsp-line-before-file-drawer": "\u00a0\n:PROPERTIES:\n:ID: b1000000-0000-4000-8000-000000000009\n:END:\n#+title: T\n",
    "nbsp-comment-before-file-drawer": "\u00a0# note\n:PROPERTIES:\n:ID: b1000000-0000-4000-8000-000000000010\n:END:\n#+title: T\n",
    # What Org does read: a tab or spaces before either.
    "tab-planning": PLANNED.format("\t ", "b1000000-0000-4000-8000-000000000007"),
    "tab-comment-before-file-drawer": "\t# note\n \t\n:PROPERTIES:\n:ID: b1000000-0000-4000-8000-000000000011\n:END:\n",
    "comment-before-file-drawer": "# note\n\t#\n:PROPERTIES:\n:ID: b1000000-0000-4000-8000-000000000012\n:END:\n",
    # Nor anything but comments before the file's drawer (org-get-property-block skips only those).
    "blank-before-file-drawer": "\n:PROPERTIES:\n:ID: b1000000-0000-4000-8000-000000000013\n:END:\n",
    "keyword-before-file-drawer": "#+title: T\n:PROPERTIES:\n:ID: b1000000-0000-4000-8000-000000000014\n:END:\n",
    "hash-word-before-file-drawer": "#foo\n:PROPERTIES:\n:ID: b1000000-0000-4000-8000-000000000015\n:END:\n",
    "indented-drawer": "* Mine\n \t:PROPERTIES: \t\n:ID: b1000000-0000-4000-8000-000000000008\n:END:\nwords\n",
}


@pytest.fixture(scope="module")
def org_read(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("org-blanks")
    with OrgProcess(emacs_env(tmp)) as org:
        found = {}
        for name, text in NOTES.items():
            (tmp / f"{name}.org").write_bytes(text.encode())
            found[name] = org.read(tmp / f"{name}.org")
        yield found


@pytest.mark.parametrize("name", NOTES)
def test_the_reader_reads_the_ids_org_reads(name, org_read):
    org = org_read[name]
    parsed = read_org_bytes(NOTES[name].encode(), f"{name}.org", log_problems=False)
    mine = [(h.level, h.title, h.own_id) for h in parsed.headings if h.level > 0]
    assert (parsed.file_id, mine) == (org.top.id, [(h.level, h.title, h.id) for h in org.headings])


def test_a_planning_line_org_reads_as_text_stays_in_the_body():
    text = "* Plan\n\u00a0SCHEDULED: the boathouse keys are with Ada\nmore\n"
    (plan,) = [h for h in read_org_bytes(text.encode(), "plan.org", log_problems=False).headings if h.level]
    assert "boathouse keys are with Ada" in plan.body and "boathouse" in plan.text


def test_an_exclude_in_a_drawer_org_does_not_read_still_leaves_the_heading_out():
    text = "* Secret\n\u00a0SCHEDULED: <2024-01-01 Mon>\n:PROPERTIES:\n:ROAM_EXCLUDE: t\n:END:\nzebra words\n* Open\nok\n"
    parsed = read_org_bytes(text.encode(), "secret.org", log_problems=False)
    assert [h.title for h in parsed.headings if h.level] == ["Open"]
    assert all("zebra" not in h.text for h in parsed.headings)


def test_an_exclude_in_a_file_drawer_below_a_keyword_still_leaves_the_file_out():
    text = "#+title: T\n:PROPERTIES:\n:ROAM_EXCLUDE: t\n:END:\nzebra words\n* Under\nzebra too\n"
    parsed = read_org_bytes(text.encode(), "secret.org", log_problems=False)
    assert all("zebra" not in h.text for h in parsed.headings), parsed.headings
