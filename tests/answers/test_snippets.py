"""Snippets are the note's readable lines (``answers/snippets.py``): table rules, block
delimiters and other keyword lines, drawers, property, planning and comment lines are
left out *before* the lines are joined (once joined, no client can tell a ``|---+---|``
or a ``#+begin_src`` from the prose around it). Every route's results are made by
``retrieval.to_results``, so /similar, /search, /suggest-links and the MCP tools agree.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from arcology_oracle.answers.search import search, similar_to_line, similar_to_node, similar_to_text
from arcology_oracle.answers.snippets import snippet_of

# What no snippet may show: a table rule, a keyword line (block delimiters among them),
# a drawer's or a property's line.
SYNTAX = re.compile(r"\|-|-\+-|#\+\w|:(?:PROPERTIES|LOGBOOK|END|ID|CREATED|ROAM_ALIASES):", re.IGNORECASE)

NOTE = """The starter is fed with rye flour and water.
| Day    | Starter (g) | Rye flour (g) |
|--------+-------------+---------------|
| Monday |          50 |            50 |
:LOGBOOK:
CLOCK: [2024-02-10 Sat 09:30]--[2024-02-10 Sat 10:00] =>  0:30
:END:
:SOURCE: a dream
#+caption: Feeding
#+begin_src python
print("rye")
#+end_src
# a comment line
SCHEDULED: <2024-02-12 Mon>
Use rye flour for a sluggish starter."""


def test_a_snippet_is_the_readable_lines_of_the_text():
    assert snippet_of(NOTE) == (
        "The starter is fed with rye flour and water. Day · Starter (g) · Rye flour (g) Monday · 50 · 50"
        ' print("rye") Use rye flour for a sluggish starter.'
    )


def test_unclosed_drawers_and_blocks_are_text_and_swallow_nothing():
    # Org reads an unclosed drawer or block as a line of text: the rest stays readable.
    assert snippet_of(":LOGBOOK:\nfirst line\n#+begin_src sh\nsecond line") == "first line second line"
    # A block's lines are not read as Org: a drawer-like line inside one hides nothing.
    assert snippet_of("#+begin_example\n:NOTE:\nkept\n#+end_example\nafter") == ":NOTE: kept after"
    # An indented "* " is a list item, not a heading line.
    assert snippet_of("  * a list item\n* Not a heading in a body") == "* a list item"


def test_a_search_window_is_read_where_it_lies_in_the_text():
    # FTS5's window is a verbatim piece of the text, with " … " where it is cut. Read in
    # place: a window that starts inside a drawer or at "src python" knows it.
    text = "Intro.\n:LOGBOOK:\nCLOCK: x\n:END:\n#+begin_src python\nprint(1)  # rye\n#+end_src\nthe rye flour words"
    assert snippet_of(text, " … x\n:END:\n#+begin_src python\nprint(1)  # rye\n#+end_src\nthe rye … ") == (
        "… print(1) # rye the rye …"
    )
    assert snippet_of(text, " … src python\nprint(1)  # rye … ") == "… print(1) # rye …"
    # A window of nothing readable (a rule, a drawer): the text's readable start.
    assert snippet_of(text, " … CLOCK: x … ") == "Intro. print(1) # rye the rye flour words"
    # Only syntax: nothing (the result then shows its heading).
    assert snippet_of("|---+---|\n#+begin_src\n:END:") == ""


def test_orgs_escape_comma_is_dropped_as_org_unescapes_code():
    # A capture escapes a line Org would read as structure with a comma (",#+title: ...",
    # ",* ..."), as Org escapes a block's lines: the reader's line is the text without
    # it, by org-unescape-code-in-string's rule (one comma, before "*" or "#+" at a
    # line's start, after blanks and other commas); any other comma stays.
    assert snippet_of(",#+title: Sourdough Baking") == "#+title: Sourdough Baking"
    assert snippet_of(",#+title: Sourdough Baking\nFeed it rye.") == "#+title: Sourdough Baking Feed it rye."
    assert snippet_of("  ,* not a heading\n,,#+twice\n,:END:\n, * spaced\na ,* mid") == (
        "* not a heading ,#+twice ,:END: , * spaced a ,* mid"
    )
    assert snippet_of("#+begin_src org\n,* in a block\n,#+begin_quote\n#+end_src") == "* in a block #+begin_quote"
    # In FTS5's window too, where it starts at the line's start (not mid-line).
    text = "Intro.\n,#+title: Sourdough Baking\nmore"
    assert snippet_of(text, " … ,#+title: Sourdough Baking\nmore") == "… #+title: Sourdough Baking more"
    assert snippet_of(text, ",#+title: Sourdough … ") == "#+title: Sourdough …"


def test_long_texts_are_read_only_as_far_as_the_line_goes():
    prose = "word " * 100_000
    line = snippet_of(":LOGBOOK:\nx\n:END:\n" + prose)
    assert len(line) == 160 and line.endswith("…") and line.startswith("word word")


def _assert_readable(results):
    assert results
    for r in results:
        assert not SYNTAX.search(r.snippet), (r.title, r.heading, r.snippet)


async def test_every_route_shows_readable_snippets(index, roam_dir):
    """The examples' notes hold tables, src blocks and drawers ("Starter maintenance" in
    sourdough-baking.org, emacs-config.org...): no route's snippet shows their syntax."""
    for line in (11, 22, 27):  # Starter maintenance, Feeding schedule, Reviving a sluggish starter
        _assert_readable((await similar_to_line(index, "sourdough-baking.org", line, 10, keep_all=True))[1])
    _assert_readable((await similar_to_node(index, "612f2887-9442-410d-b965-d901189a423b", 10, keep_all=True))[1])
    _assert_readable((await similar_to_node(index, "503d98df-0d40-4b47-bda2-cff8a8a7c397", 10, keep_all=True))[1])
    _assert_readable((await similar_to_text(index, (roam_dir / "sourdough-baking.org").read_text(), 10))[1])
    for query in ("rye flour starter", "starter", "use-package org-roam", "Monday", "org-roam", "feeding"):
        _assert_readable((await search(index, query, 10))[1])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["rye flour", "  water", "", "\t", "#+begin_src", "#+end_src", ":LOGBOOK:", ":END:",
                                 "| a | b |", "|---+---|", "* heading", "  * item", "# comment", "#tag",
                                 "SCHEDULED: <2024-01-01>", ":KEY: v", "x" * 90, "word " * 30, "\r",
                                 ",#+title: t", ",* h", "  ,,* h", ", x"]),
                max_size=12))
def test_a_heading_of_prose_alone_gets_the_line_every_heading_gets(lines):
    """snippet_of's short cut for prose (no line that may be syntax) gives exactly the
    line of the full reading."""
    from arcology_oracle.answers.snippets import LIMIT, one_line, readable

    text = "\n".join(lines)
    assert snippet_of(text) == one_line(readable(text, enough=LIMIT), LIMIT)


def test_opening_lines_never_closed_are_looked_past_once(monkeypatch):
    """A drawer or block closes only if an end line follows; that is found in one pass,
    not by a search to the end from each opening line (20,000 ``:smile:`` lines took 7 s)."""
    from arcology_oracle.answers import snippets

    scans = []

    class Counting:
        def __init__(self, pattern):
            self.pattern = pattern

        def __getattr__(self, name):
            method = getattr(self.pattern, name)
            if name in ("search", "finditer"):
                return lambda *a, **k: scans.append(name) or method(*a, **k)
            return method

    monkeypatch.setattr(snippets, "_DRAWER_END", Counting(snippets._DRAWER_END))
    if hasattr(snippets, "_BLOCK_END"):
        monkeypatch.setattr(snippets, "_BLOCK_END", Counting(snippets._BLOCK_END))
    text = ":smile:\n" * 2000 + "#+begin_src x\n" * 2000 + "The prose at last."
    assert snippet_of(text) == "The prose at last."  # none of those lines is a drawer's or a block's
    assert len(scans) <= 2
