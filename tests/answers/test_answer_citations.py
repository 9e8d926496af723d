"""How an answer written into a conversation cites its sources (issue 26): the IDs in a
``:SOURCES:`` property (bare, no ``id:``) and a plain list, so that Debian's org-roam
2.2 (``org-roam-db-sync`` in batch Emacs) lists no backlink from the conversation on the
cited note. The old way (``answer_source_links``: ``[[id:]]`` links in the list) does,
which the same run shows, so the check can fail."""

from __future__ import annotations

import datetime as dt

from arcology_oracle.answers.sources import Source, source_targets, sources_org_block, sources_plain_block
from arcology_oracle.notes.conversations import render_answer
from arcology_oracle.notes.reader import read_org_bytes

from tests.emacs_batch import WITH_PACKAGES, emacs_env, require_packages, run_emacs

CITED = "cc000000-0000-4000-8000-000000000001"
NEW = "cc000000-0000-4000-8000-000000000002"
OLD = "cc000000-0000-4000-8000-000000000003"
WHEN = dt.datetime(2024, 3, 1, 14, 5)
SOURCES = [
    Source(n=1, node_id=CITED, title="Starter care", heading="Reviving it", file="cited.org", line=6, score=0.5),
    Source(n=2, node_id=None, title="Loose file", heading="Loose file", file="loose.org", line=1, score=0.5),
]

BACKLINKS = f"""
(progn
  (require 'org-roam)
  (setq org-roam-directory (expand-file-name "notes") org-roam-db-location (expand-file-name "roam.db"))
  (org-roam-db-sync)
  (dolist (b (org-roam-backlinks-get (org-roam-node-from-id "{CITED}")))
    (princ (format "BACKLINK %s\\n" (org-roam-node-id (org-roam-backlink-source-node b))))))
"""


def conversation(node: str, answer: str) -> str:
    return f":PROPERTIES:\n:ID: {node}\n:END:\n#+title: Talk\n\n* Starters\n** Me\nHow do I revive it?\n{answer}"


def answer(*, links: bool) -> str:
    block = sources_org_block(SOURCES) if links else sources_plain_block(SOURCES)
    targets = None if links else source_targets(SOURCES)
    return render_answer("Feed it twice a day [1].", block, level=2, model="m", when=WHEN, source_targets=targets)


def test_the_sources_are_a_property_of_ids_and_a_plain_list():
    text = answer(links=False)
    assert f":SOURCES:  {CITED}::cited.org::6 file:loose.org::1\n" in text
    assert "Sources:\n- [1] Starter care: Reviving it\n- [2] Loose file\n" in text
    assert "[[" not in text and "id:" not in text.split(":END:")[1]


def test_a_source_file_with_spaces_stays_one_target():
    spaced = [Source(n=1, node_id=CITED, title="T", heading="H", file="my notes/día 1.org", line=6, score=0.5),
              Source(n=2, node_id=None, title="L", heading="L", file="a b.org", line=2, score=0.5)]  # fmt: skip
    assert source_targets(spaced) == f"{CITED}::my%20notes/d%C3%ADa%201.org::6 file:a%20b.org::2"
    odd = [Source(n=1, node_id="id::with space", title="T", heading="H", file="x.org", line=1, score=0.5)]
    assert source_targets(odd) == "id%3A%3Awith%20space::x.org::1"  # one target, its ID whole


def test_the_daemon_counts_no_citation_as_a_link():
    for links in (False, True):
        parsed = read_org_bytes(conversation(NEW, answer(links=links)).encode(), "talk.org", frozenset())
        assert all(h.links == () for h in parsed.headings), links
    # Not even outside an oracle answer: a Sources: list pasted into a note.
    pasted = f"* Notes\nSee [[id:{OLD}][that]].\n\nSources:\n- [1] [[id:{CITED}][Starter care]]\n"
    heading = read_org_bytes(pasted.encode(), "n.org", frozenset()).headings[-1]
    assert heading.links == (OLD,)


async def test_a_cited_note_gains_no_org_roam_backlink(tmp_path):
    require_packages("org-roam")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "cited.org").write_text(
        f":PROPERTIES:\n:ID: {CITED}\n:END:\n#+title: Starter care\n\n* Reviving it\nFeed it.\n"
    )
    (notes / "talk-new.org").write_text(conversation(NEW, answer(links=False)))
    (notes / "talk-old.org").write_text(conversation(OLD, answer(links=True)))
    status, out = await run_emacs(["--eval", WITH_PACKAGES, "--eval", BACKLINKS], env=emacs_env(tmp_path), cwd=tmp_path)
    assert status == 0, out
    backlinks = {line.split()[1] for line in out.splitlines() if line.startswith("BACKLINK ")}
    assert OLD in backlinks, out  # links in the list: org-roam collects them
    assert NEW not in backlinks, out
