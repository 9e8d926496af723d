"""One rule decides what is the oracle's words (store/oracle_words.py): besides a heading
with ``:ROLE: oracle``, an answer marked only by the ``:oracle:`` tag or an ``Oracle``
title (the conversation reader reads it as the oracle's turn), the headings below an
answer, and a file whose drawer says ``:ROLE: oracle``. None of them is a result of
/similar, a place for a link or evidence of /ask; /search lists them marked ``oracle``.
The user's own turns stay findable."""

from __future__ import annotations

import json

MINE = "4444bbbb-0000-4000-8000-000000000004"
FILES = {
    "kiln-mine.org": (
        f":PROPERTIES:\n:ID: {MINE}\n:END:\n#+title: My kiln log\n\n"
        "* Zebrafish kiln glaze firing log\nI fired the zebrafish glaze in the kiln at cone six.\n"
    ),
    # An answer below which the model's (or a reader's) sub-headings went.
    "kiln-talk.org": (
        ":PROPERTIES:\n:ID: 1111bbbb-0000-4000-8000-000000000001\n:END:\n#+title: Kiln talk\n\n"
        "* Kiln questions\n** Me\n:PROPERTIES:\n:ROLE: user\n:END:\nWhat about the zebrafish kiln?\n"
        "** Oracle\n:PROPERTIES:\n:ROLE:     oracle\n:END:\nNESTEDROOT zebrafish kiln answer.\n"
        "*** Cone temperatures\nNESTED the zebrafish kiln glaze firing reaches cone six.\n"
    ),
    # An answer marked by its tag only, in a conversation the reader reads as one.
    "kiln-tagged.org": (
        ":PROPERTIES:\n:ID: 3333bbbb-0000-4000-8000-000000000003\n:END:\n#+title: Tagged talk\n\n"
        "* Glaze chat\n** Me\n:PROPERTIES:\n:ROLE: user\n:END:\nWhy does my zebrafish kiln glaze crawl?\n"
        "** Oracle answer :oracle:\nTAGGED zebrafish kiln glaze firing at cone six crawls when too fast.\n"
    ),
    # A summary kept as a file of its own.
    "kiln-summary.org": (
        ":PROPERTIES:\n:ID: 2222bbbb-0000-4000-8000-000000000002\n:ROLE: oracle\n:END:\n#+title: Kiln summary\n\n"
        "* Zebrafish kiln glaze firing\nFILEROLE the zebrafish kiln glaze firing reaches cone six.\n"
    ),
}
ORACLE_HEADINGS = {
    ("kiln-talk.org", "Oracle"), ("kiln-talk.org", "Cone temperatures"),
    ("kiln-tagged.org", "Oracle answer"), ("kiln-summary.org", "Zebrafish kiln glaze firing"),
}


async def vault_client(make_client, settings, roam_dir):
    for name, text in FILES.items():
        (roam_dir / name).write_text(text, encoding="utf-8")
    return await make_client(settings)


async def test_the_oracles_words_are_no_similar_note_and_are_marked_in_search(make_client, settings, roam_dir):
    client = await vault_client(make_client, settings, roam_dir)
    for query in ({"node": MINE}, {"file": "kiln-mine.org", "line": "6"}):
        resp = await client.get("/similar", params={"k": "50", "all": "true", **query})
        results = (await resp.json())["results"]
        found = {(r["file"], r["heading"]) for r in results}
        assert not found & ORACLE_HEADINGS, query
        assert ("kiln-summary.org", "Kiln summary") not in found
        assert ("kiln-tagged.org", "Glaze chat") not in found, "a root holding an answer, as with :ROLE:"
        assert ("kiln-tagged.org", "Me") in found, "the user's turn is theirs"
    resp = await client.get("/suggest-links", params={"node": MINE, "k": "50", "all": "true"})
    suggested = {s["node_id"] for s in (await resp.json())["suggestions"]}
    assert "2222bbbb-0000-4000-8000-000000000002" not in suggested
    resp = await client.get("/search", params={"q": "zebrafish kiln glaze cone", "k": "30"})
    roles = {(r["file"], r["heading"]): r["role"] for r in (await resp.json())["results"]}
    for place in ORACLE_HEADINGS:
        assert roles[place] == "oracle", place
    assert roles[("kiln-mine.org", "Zebrafish kiln glaze firing log")] is None


async def test_ask_gives_the_model_none_of_the_oracles_words(make_client, settings, roam_dir, fake_ollama):
    client = await vault_client(make_client, settings, roam_dir)
    resp = await client.post("/ask", json={"question": "Why does the zebrafish kiln glaze crawl at cone six?"})
    body = await resp.json()
    assert resp.status == 200, body
    assert ("kiln-mine.org", "Zebrafish kiln glaze firing log") in {(s["file"], s["heading"]) for s in body["sources"]}
    prompt = json.dumps(fake_ollama.state.chats[-1])
    for words in ("NESTED", "TAGGED", "FILEROLE"):
        assert words not in prompt, words


async def test_a_summary_is_not_given_the_oracles_words_as_the_users_note(make_client, settings, roam_dir, fake_ollama):
    client = await vault_client(make_client, settings, roam_dir)
    for request in ({"node": "1111bbbb-0000-4000-8000-000000000001"}, {"question": "the zebrafish kiln glaze at cone six"}):
        before = len(fake_ollama.state.chats)
        resp = await client.post("/summarize", json=request)
        body = await resp.json()
        assert resp.status == 200, body
        prompts = json.dumps(fake_ollama.state.chats[before:])
        assert prompts != "[]", request
        for words in ("NESTED", "TAGGED", "FILEROLE"):
            assert words not in prompts, (request, words)
    assert "What about the zebrafish kiln?" in json.dumps(fake_ollama.state.chats), "the user's turn is summarized"
    resp = await client.post("/summarize", json={"node": "2222bbbb-0000-4000-8000-000000000002"})
    assert resp.status == 400, "a note that is only the oracle's words is not summarized as the user's"


async def test_a_nodes_headings_say_whose_words_they_are(make_client, settings, roam_dir):
    # /nodes/ID is what the MCP read_note tool rebuilds a note's org text from.
    client = await vault_client(make_client, settings, roam_dir)
    for node, expected in (
        ("1111bbbb-0000-4000-8000-000000000001", {
            "Kiln talk": None, "Kiln questions": "conversation", "Me": "conversation", "Oracle": "oracle",
            "Cone temperatures": "oracle",
        }),
        ("3333bbbb-0000-4000-8000-000000000003", {"Oracle answer": "oracle", "Me": "conversation"}),
        ("2222bbbb-0000-4000-8000-000000000002", {"Kiln summary": "oracle", "Zebrafish kiln glaze firing": "oracle"}),
        (MINE, {"My kiln log": None, "Zebrafish kiln glaze firing log": None}),
    ):
        resp = await client.get(f"/nodes/{node}")
        roles = {h["heading"]: h["role"] for h in (await resp.json())["headings"]}
        assert {h: roles.get(h, "missing") for h in expected} == expected, node


async def test_no_link_is_placed_in_the_oracles_words(make_client, settings, roam_dir):
    client = await vault_client(make_client, settings, roam_dir)
    for node in ("1111bbbb-0000-4000-8000-000000000001", "3333bbbb-0000-4000-8000-000000000003"):
        resp = await client.get("/suggest-links", params={"node": node, "k": "50", "all": "true"})
        suggestions = (await resp.json())["suggestions"]
        assert MINE in {s["node_id"] for s in suggestions}, node
        for s in suggestions:
            assert s["heading"]["heading"] not in {"Oracle", "Cone temperatures", "Oracle answer"}, (node, s)
            assert s["paragraph"] is None or not {"NESTED", "TAGGED"} & set(s["paragraph"]["text"].split()), (node, s)
