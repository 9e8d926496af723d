"""A result's ``relevance`` (relevance.py, :func:`ordered`): the number a list shows,
which never rises down it. The lists of /similar and /suggest-links are in the ranking's
order, not the scores' (``in_evidence_order`` lets a result score up to four times the
odds of one above it), and /search keeps its search's order: a newcomer saw the similar
notes listed 0.05, 0.04, 0.05, … and read it as broken. ``score`` stays the pair's own
(the same at any ``k``, the one ``min_score`` cuts); ``relevance`` is the scores made to
agree with the order, keeping their mean and the cut-off's meaning.
"""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from arcology_oracle.answers import relevance
from arcology_oracle.answers.links import suggest_links
from arcology_oracle.answers.retrieval import Result
from arcology_oracle.answers.search import search, similar_to_line, similar_to_node, similar_to_text
from tests.org_samples import IDS

_scores = st.lists(st.floats(0.0, 1.0).map(lambda s: round(s, 6)), max_size=30)


def _results(scores: list[float]) -> list[Result]:
    return [Result(None, None, str(i), str(i), [], f"{i}.org", 1, s, "") for i, s in enumerate(scores)]


def _never_up(values: list[float]) -> None:
    assert all(a >= b for a, b in zip(values, values[1:])), values


def test_the_scores_a_newcomer_saw_read_in_order():
    ordered = relevance.ordered(_results([0.12, 0.06, 0.05, 0.04, 0.05, 0.01, 0.02, 0.02, 0.01, 0.02]))
    assert [r.relevance for r in ordered] == [0.12, 0.06, 0.05, 0.045, 0.045, 0.016667, 0.016667, 0.016667, 0.015, 0.015]
    assert [r.score for r in ordered] == [0.12, 0.06, 0.05, 0.04, 0.05, 0.01, 0.02, 0.02, 0.01, 0.02]


@given(_scores, st.sampled_from([None, 0.0, 0.03, 0.1, 0.5]), st.booleans())
def test_relevance_never_rises_and_keeps_the_cut_off_and_the_mean(scores, min_score, keep_all):
    results = relevance.in_evidence_order(_results(scores))
    out = relevance.cut(results, min_score, keep_all=keep_all)
    assert [r.title for r in out] == [r.title for r in results if keep_all or min_score is None or r.score >= min_score]
    above = [r for r in out if not r.below_cutoff]
    below = [r for r in out if r.below_cutoff]
    for group in (above, below):
        _never_up([r.relevance for r in group])
        if group:  # as many links expected as the scores say
            assert math.isclose(sum(r.relevance for r in group), sum(r.score for r in group), abs_tol=1e-5 * len(group))
    if min_score is not None:  # below_cutoff means what it meant: below min_score
        assert all(r.relevance >= min_score for r in above) and all(r.relevance < min_score for r in below)
    if all(a >= b for a, b in zip(scores, scores[1:])) and (min_score is None or not keep_all):
        assert [r.relevance for r in out] == [r.score for r in out]  # scores in order are shown as they are


async def test_every_list_shows_a_relevance_that_never_rises(index):
    text = (index.settings.roam_dir / "sourdough-baking.org").read_text()
    lists = {
        "?node=": (await similar_to_node(index, IDS["sourdough"], 10, keep_all=True))[1],
        "?file=&line=": (await similar_to_line(index, "sourdough-baking.org", 38, 10, keep_all=True))[1],
        "POST": (await similar_to_text(index, text, 10, node=IDS["sourdough"], keep_all=True))[1],
        "/search": (await search(index, "sourdough starter hydration", 10))[1],
    }
    suggested = (await suggest_links(index, node_id=IDS["sourdough"], k=10, keep_all=True))["suggestions"]
    for route, results in lists.items():
        assert len(results) >= 3, route
        _never_up([r.relevance for r in results])
        assert all(r.as_dict()["relevance"] == r.relevance for r in results)
    assert len(suggested) >= 3
    _never_up([s["relevance"] for s in suggested])
