"""The order of /similar and /suggest-links against the scores they show (relevance.py,
``in_evidence_order``): the ranking's order stands (it weighs the candidates against one
another, and the graph), except where a result's calibrated odds of a link are more than
``ORDER_ODDS`` times those of a result above it: there the result goes above. So a list
never shows a result scoring, in odds, over four times one above it.

The vault below is the case seen on a first day: a note sharing the query's links but
none of its subject ("Home projects" links the same two notes as "Starter care") was put
first by the graph signal with a score of 0.02, above the note on the same subject
scoring 0.12.
"""

from __future__ import annotations

import math
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arcology_oracle.answers import relevance
from arcology_oracle.answers.links import suggest_links
from arcology_oracle.answers.retrieval import Result
from arcology_oracle.answers.search import similar_to_line, similar_to_node, similar_to_text
from arcology_oracle.index.service import OracleIndex


def _result(title: str, score: float) -> Result:
    return Result(None, None, title, title, [], f"{title}.org", 1, score, "")


def odds(score: float) -> float:
    return math.inf if score >= 1 else score / (1 - score)


def assert_in_evidence_order(scores: list[float]) -> None:
    for i, upper in enumerate(scores):
        for lower in scores[i + 1 :]:
            assert odds(lower) <= relevance.ORDER_ODDS * odds(upper) * (1 + 1e-9), scores


def test_a_result_goes_above_those_it_beats_by_more_than_the_bound():
    # The scores the reviewer saw, in the order they were shown.
    shown = [("Baker's percentages", 0.10), ("Starter feeding", 0.32), ("Bread Hydration", 0.05),
             ("Kitchen Projects", 0.32), ("Shaping", 0.13)]  # fmt: skip
    ordered = relevance.in_evidence_order([_result(t, s) for t, s in shown])
    assert [r.title for r in ordered] == [
        "Starter feeding", "Kitchen Projects", "Baker's percentages", "Bread Hydration", "Shaping"
    ]  # fmt: skip
    assert_in_evidence_order([r.score for r in ordered])


@given(st.lists(st.floats(0.0, 1.0), max_size=30))
def test_the_bound_holds_and_only_what_breaks_it_moves(scores):
    results = [_result(str(i), s) for i, s in enumerate(scores)]
    ordered = relevance.in_evidence_order(results)
    assert sorted(r.title for r in ordered) == sorted(r.title for r in results)
    assert_in_evidence_order([r.score for r in ordered])
    assert relevance.in_evidence_order(ordered) == ordered  # nothing left to move
    assert relevance.in_evidence_order(results, math.inf) == results
    if all(odds(b) <= relevance.ORDER_ODDS * odds(a) for i, a in enumerate(scores) for b in scores[i + 1 :]):
        assert ordered == results  # the ranking's order, untouched


def node_id(title: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, title))


NOTES = {
    "Starter care": ("Feed the sourdough starter rye flour and water daily; a lively starter doubles and smells "
                     "tangy.", ["Kitchen scale", "Pantry list"]),
    "Starter feeding schedule": ("Feed the sourdough starter rye flour and water: fifty grams each, twice a day, "
                                 "until it doubles.", []),
    "Home projects": ("Paint the fence, fix the gate hinge, replace the porch light.", ["Kitchen scale", "Pantry list"]),
    "Kitchen scale": ("Grams, tare button, batteries.", []),
    "Pantry list": ("Salt, oats, lentils.", []),
    "Tomato blight": ("Brown leaves on tomatoes; remove them and water at the base.", []),
}  # fmt: skip


@pytest.fixture
async def starter_index(tmp_path, make_settings, fake_ollama):
    roam = tmp_path / "starter-roam"
    roam.mkdir()
    for title, (body, links) in NOTES.items():
        linked = " ".join(f"[[id:{node_id(t)}][{t}]]" for t in links)
        text = f":PROPERTIES:\n:ID:       {node_id(title)}\n:END:\n#+title: {title}\n\n{body}\n{linked}\n"
        (roam / (title.lower().replace(" ", "-") + ".org")).write_text(text)
    idx = OracleIndex(make_settings(roam_dir=roam, ollama_host=fake_ollama.url))
    await idx.start()
    await idx.reconcile()
    await idx.embed_pending()
    yield idx
    await idx.close()


async def test_every_route_orders_by_the_score_where_it_disagrees_by_more_than_the_bound(starter_index):
    query = node_id("Starter care")
    text = (starter_index.settings.roam_dir / "starter-care.org").read_text()
    lists = {
        "?node=": (await similar_to_node(starter_index, query, 10))[1],
        "?file=&line=": (await similar_to_line(starter_index, "starter-care.org", 6, 10))[1],
        "POST": (await similar_to_text(starter_index, text, 10, node=query))[1],
    }
    suggested = (await suggest_links(starter_index, node_id=query, k=10))["suggestions"]
    for route, results in lists.items():
        assert results[0].title == "Starter feeding schedule", (route, [(r.title, r.score) for r in results])
        assert_in_evidence_order([r.score for r in results])
    assert suggested[0]["title"] == "Starter feeding schedule", suggested
    assert_in_evidence_order([s["score"] for s in suggested])
    # The graph still orders what the scores do not tell apart by that much.
    assert [r.title for r in lists["?node="]].index("Home projects") == 1


async def test_the_first_results_do_not_depend_on_how_many_are_asked_for(index):
    """Asking for three gives the first three of ten, on every route: the best note fell
    out of a short list when the candidates re-ranked shrank with k."""
    from tests.org_samples import IDS

    text = (index.settings.roam_dir / "sourdough-baking.org").read_text()
    routes = {
        "?node=": lambda k: similar_to_node(index, IDS["sourdough"], k, keep_all=True),
        "?file=&line=": lambda k: similar_to_line(index, "sourdough-baking.org", 38, k, keep_all=True),
        "POST": lambda k: similar_to_text(index, text, k, node=IDS["sourdough"], keep_all=True),
    }
    for route, ask in routes.items():
        ten = [r.node_id for r in (await ask(10))[1]]
        for k in (1, 3, 5):
            assert [r.node_id for r in (await ask(k))[1]] == ten[:k], (route, k)
    suggested = lambda k: suggest_links(index, node_id=IDS["sourdough"], k=k, keep_all=True)  # noqa: E731
    ten = [s["node_id"] for s in (await suggested(10))["suggestions"]]
    assert [s["node_id"] for s in (await suggested(3))["suggestions"]] == ten[:3]
