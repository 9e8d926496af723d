"""What :func:`quiet` changes in a model's words, and what it leaves as written (the
real daemon and Org's reading: tests/http/test_model_text_writes.py)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arcology_oracle.notes import model_text
from arcology_oracle.notes.model_text import quiet, quiet_heading, read_as_quieted
from arcology_oracle.notes.org_escape import ZWSP


@pytest.mark.parametrize(
    "text",
    [
        "In the shell: run ls, then man: the manual.",  # words, no link
        "See [[id:abc][a note]], [[file:x.org::12][a file]], https://orgmode.org and <https://example.org>.",
        "Math: $\\frac{a}{b} + \\alpha^2$, \\(\\sum_i x_i\\), \\inputenc and \\writer are other words.",
        "Dated [2026-12-07 Mon] and a sexp <%%(diary-float t 1 1)> (left to inert).",
        "x <= 2026-12-07 and a<b>c",
        "\\begin{align*} a &= b \\end{align*}, \\begin {pmatrix} 1 \\end{pmatrix}, \\begingroup \\endinput",
    ],
)
def test_ordinary_text_is_left_as_written(text):
    assert quiet(text) == text


@pytest.mark.parametrize(
    ("text", "quieted"),
    [
        ("[[elisp:(kill-emacs)][see]]", f"[{ZWSP}[elisp{ZWSP}:(kill-emacs)][see]]"),
        ("[[Shell:ls]] eshell:ls <man:ls>", f"[{ZWSP}[Shell{ZWSP}:ls]] eshell{ZWSP}:ls <man{ZWSP}:ls>"),
        ("<2026-12-08 Tue 10:00>--<2026-12-09 Wed>", "[2026-12-08 Tue 10:00]--[2026-12-09 Wed]"),
        ("[<2026-12-08 Tue>]", f"[<{ZWSP}2026-12-08 Tue>]"),  # no [[2026-12-08 Tue]] link
        ("\\begin{filecontents*}{a.org} \\end{write}", f"\\{ZWSP}begin{{filecontents*}}{{a.org}} \\{ZWSP}end{{write}}"),
        ("\\UseName{write} \\ExplSyntaxOn", f"\\{ZWSP}UseName{{write}} \\{ZWSP}ExplSyntaxOn"),
        ("\\write18{ls} \\immediate\\input{x} $^^5c$", f"\\{ZWSP}write18{{ls}} \\{ZWSP}immediate\\{ZWSP}input{{x}} $^{ZWSP}^5c$"),
    ],
)
def test_what_runs_or_schedules_is_quieted(text, quieted):
    assert quiet(text) == quieted


@pytest.mark.parametrize(
    ("text", "quieted", "verbatim"),
    [
        ("<1-1-1 <2026-12-08 Tue>> and <2026-12-09 Wed <2026-12-10 Thu>>",
         "[1-1-1 [2026-12-08 Tue]] and [2026-12-09 Wed [2026-12-10 Thu]]",
         f"<{ZWSP}1-1-1 <{ZWSP}2026-12-08 Tue>> and <{ZWSP}2026-12-09 Wed <{ZWSP}2026-12-10 Thu>>"),
        # One ">" closes the inner date, and the outer one too once the inner keeps its "<".
        ("<2026-12-09 Wed <2026-12-10 Thu>", "<2026-12-09 Wed [2026-12-10 Thu]",
         f"<{ZWSP}2026-12-09 Wed <{ZWSP}2026-12-10 Thu>"),
    ],
)  # fmt: skip
def test_a_timestamp_inside_another_is_quieted_and_then_the_outer_one(text, quieted, verbatim):
    assert (quiet(text), quiet(text, verbatim=True)) == (quieted, verbatim)


def test_verbatim_text_keeps_its_brackets_and_latex():
    assert quiet("echo <2026-12-12 Sat> \\input{x}", verbatim=True) == f"echo <{ZWSP}2026-12-12 Sat> \\input{{x}}"


def test_read_as_quieted_reads_an_old_active_timestamp_as_the_new_inactive_one():
    old, new = "on <2026-12-08 Tue>", quiet("on <2026-12-08 Tue>")
    assert read_as_quieted(old) == read_as_quieted(new) == "on [2026-12-08 Tue]"


def test_quieting_twice_changes_nothing_more():
    # The oracle's words kept from a conversation (role "oracle") were quieted once already.
    text = "[[elisp:(f)][x]] shell:ls <2026-12-08 Tue> \\write18{ls} ^^5c"
    assert quiet(quiet(text)) == quiet(text) and quiet(quiet(text, verbatim=True), verbatim=True) == quiet(text, verbatim=True)


@pytest.mark.parametrize(
    ("title", "quieted"),
    [
        ("TODO [#A] Pay the rent", True),
        ("COMMENT the plan", True),
        ("[#B] call the bank", True),
        ("NEXT", True),
        ("AI safety reading list", True),  # written as a keyword is: Org cannot tell
        ("Plans for the week", False),
        ("the plan", False),
        ("2026 in review", False),
        # Words of a script without letter case are no keyword as one is written: a
        # title in Japanese or Chinese keeps its first character where it was.
        ("東京の旅行の計画", False),
        ("日本語 notes", False),
    ],
)
def test_a_heading_title_that_org_could_read_as_its_state_is_quieted(title, quieted):
    assert quiet_heading(title) == (ZWSP + title if quieted else title)


# Org 9.5's org-link-bracket-re (ol.el), as it reads a bracket link's target; _LINK_RE
# takes each run of backslashes whole instead of splitting it every way it can.
ORG_BRACKET_LINK = re.compile(r"\[\[(?P<target>(?:[^\]\[\\]|\\(?:\\\\)*[\]\[]|\\+[^\]\[])+)\](?=[\]\[])")


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="a\\\\\\[]\n:", max_size=16))
def test_a_bracket_link_is_read_where_and_as_org_reads_it(text):
    ours = [(m.span(), m["target"]) for m in model_text._LINK_RE.finditer(text) if m["target"] is not None]
    org = [(m.span(), m["target"]) for m in ORG_BRACKET_LINK.finditer(text)]
    assert ours == org


def test_a_run_of_backslashes_after_brackets_is_read_at_once():
    # Org's own pattern split the run every way before giving up: "[[" then 30
    # backslashes took 0.17 s, 60 would take years (this test would not end).
    text = "[[" + "\\" * 60 + "x " + "[[" + "\\" * 4000
    assert quiet(text) == text


def test_an_angle_link_over_lines_with_a_quote_in_its_path_is_quieted():
    # Org reads an angle link on over lines (org-link-angle-re), and its HTML export writes
    # the path into href as it is: the quote on the second line gave the link attributes.
    text = 'see <file:a\n "onmouseover="alert(1)> now'
    assert quiet(text) == text.replace("file:", "file" + ZWSP + ":")


@pytest.mark.parametrize(
    ("text", "quieted"),
    [
        ("file:" * 40_000, True),  # each a link to quiet, whose path ran to the end
        ("x/info:a" * 25_000, True),
        ('"' + "help:" * 40_000, True),  # a quote: each path was looked at to its end
        ('"' + "<https:a\n" * 22_000, False),  # an angle link over lines, to the end (no quote in it)
    ],
    ids=["files", "infos", "quoted-plain", "quoted-angle"],
)
def test_a_long_run_of_links_is_quieted_in_one_reading(text, quieted):
    # Each link's path was read to the end of the run, for each link in it: 200,000
    # characters took minutes (this test would not end).
    written = quiet(text)
    assert written.replace(ZWSP, "") == text and (ZWSP in written) == quieted
