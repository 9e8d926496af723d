"""Property drawers in any letter case (``:properties:`` ... ``:end:``, ``:Properties:``,
lower-case keys): Org 9.5.5 (``org-entry-get``) and org-roam 2.2.1 read their ID, aliases,
refs and ROAM_EXCLUDE like upper-case ones; so does the reader, at file and heading level.

The last test runs org-roam's own ``org-roam-db-sync`` in batch Emacs over the same notes
and compares its nodes, aliases, refs and tags with the reader's.
"""

from __future__ import annotations

import json

from arcology_oracle.notes.cleaning import strip_private
from arcology_oracle.notes.reader import read_org_bytes

from tests.emacs_batch import WITH_PACKAGES, emacs_env, require_packages, run_emacs

# File name -> text. IDs, aliases and refs in drawers of every case the checks above cover.
NOTES = {
    "lower.org": (
        ":properties:\n:ID: dc000000-0000-4000-8000-000000000001\n"
        ':ROAM_ALIASES: "Lower alias" other\n:ROAM_REFS: https://example.org/lower\n:end:\n'
        "#+title: Lower\n#+filetags: :ftag:\n\nlowerpreamble words\n"
        "* Child :htag:\n:properties:\n:id: dc000000-0000-4000-8000-000000000011\n"
        ":roam_aliases: kid\n:end:\nchildbody words\n"
    ),
    "mixed.org": (
        "  :Properties:  \n:Id: dc000000-0000-4000-8000-000000000002\n  :End:\n#+title: Mixed\n"
        "* Planned\nSCHEDULED: <2024-01-01 Mon>\n:pRoPeRtIeS:\n:ID: dc000000-0000-4000-8000-000000000012\n"
        ":eNd:\nplannedbody\n"
    ),
    "upper-end.org": ":PROPERTIES:\n:ID: dc000000-0000-4000-8000-000000000003\n:end:\n#+title: Upper end\n",
    "lower-end.org": ":properties:\n:ID: dc000000-0000-4000-8000-000000000004\n:END:\n#+title: Lower start\n",
    "excluded.org": (
        ":properties:\n:ID: dc000000-0000-4000-8000-000000000005\n:ROAM_EXCLUDE: t\n:end:\n#+title: Secret\n\n"
        "secretzebra words\n* Under\nsecretyak words\n"
    ),
    "excluded-heading.org": (
        ":PROPERTIES:\n:ID: dc000000-0000-4000-8000-000000000006\n:END:\n#+title: Some hidden\n"
        "* Hidden\n:properties:\n:id: dc000000-0000-4000-8000-000000000016\n:roam_exclude: t\n:end:\n"
        "hiddenokapi words\n** Below\nhiddenibis words\n* Shown\nshownkiwi words\n"
    ),
    # Unicode look-alikes are not folded by Emacs (dotless i): no drawer, no ID.
    "lookalike.org": ":propertıes:\n:ID: dc000000-0000-4000-8000-000000000007\n:end:\n#+title: Lookalike\n",
}


def read(name: str):
    return read_org_bytes(NOTES[name].encode(), name, log_problems=False)


def test_file_and_heading_drawers_in_lower_case():
    parsed = read("lower.org")
    assert parsed.file_id == "dc000000-0000-4000-8000-000000000001" and parsed.problems == []
    top, child = parsed.headings
    assert top.aliases == ("Lower alias", "other") and top.refs == ("https://example.org/lower",)
    assert top.tags == ("ftag",) and ":properties:" not in top.body and "lowerpreamble" in top.text
    assert child.own_id == child.node_id == "dc000000-0000-4000-8000-000000000011"
    assert child.aliases == ("kid",) and child.tags == ("ftag", "htag")
    assert child.body.strip() == "childbody words"  # the drawer is not body text
    assert child.properties == {"ID": "dc000000-0000-4000-8000-000000000011", "ROAM_ALIASES": "kid"}


def test_mixed_case_indented_drawers_and_after_a_planning_line():
    parsed = read("mixed.org")
    assert parsed.file_id == "dc000000-0000-4000-8000-000000000002"
    assert parsed.headings[1].own_id == "dc000000-0000-4000-8000-000000000012"
    assert parsed.headings[1].body.strip() == "plannedbody"
    assert read("upper-end.org").file_id == "dc000000-0000-4000-8000-000000000003"
    assert read("lower-end.org").file_id == "dc000000-0000-4000-8000-000000000004"


def test_roam_exclude_in_a_lower_case_drawer_excludes():
    parsed = read("excluded.org")
    assert parsed.headings == [] and parsed.file_id is None
    assert strip_private(NOTES["excluded.org"]) == ""
    kept = read("excluded-heading.org").headings
    assert [h.title for h in kept] == ["Some hidden", "Shown"]
    cleaned = strip_private(NOTES["excluded-heading.org"])
    assert "shownkiwi" in cleaned and "hiddenokapi" not in cleaned and "hiddenibis" not in cleaned


def test_unicode_lookalikes_are_no_drawer():
    parsed = read("lookalike.org")
    assert parsed.file_id is None and ":propertıes:" in parsed.headings[0].body


# org-roam's tables, as JSON lines, after a sync of the notes directory.
SYNC = """
(progn
  (require 'org-roam)
  (setq org-roam-directory (expand-file-name "notes") org-roam-db-location (expand-file-name "roam.db"))
  (org-roam-db-sync)
  (dolist (table '(nodes aliases refs tags))
    (dolist (row (org-roam-db-query
                  (pcase table
                    ('nodes [:select [id title] :from nodes])
                    ('aliases [:select [node-id alias] :from aliases])
                    ('refs [:select [node-id type ref] :from refs])
                    ('tags [:select [node-id tag] :from tags]))))
      (princ (format "ROW %s %s\\n" table (json-encode row))))))
"""


async def test_the_reader_finds_the_nodes_org_roam_finds(tmp_path):
    require_packages("org-roam")
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text)
    status, out = await run_emacs(["--eval", WITH_PACKAGES, "--eval", SYNC], env=emacs_env(tmp_path), cwd=tmp_path)
    assert status == 0, out
    roam: dict[str, set] = {"nodes": set(), "aliases": set(), "refs": set(), "tags": set()}
    for line in out.splitlines():
        if line.startswith("ROW "):
            _, table, row = line.split(" ", 2)
            roam[table].add(tuple(json.loads(row)))
    ours: dict[str, set] = {"nodes": set(), "aliases": set(), "refs": set(), "tags": set()}
    for name in NOTES:
        for h in read(name).headings:
            if h.own_id:
                ours["nodes"].add((h.own_id, h.title))
                ours["aliases"] |= {(h.own_id, a) for a in h.aliases}
                # org-roam splits a URL ref into its type and the rest.
                ours["refs"] |= {(h.own_id, *r.split(":", 1)) for r in h.refs}
                ours["tags"] |= {(h.own_id, t) for t in h.tags}
    assert len(roam["nodes"]) == 7, out  # the sync saw the notes
    assert ours == roam


def test_every_drawer_line_pattern_folds_ascii_letters_only():
    # The reader, conversations and capture all recognise drawers by these: one rule, Org's.
    from arcology_oracle.notes.org_syntax import (
        DRAWER_END_RE,
        PROPERTIES_IN_RE,
        PROPERTIES_START_RE,
    )

    for pattern, line in ((PROPERTIES_START_RE, ":Properties:"), (PROPERTIES_IN_RE, ":properties:"),
                          (DRAWER_END_RE, ":end:"), (DRAWER_END_RE, " :End: ")):  # fmt: skip
        assert pattern.search(line)
    for pattern, line in ((PROPERTIES_START_RE, ":propertıes:"), (PROPERTIES_IN_RE, ":propertıes:"),
                          (PROPERTIES_START_RE, ":PROPERTIEſ:"), (DRAWER_END_RE, ":ENᴅ:")):  # fmt: skip
        assert not pattern.search(line), line
