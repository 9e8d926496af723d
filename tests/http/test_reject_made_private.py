"""``POST /suggest-links/reject`` never stores the ID of a node made private while it
runs: the check that both nodes are in the index is made in the write's own
transaction. In-process app (real SQLite, real notes): the note is made private and
indexed at the one point between the request's start and its write, by holding the
route's write until that is done (awaited, not timed)."""

from __future__ import annotations

from tests.http.test_suggest_links import A, D, kelp_notes


async def test_a_rejection_of_a_node_made_private_meanwhile_is_refused_and_not_stored(make_client, settings, roam_dir):
    kelp_notes(roam_dir)
    client = await make_client(settings)
    index = client.index
    real_write, made_private = index.write, []

    async def private_first(fn):
        if not made_private:  # the route's write: the note of D turns private before it runs
            made_private.append(True)
            note = roam_dir / "kelp-d.org"
            note.write_text(note.read_text().replace("#+title:", "#+filetags: :private:\n#+title:", 1))
            report = await index.index_paths(["kelp-d.org"])
            assert await index.read(lambda s: s.node(D)) is None, report
        return await real_write(fn)

    index.write = private_first
    resp = await client.post("/suggest-links/reject", json={"from": A, "to": D})
    body = await resp.json()
    index.write = real_write
    assert made_private
    assert resp.status == 404, body
    assert D in body["error"]
    rows = await index.read(lambda s: s.conn.execute("SELECT src_node, dst_node FROM link_rejections").fetchall())
    assert rows == []


async def test_a_rejection_of_two_indexed_nodes_is_stored(make_client, settings, roam_dir):
    kelp_notes(roam_dir)
    client = await make_client(settings)
    resp = await client.post("/suggest-links/reject", json={"from": A, "to": D})
    assert resp.status == 200, await resp.text()
    resp = await client.get("/suggest-links/rejections")
    assert [(r["from"], r["to"]) for r in (await resp.json())["rejections"]] == [(A, D)]
