"""A note saved in Latin-1 (examples/roam/creme-brulee.org, no coding cookie: Emacs reads
such bytes as Latin-1 and shows "crème brûlée"). The reader decoded every note as UTF-8,
and its snippets, search results and the notes put in /ask's prompt said "cr\\ufffdme
br\\ufffdl\\ufffde". They say what Emacs shows; a note whose cookie names its coding is
read in that coding."""

from __future__ import annotations

import json

from arcology_oracle.notes.reader import read_org_bytes

SHOWN = "crème brûlée"


async def test_a_latin1_note_reads_as_emacs_shows_it_in_search_similar_and_ask(client, fake_ollama):
    body = await (await client.get("/search", params={"q": "saved by an old editor in Latin-1", "k": "3"})).json()
    found = [r for r in body["results"] if r["file"] == "creme-brulee.org"]
    assert found and SHOWN in found[0]["snippet"], body["results"]

    body = await (await client.post("/similar", json={"text": "saved by an old editor in Latin-1", "k": 20})).json()
    found = [r for r in body["results"] if r["file"] == "creme-brulee.org"]
    assert any(SHOWN in r["snippet"] for r in found), found
    assert not any("\ufffd" in json.dumps(r, ensure_ascii=False) for r in found), found

    resp = await client.post("/ask", json={"question": "what did the old editor save in Latin-1?"})
    assert resp.status == 200, await resp.text()
    data = await resp.json()
    assert any(s["file"] == "creme-brulee.org" for s in data["sources"]), data["sources"]
    prompt = json.dumps(fake_ollama.state.chats, ensure_ascii=False)
    assert SHOWN in prompt and "\ufffd" not in prompt


def test_a_note_read_in_the_coding_its_cookie_names():
    text = "# -*- coding: koi8-r -*-\n#+title: Заметки\n* Открыто\nпривет\n"
    parsed = read_org_bytes(text.encode("koi8-r"), "notes.org", log_problems=False)
    assert parsed.title == "Заметки"
    assert [(h.title, h.text) for h in parsed.headings if h.level] == [("Открыто", "привет")]


async def test_link_suggestions_for_a_latin1_note_quote_its_paragraphs_as_emacs_shows_them(client):
    node = "24844e83-5c48-40e9-816e-17b1ff9cb313"  # creme-brulee.org
    resp = await client.get("/suggest-links", params={"node": node, "k": "20", "all": "true"})
    assert resp.status == 200, await resp.text()
    paragraphs = [s["paragraph"]["text"] for s in (await resp.json())["suggestions"] if s.get("paragraph")]
    assert any(SHOWN in p for p in paragraphs), paragraphs
    assert not any("\ufffd" in p for p in paragraphs), paragraphs
