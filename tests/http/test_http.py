"""The native HTTP API in-process: shapes, validation, errors and access."""

from __future__ import annotations

import json

import pytest

from tests.org_samples import IDS, SECRET_WORDS
from tests.runners import wait_until


async def test_health_and_status(client):
    resp = await client.get("/health")
    assert resp.status == 200 and await resp.json() == {"ok": True}
    status = await (await client.get("/status")).json()
    for key in ("files", "headings", "chunks", "embedded", "pending", "roam_dir", "embedder", "indexing"):
        assert key in status
    assert status["embedder"]["reachable"] is True and status["embedder"]["dims"] == 256
    assert status["pending"] == 0 and status["indexing"]["running"] is False


async def test_search_shape(client):
    body = await (await client.get("/search", params={"q": "covering index", "k": "3"})).json()
    assert body["mode"] == "hybrid" and 0 < len(body["results"]) <= 3
    assert body["results"][0]["heading"] == "Covering indexes"


async def test_similar_by_line_and_text(client):
    # The line of "Baker's percentages" in bread-hydration.org.
    lines = (client.index.settings.roam_dir / "bread-hydration.org").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "Baker's percentages" in text and text.startswith("*"))
    body = await (await client.get("/similar", params={"file": "bread-hydration.org", "line": str(line)})).json()
    assert body["mode"] == "vector"
    assert all(r["node_id"] != IDS["bakers_percentages"] for r in body["results"])
    resp = await client.post("/similar", json={"text": "tomato blight on the leaves", "k": 3})
    body = await resp.json()
    assert body["results"][0]["node_id"] in (IDS["blight"], IDS["tomatoes"])


async def test_node_metadata(client):
    body = await (await client.get(f"/nodes/{IDS['sourdough']}")).json()
    assert body["title"] == "Sourdough Baking" and body["file"] == "sourdough-baking.org"
    headings = [h["heading"] for h in body["headings"]]
    assert "Bulk fermentation" in headings


async def test_node_links_and_backlinks_leave_out_private_ones(make_client, settings, roam_dir):
    # A private heading and an excluded node that link to Sourdough Baking: neither may
    # show up as a backlink (nor their titles anywhere in the answer).
    (roam_dir / "secret-links.org").write_text(
        ":PROPERTIES:\n:ID: 5ec5ec00-0000-4000-8000-000000000001\n:END:\n#+title: Open file\n"
        "* Hidden crumb :private:\n:PROPERTIES:\n:ID: 5ec5ec00-0000-4000-8000-000000000002\n:END:\n"
        f"privatepelican [[id:{IDS['sourdough']}][bread]]\n"
        "* Left out\n:PROPERTIES:\n:ID: 5ec5ec00-0000-4000-8000-000000000003\n:ROAM_EXCLUDE: t\n:END:\n"
        f"excludedwombat [[id:{IDS['sourdough']}][bread]]\n"
    )
    client = await make_client(settings, embedded=False)
    body = await (await client.get(f"/nodes/{IDS['sourdough']}")).json()
    assert {"node_id": IDS["hydration"], "title": "Bread Hydration"} in body["links"]
    assert {"node_id": IDS["bakers_percentages"], "title": "Baker's percentages"} in body["links"]
    backlinks = {b["node_id"]: b["title"] for b in body["backlinks"]}
    assert backlinks[IDS["hydration"]] == "Bread Hydration"
    assert backlinks[IDS["journal_0301"]] == "2024-03-01"
    assert not any(i.startswith("5ec5ec00") for i in backlinks)
    assert IDS["sourdough"] not in backlinks
    bulk = next(h for h in body["headings"] if h["heading"] == "Bulk fermentation")
    assert f"[[id:{IDS['bakers_percentages']}][hydration]]" in bulk["body"]
    text = json.dumps(body)
    assert "Hidden crumb" not in text and "privatepelican" not in text and "excludedwombat" not in text


async def test_journal_lists_daily_headings_in_date_order(client):
    resp = await client.get("/journal", params={"since": "2024-03-01", "until": "2024-03-02"})
    assert resp.status == 200
    body = await resp.json()
    listed = [(r["date"], r["heading"]) for r in body["results"]]
    assert listed == [
        ("2024-03-01", "Baked a sourdough loaf"),
        ("2024-03-01", "Fixed a borrow checker error"),
        ("2024-03-01", "Meeting with Sam <2024-03-01 Fri 14:00>"),
        ("2024-03-02", "2024-03-02"),  # the text before the first heading
        ("2024-03-02", "Planted tomato seedlings"),
        ("2024-03-02", "Seedling checklist"),
        ("2024-03-02", "Read a chapter of Norman"),
    ]
    assert body["more"] is False and body["note"] is None
    assert body["date_range"] == {"since": "2024-03-01", "until": "2024-03-02", "expression": "since 2024-03-01 until 2024-03-02"}
    # Only daily notes: the starter node (CREATED 2024-02-10) is dated but no journal entry.
    body = await (await client.get("/journal", params={"until": "2024-03-01", "k": "2"})).json()
    assert [r["heading"] for r in body["results"]] == ["Baked a sourdough loaf", "Fixed a borrow checker error"]
    assert body["more"] is True
    body = await (await client.get("/journal", params={"since": "2025-01-01"})).json()
    assert body["results"] == [] and body["note"] == "no journal headings dated 2025-01-01 to now"
    for params in ({"since": "someday"}, {"since": "2024-03-02", "until": "2024-03-01"}, {"k": "0"}):
        resp = await client.get("/journal", params=params)
        assert resp.status == 400 and (await resp.json())["ok"] is False


async def test_journal_says_when_there_is_no_journal(make_client, settings, roam_dir):
    for daily in (roam_dir / "journal").iterdir():
        daily.unlink()
    client = await make_client(settings, embedded=False)
    body = await (await client.get("/journal")).json()
    assert body["results"] == [] and "no daily note" in body["note"]


async def test_heading_text_for_display(client):
    body = await (await client.get("/heading", params={"file": "sqlite-indexing.org", "line": "1"})).json()
    assert body["file"] == "sqlite-indexing.org" and body["title"] == "SQLite Indexing"


@pytest.mark.parametrize(
    "method,path,kwargs,status",
    [
        ("get", "/search", {}, 400),
        ("get", "/search", {"params": {"q": "x", "k": "0"}}, 400),
        ("get", "/search", {"params": {"q": "x", "k": "many"}}, 400),
        ("get", "/similar", {}, 400),
        ("get", "/similar", {"params": {"node": "no-such-node"}}, 404),
        ("get", "/similar", {"params": {"file": "../etc/passwd", "line": "1"}}, 400),
        ("get", "/similar", {"params": {"file": "/etc/passwd", "line": "1"}}, 400),
        ("get", "/heading", {"params": {"file": "missing.org", "line": "1"}}, 404),
        # end_line before line (a window ending before it starts) is a mistake, not an empty 'below'
        ("get", "/heading", {"params": {"file": "sqlite-indexing.org", "line": "5", "end_line": "2"}}, 400),
        ("get", "/heading", {"params": {"file": "sqlite-indexing.org", "line": "1", "end_line": "-1"}}, 400),
        ("get", "/nodes/unknown", {}, 404),
        ("post", "/similar", {"data": b"{not json", "headers": {"Content-Type": "application/json"}}, 400),
        ("post", "/similar", {"data": b'{"text": "x"}'}, 415),
        ("post", "/similar", {"json": ["a list"]}, 400),
        ("post", "/similar", {"json": {"text": ""}}, 400),
        ("get", "/no-such-route", {}, 404),
    ],
)
async def test_errors_have_one_shape(client, method, path, kwargs, status):
    resp = await getattr(client, method)(path, **kwargs)
    assert resp.status == status
    body = await resp.json()
    assert body["ok"] is False and body["status"] == status and isinstance(body["error"], str) and body["error"]
    assert "Traceback" not in body["error"]


async def test_body_too_large_is_413(make_client, make_settings, fake_ollama):
    client = await make_client(make_settings(ollama_host=fake_ollama.url, max_body_bytes=2048))
    resp = await client.post("/similar", json={"text": "x" * 5000})
    assert resp.status == 413
    assert "too large" in (await resp.json())["error"]


async def test_embedder_down_gives_keyword_mode_not_an_error(make_client, make_settings):
    client = await make_client(make_settings(), embedded=False)
    body = await (await client.get("/search", params={"q": "covering index"})).json()
    assert body["mode"] == "keyword" and body["results"]

    async def worker_saw_it_down():
        status = await (await client.get("/status")).json()
        return status["embedder"]["reachable"] is False and status

    status = await wait_until(worker_saw_it_down)
    assert status["pending"] == status["chunks"] > 0 and status["embedder"]["error"]


async def test_token_rule_in_process(make_client, make_settings, fake_ollama):
    client = await make_client(make_settings(ollama_host=fake_ollama.url, token="tok"))
    assert (await client.get("/health")).status == 200
    assert (await client.get("/status")).status == 401
    assert (await client.get("/status", headers={"Authorization": "Bearer tok"})).status == 200
    assert (await client.get("/status", headers={"Authorization": "Basic tok"})).status == 401


async def test_no_secret_in_any_response(client):
    for word in SECRET_WORDS:
        for path, params in (("/search", {"q": word}), ("/similar", None)):
            if params is None:
                resp = await client.post("/similar", json={"text": word})
            else:
                resp = await client.get(path, params=params)
            assert word not in await resp.text()


async def test_a_query_of_particles_alone_finds_nothing_and_says_so(client):
    # "の" alone found the Japanese notes holding it (nearly every one) and /recall
    # came back empty without a word why.
    for q in ("の", "の？", "は が", "的"):
        body = await (await client.get("/search", params={"q": q})).json()
        assert (body["results"], body.get("note")) == ([], "nothing to search for: the query is only stop words or particles"), q
    assert (await (await client.get("/search", params={"q": "日本語"})).json())["results"]
    for question in ("の", "the"):
        body = await (await client.post("/recall", json={"question": question})).json()
        assert body["notes"] == [] and body["note"].startswith("nothing to search for"), question
