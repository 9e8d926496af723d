"""Link suggestions over HTTP (in-process app, real SQLite, the fake Ollama): every rule
of GET /suggest-links, the paragraph where a link belongs, and rejections that survive a
full re-index and the doctor's repair."""

from __future__ import annotations

import json
import shutil

from arcology_oracle.index.doctor import repair
from tests.org_samples import IDS

A, A2, B, C, D, E, P, F = (f"1111aaaa-0000-4000-8000-00000000000{i}" for i in range(1, 9))
KELP = "kelp seaweed harvest in tidal pools at low tide, rinsed and dried on racks"


def kelp_notes(roam) -> None:
    """A links to B, C links to A, A2 is nested in A and links to F, D and E are unlinked
    kelp notes, P is private and E's heading excluded: all about kelp."""
    (roam / "kelp-a.org").write_text(
        f":PROPERTIES:\n:ID: {A}\n:END:\n#+title: Kelp harvest\n\n"
        "Bread dough and starter feeding have nothing to do with this paragraph.\n\n"
        f"The {KELP}; the drying racks stand in the shed.\n"
        f"See [[id:{B}][Kelp boats]].\n\n"
        f"* Nested kelp log\n:PROPERTIES:\n:ID: {A2}\n:END:\n{KELP}. Nested log of every harvest, [[id:{F}][sold]].\n"
    )
    (roam / "kelp-f.org").write_text(f":PROPERTIES:\n:ID: {F}\n:END:\n#+title: Kelp market\n\n{KELP}; market.\n")
    (roam / "kelp-b.org").write_text(f":PROPERTIES:\n:ID: {B}\n:END:\n#+title: Kelp boats\n\n{KELP}; boats.\n")
    (roam / "kelp-c.org").write_text(
        f":PROPERTIES:\n:ID: {C}\n:END:\n#+title: Kelp recipes\n\n{KELP}; recipes. [[id:{A}][harvest]]\n"
    )
    (roam / "kelp-d.org").write_text(
        f":PROPERTIES:\n:ID: {D}\n:END:\n#+title: Drying racks\n\nDrying racks for {KELP}.\n"
        f"* Racks in the shed\nThe drying racks in the shed hold {KELP}.\n"
        f"* Racks on the beach\nMore drying racks: {KELP}.\n"
    )
    (roam / "kelp-e.org").write_text(
        f":PROPERTIES:\n:ID: {E}\n:END:\n#+title: Kelp prices\n\n{KELP}; prices.\n"
        f"* Left out\n:PROPERTIES:\n:ID: {E}-x\n:ROAM_EXCLUDE: t\n:END:\n{KELP} excludedkelpword\n"
    )
    (roam / "kelp-p.org").write_text(
        f":PROPERTIES:\n:ID: {P}\n:END:\n#+title: Secret kelp\n#+filetags: :private:\n\n{KELP} privatekelpword\n"
    )


async def get(client, path, **params):
    resp = await client.get(path, params={k: str(v) for k, v in params.items()})
    return resp.status, await resp.json()


async def test_suggestions_obey_every_rule(make_client, settings, roam_dir):
    kelp_notes(roam_dir)
    client = await make_client(settings)
    status, similar = await get(client, "/similar", node=A, k=50)
    assert status == 200
    similar_ids = [r["node_id"] for r in similar["results"]]
    # The linked ones are similar: only the rules keep them out of the suggestions.
    assert B in similar_ids and C in similar_ids and F in similar_ids

    status, body = await get(client, "/suggest-links", node=A, k=50)
    assert status == 200, body
    ids = [s["node_id"] for s in body["suggestions"]]
    assert body["node_id"] == A and body["graph"] is True  # the graph signal is on by default
    assert D in ids and E in ids
    assert A not in ids, "never self"
    assert A2 not in ids, "never a node nested in the query node"
    assert B not in ids, "never a node the note links to"
    assert C not in ids, "never a node linking to the note"
    assert F not in ids, "never a node a nested node links to"
    assert P not in ids and f"{E}-x" not in ids, "never private or excluded"
    assert len(ids) == len(set(ids)), "one suggestion per target"
    text = json.dumps(body)
    assert "privatekelpword" not in text and "excludedkelpword" not in text

    d = next(s for s in body["suggestions"] if s["node_id"] == D)
    assert d["link"] == f"[[id:{D}][Drying racks]]" and d["score"] > 0
    lines = (roam_dir / "kelp-a.org").read_text().splitlines()
    para = d["paragraph"]
    # The paragraph naming the drying racks, not the one about bread, with its lines.
    assert "drying racks" in para["text"]
    assert para["text"] == "\n".join(lines[para["start_line"] - 1 : para["end_line"]])
    assert d["heading"]["heading"] == "Kelp harvest" and d["heading"]["line"] == 1


async def test_links_from_nested_nodes_count_as_linked(make_client, settings, roam_dir):
    # Sourdough Baking's nested "Starter maintenance" is not suggested, nor Baker's
    # percentages, which its "Bulk fermentation" heading links to, nor 2024-03-01,
    # which links to it.
    client = await make_client(settings)
    status, body = await get(client, "/suggest-links", node=IDS["sourdough"], k=50)
    assert status == 200
    ids = {s["node_id"] for s in body["suggestions"]}
    assert ids and not ids & {IDS["sourdough"], IDS["starter"], IDS["hydration"], IDS["bakers_percentages"], IDS["journal_0301"]}


async def test_a_heading_node_is_never_offered_its_own_file(make_client, settings):
    # Baker's percentages is a node of its own inside the file node Bread Hydration: a link
    # from it to Bread Hydration is a link to the note one is in (Emacs inserted it).
    client = await make_client(settings)
    for params in ({"node": IDS["bakers_percentages"]}, {"file": "bread-hydration.org", "line": 14}):
        status, body = await get(client, "/suggest-links", **params, k=50, all="true")
        assert status == 200, body
        ids = {s["node_id"] for s in body["suggestions"]}
        assert ids and IDS["hydration"] not in ids and IDS["bakers_percentages"] not in ids, params


async def test_suggestions_for_a_heading_place_links_inside_it(make_client, settings, roam_dir):
    kelp_notes(roam_dir)
    client = await make_client(settings)
    lines = (roam_dir / "kelp-d.org").read_text().splitlines()
    line = lines.index("* Racks on the beach") + 1
    status, body = await get(client, "/suggest-links", file="kelp-d.org", line=line, k=20)
    assert status == 200 and body["node_id"] == D
    ids = [s["node_id"] for s in body["suggestions"]]
    assert ids and D not in ids and len(ids) == len(set(ids))
    for s in body["suggestions"]:
        assert s["heading"]["heading"] == "Racks on the beach"
        assert s["paragraph"]["start_line"] == line + 1


async def test_rejections_are_kept_through_full_reindex_and_repair(make_client, settings, roam_dir, tmp_path):
    kelp_notes(roam_dir)
    client = await make_client(settings)
    _, body = await get(client, "/suggest-links", node=A, k=50)
    assert D in [s["node_id"] for s in body["suggestions"]]
    resp = await client.post("/suggest-links/reject", json={"from": A, "to": D})
    assert resp.status == 200, await resp.text()
    _, body = await get(client, "/suggest-links", node=A, k=50)
    assert D not in [s["node_id"] for s in body["suggestions"]]
    assert E in [s["node_id"] for s in body["suggestions"]]

    # Full re-index: every note leaves the index, then every note comes back.
    aside = tmp_path / "aside"
    shutil.move(roam_dir, aside)
    roam_dir.mkdir()
    await client.index.reconcile()
    assert (await client.index.status())["files"] == 0
    shutil.rmtree(roam_dir)
    shutil.move(aside, roam_dir)
    await client.index.reconcile()
    await client.index.embed_pending()
    await client.index.write(lambda store: repair(settings, store))

    _, body = await get(client, "/suggest-links", node=A, k=50)
    ids = [s["node_id"] for s in body["suggestions"]]
    assert D not in ids and E in ids
    _, listed = await get(client, "/suggest-links/rejections")
    assert [(r["from"], r["to"]) for r in listed["rejections"]] == [(A, D)]
    _, mine = await get(client, "/suggest-links/rejections", **{"from": B})
    assert mine["rejections"] == []

    resp = await client.delete("/suggest-links/rejections", params={"from": A})
    assert (await resp.json())["cleared"] == 1
    _, body = await get(client, "/suggest-links", node=A, k=50)
    assert D in [s["node_id"] for s in body["suggestions"]]
    _, listed = await get(client, "/suggest-links/rejections")
    assert listed["rejections"] == []


async def test_bad_requests_are_clear_errors(make_client, settings, roam_dir):
    kelp_notes(roam_dir)
    client = await make_client(settings, embedded=False)
    cases = [
        ("get", "/suggest-links", {}, 400),
        ("get", "/suggest-links", {"node": "no-such-node"}, 404),
        ("get", "/suggest-links", {"file": "inbox.org", "line": "1"}, 400),  # a note with no ID
        ("get", "/suggest-links", {"file": "../etc/passwd"}, 400),
        ("get", "/suggest-links", {"node": A, "k": "0"}, 400),
    ]
    for _, path, params, status in cases:
        resp = await client.get(path, params=params)
        assert resp.status == status, (params, await resp.text())
        assert "error" in await resp.json()
    posts = [
        ({"from": A, "to": A}, 400),
        ({"from": A}, 400),
        ({"from": A, "to": 5}, 400),
        ({"from": A, "to": "no-such-node"}, 404),
        ({"from": A, "to": P}, 404),  # private: not a node of the index
    ]
    for payload, status in posts:
        resp = await client.post("/suggest-links/reject", json=payload)
        assert resp.status == status, (payload, await resp.text())
    resp = await client.post("/suggest-links/reject", data=b"not json", headers={"Content-Type": "application/json"})
    assert resp.status == 400
    # JSON only: a form or text/plain (what a page may send to another origin) is refused.
    resp = await client.post(
        "/suggest-links/reject", data=json.dumps({"from": A, "to": D}), headers={"Content-Type": "text/plain"}
    )
    assert resp.status == 415
    _, listed = await get(client, "/suggest-links/rejections")
    assert listed["rejections"] == []


async def test_the_paragraph_is_found_by_japanese_words_too(make_client, settings, roam_dir):
    """Japanese has no spaces between words: the paragraph where a link to "味噌汁の作り方"
    belongs is the one that writes of 味噌汁, found by its CJK bigrams as keyword search
    finds it, not the note's first paragraph (both share the same other words)."""
    query, target = "2222aaaa-0000-4000-8000-000000000001", "2222aaaa-0000-4000-8000-000000000002"
    (roam_dir / "daidokoro.org").write_text(
        f":PROPERTIES:\n:ID: {query}\n:END:\n#+title: 台所の記録\n\n"
        "今日は朝から雨が降っていたので、家で本を読んで過ごした。 kitchen memo\n\n"
        "夕食には昆布と鰹節で出汁を取って、味噌汁を作った。 kitchen memo\n"
    )
    (roam_dir / "misoshiru.org").write_text(
        f":PROPERTIES:\n:ID: {target}\n:END:\n#+title: 味噌汁の作り方\n\n"
        "昆布と鰹節で出汁を取ってから、火を止めて味噌を溶かし入れる。 kitchen memo\n"
    )
    client = await make_client(settings)
    status, body = await get(client, "/suggest-links", node=query, k=50, all="true")
    assert status == 200, body
    suggestion = next(s for s in body["suggestions"] if s["node_id"] == target)
    assert "味噌汁を作った" in suggestion["paragraph"]["text"], suggestion["paragraph"]
