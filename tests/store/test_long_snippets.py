"""The snippet of a keyword hit in a very long heading (store/snippets.py): found in
Python around the first phrase matched, since FTS5's snippet() costs about the square of
the matches (39 s for one word in a 5.7 MB heading)."""

from __future__ import annotations

import pytest

from arcology_oracle.answers.search import search
from arcology_oracle.index.service import OracleIndex
from arcology_oracle.store.snippets import SNIPPET_MAX_CHARS, long_snippet

FIRST = "Zymurgy came first, in the cellar."
# The first "zymurgy" stands alone; the later ones come with "cellar" too, where FTS5's
# snippet() puts its window (the fragment holding most of the query's phrases).
BODY = (
    "Filler words about nothing in particular.\n\n" * (SNIPPET_MAX_CHARS // 40)
    + FIRST + "\n\n"
    + "More filler to keep the two apart.\n\n" * 200
    + "The zymurgy cellar and the zymurgy cellar log, cellar zymurgy again.\n\n" * 5
)


@pytest.fixture
async def idx(tmp_path, make_settings):
    roam = tmp_path / "long-roam"
    roam.mkdir()
    (roam / "long.org").write_text("#+title: Long log\n* Everything\n" + BODY, encoding="utf-8")
    (roam / "short.org").write_text("#+title: Short\n* Cellar\nThe zymurgy cellar is cool.\n", encoding="utf-8")
    index = OracleIndex(make_settings(roam_dir=roam))
    await index.start()
    await index.reconcile()
    yield index
    await index.close()


async def test_a_long_heading_s_snippet_is_its_first_match(idx):
    mode, results = await search(idx, "zymurgy cellar", 5)
    by_title = {r.title: r for r in results}
    assert "Zymurgy came first" in by_title["Long log"].snippet, by_title["Long log"].snippet
    assert by_title["Short"].snippet == "The zymurgy cellar is cool."  # FTS5's, as before


def test_long_snippet_windows():
    text = "a" * 500 + " Rye here " + "b" * 500
    assert long_snippet(text, '"rye"') == " … " + text[441:601] + " … "
    assert long_snippet("Rye at the start", '"flour" OR "rye"') == "Rye at the start"
    assert long_snippet("fed the starter", '"feeding"') is None  # a stem only: the start stands in
    assert long_snippet('say "hi" there', '"""hi"""') == 'say "hi" there'
