"""Relevance a person can read (issue 26), over HTTP on the example vault with the fake
Ollama: calibrated scores that do not depend on ``k`` or the route, the ``min_score``
cut-off and ``all=true``, /similar never returning the query's own note, the nodes
around it or in it (unless ``same_file=true``), the ``linked`` mark, and the oracle's
own answers kept out of similarity, suggestions and the link graph while /search marks
them."""

from __future__ import annotations

from tests.org_samples import IDS

HYDRATION = "bread-hydration.org"
BAKERS_LINE = 12  # "* Baker's percentages", a heading node in the Bread Hydration file node


async def get(client, path, **params):
    resp = await client.get(path, params={k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in params.items()})
    body = await resp.json()
    assert resp.status == 200, body
    return body


def by_node(results) -> dict[str, float]:
    return {r["node_id"]: r["score"] for r in results}


async def test_a_pair_scores_the_same_at_any_k_and_from_every_route(client):
    for query in ({"node": IDS["sourdough"]}, {"file": HYDRATION, "line": BAKERS_LINE}, {"node": IDS["rust_ownership"]}):
        five = by_node((await get(client, "/similar", k=5, all=True, **query))["results"])
        ten = by_node((await get(client, "/similar", k=10, all=True, **query))["results"])
        shared = five.keys() & ten.keys()
        assert len(shared) >= 3, (five, ten)
        assert {n: five[n] for n in shared} == {n: ten[n] for n in shared}, query
        assert all(0.0 <= s <= 1.0 for s in ten.values())
    # Not scaled by the first result: it is no longer 1.0 by construction.
    assert max(ten.values()) < 1.0
    similar = by_node((await get(client, "/similar", node=IDS["sourdough"], k=20, all=True))["results"])
    suggested = await get(client, "/suggest-links", node=IDS["sourdough"], k=20, all=True)
    scores = {s["node_id"]: s["score"] for s in suggested["suggestions"]}
    shared = similar.keys() & scores.keys()
    assert shared and {n: similar[n] for n in shared} == {n: scores[n] for n in shared}


async def test_min_score_cuts_unless_all_and_says_what_it_used(make_client, make_settings, fake_ollama):
    open_client = await make_client(make_settings(ollama_host=fake_ollama.url))
    every = (await get(open_client, "/similar", node=IDS["sourdough"], k=10, all=True))["results"]
    scores = sorted({r["score"] for r in every})
    assert len(scores) >= 4, scores
    cut = (scores[len(scores) // 2 - 1] + scores[len(scores) // 2]) / 2
    client = await make_client(make_settings(ollama_host=fake_ollama.url, min_score=cut))
    body = await get(client, "/similar", node=IDS["sourdough"], k=10)
    assert body["min_score"] == cut
    assert body["results"] and all(r["score"] >= cut and r["below_cutoff"] is False for r in body["results"])
    marked = (await get(client, "/similar", node=IDS["sourdough"], k=10, all=True))["results"]
    assert [r["node_id"] for r in marked] == [r["node_id"] for r in every]
    assert {r["node_id"] for r in marked if not r["below_cutoff"]} == {r["node_id"] for r in body["results"]}
    assert all(r["score"] < cut for r in marked if r["below_cutoff"]) and any(r["below_cutoff"] for r in marked)
    links = await get(client, "/suggest-links", node=IDS["sourdough"], k=10)
    assert links["min_score"] == cut and all(s["score"] >= cut for s in links["suggestions"])
    kept = await get(client, "/suggest-links", node=IDS["sourdough"], k=10, all=True)
    assert len(kept["suggestions"]) > len(links["suggestions"])
    assert all(s["below_cutoff"] == (s["score"] < cut) for s in kept["suggestions"])
    text = await (await client.post("/similar", json={"text": "sourdough starter feeding", "all": True})).json()
    assert text["min_score"] == cut and all(r["below_cutoff"] == (r["score"] < cut) for r in text["results"])


async def test_the_calibration_is_a_fixed_monotone_transform():
    from arcology_oracle.answers import relevance

    low = relevance.calibrated(relevance.Evidence(vector=0.3, words=0.0, graph=0.0))
    high = relevance.calibrated(relevance.Evidence(vector=0.8, words=0.0, graph=0.0))
    more = relevance.calibrated(relevance.Evidence(vector=0.8, words=2.0, graph=1.0))
    assert 0.0 < low < high < more < 1.0


async def test_similar_by_heading_leaves_out_its_own_enclosing_and_nested_nodes(client):
    ids = [r["node_id"] for r in (await get(client, "/similar", file=HYDRATION, line=BAKERS_LINE, k=50, all=True))["results"]]
    assert ids and IDS["bakers_percentages"] not in ids and IDS["hydration"] not in ids, ids
    with_file = (await get(client, "/similar", file=HYDRATION, line=BAKERS_LINE, k=50, all=True, same_file=True))["results"]
    assert IDS["hydration"] in [r["node_id"] for r in with_file]
    assert IDS["bakers_percentages"] not in [r["node_id"] for r in with_file]
    assert all(r["same_file"] == (r["file"] == HYDRATION) for r in with_file)
    # A file node: the nodes nested in it are its own file.
    ids = [r["node_id"] for r in (await get(client, "/similar", node=IDS["rust_ownership"], k=50, all=True))["results"]]
    assert ids and IDS["move_semantics"] not in ids and IDS["rust_ownership"] not in ids
    # A heading node: the file node around it.
    ids = [r["node_id"] for r in (await get(client, "/similar", node=IDS["bakers_percentages"], k=50, all=True))["results"]]
    assert ids and IDS["hydration"] not in ids
    back = (await get(client, "/similar", node=IDS["bakers_percentages"], k=50, all=True, same_file=True))["results"]
    assert any(r["node_id"] == IDS["hydration"] and r["same_file"] for r in back)


async def test_results_the_query_note_links_to_are_marked_linked(client):
    # Sourdough Baking links to Bread Hydration; Bread Hydration links back, Borrow
    # Checker is linked from neither.
    results = (await get(client, "/similar", node=IDS["sourdough"], k=50, all=True))["results"]
    marks = {r["node_id"]: r["linked"] for r in results}
    assert marks[IDS["hydration"]] is True
    assert marks[IDS["borrow_checker"]] is False
    assert sum(marks.values()) == 1 + (IDS["bakers_percentages"] in marks), marks


async def test_an_unsaved_buffers_text_with_its_node_leaves_that_note_out(client):
    # What Emacs posts for a modified buffer: the heading's text and the node it is in.
    lines = (client.index.settings.roam_dir / HYDRATION).read_text().splitlines()
    whole = "\n".join(lines) + "\nflour weight, water weight"
    section = "\n".join(lines[BAKERS_LINE - 1 : BAKERS_LINE + 15])

    async def post(text, **extra):
        resp = await client.post("/similar", json={"text": text, "k": 50, "all": True, **extra})
        body = await resp.json()
        assert resp.status == 200, body
        return body["results"]

    alone = [r["node_id"] for r in await post(whole)]
    assert alone[0] in (IDS["bakers_percentages"], IDS["hydration"]), alone  # its saved self first
    results = await post(whole, node=IDS["hydration"])
    ids = [r["node_id"] for r in results]
    assert ids and IDS["hydration"] not in ids and IDS["bakers_percentages"] not in ids, ids  # and nested in it
    assert all(r["same_file"] is False for r in results)
    # A note it links to is marked, as ?node= marks it, and left out on request.
    assert {r["node_id"]: r["linked"] for r in results}.get(IDS["sourdough"]) is True, results
    unlinked = [r["node_id"] for r in await post(whole, node=IDS["hydration"], exclude_linked=True)]
    assert unlinked and IDS["sourdough"] not in unlinked
    # A heading node: the file node around it goes too.
    ids = [r["node_id"] for r in await post(section, node=IDS["bakers_percentages"])]
    assert ids and IDS["bakers_percentages"] not in ids and IDS["hydration"] not in ids, ids
    # A node the index does not hold yet (a note never saved) leaves nothing out.
    assert [r["node_id"] for r in await post(whole, node="not-saved-yet")] == alone
