"""A heading holding a grounded model's reply (an org-ai block with ``llama3.2+notes``, a
gptel chat's reply) and lines of the user's own besides (a paragraph above the block, text
typed under the reply) is the user's note, read without the reply (notes/oracle_words.py):
/similar, /search and summaries find the user's lines, and the reply's words never come
back as the user's. The chat stays dialogue for /recall. (A heading holding nothing but a
prompt and its reply stays the oracle's: test_oracle_words_org_ai.py and _gptel.py.)
Against the real daemon and the fake Ollama."""

from __future__ import annotations

import json

from arcology_oracle.mcp_server.views import org_text
from tests.http.test_oracle_words_gptel import with_bounds
from tests.org_samples import IDS

MINE = "8888cccc-0000-4000-8000-000000000008"
CHAT = "9999cccc-0000-4000-8000-000000000009"
ORG_AI = (
    f":PROPERTIES:\n:ID: {CHAT}\n:END:\n#+title: Tenmoku tiles\n\n* Tenmoku test tiles\n"
    "MYPARAGRAPH my tenmoku glaze test tiles came out rust brown at cone ten, thick where dipped twice.\n\n"
    "#+begin_ai :model llama3.2+notes\n[ME]: Why did my tenmoku tiles turn rust brown?\n\n"
    "[AI]: ORACLEREPLY a tenmoku turns rust brown when the iron saturates; your kiln log says cone ten.\n#+end_ai\n"
)
GPTEL_REPLY = "GPTELREPLY hold the tenmoku firing at the top for twenty minutes, as your kiln log says."
GPTEL = with_bounds(
    ":PROPERTIES:\n:GPTEL_MODEL: llama3.2+notes\n:GPTEL_BOUNDS: ((response {points}))\n:END:\n#+title: Tenmoku chat\n\n",
    f"* How long should the tenmoku hold?\n{GPTEL_REPLY}\n\n"
    "MYTYPED I tried a twenty minute hold on the tenmoku tiles and the rust brown spots went away.\n",
    [GPTEL_REPLY],
)
FILES = {
    "tenmoku-mine.org": (
        f":PROPERTIES:\n:ID: {MINE}\n:END:\n#+title: Tenmoku glaze\n\n"
        "* Tenmoku glaze test tiles\nMy tenmoku glaze test tiles came out rust brown at cone ten; the tiles dipped twice.\n"
    ),
    "tenmoku-org-ai.org": ORG_AI,
    "tenmoku-gptel.org": GPTEL,
}
PARAGRAPH = ("tenmoku-org-ai.org", "Tenmoku test tiles")
TYPED = ("tenmoku-gptel.org", "How long should the tenmoku hold?")


async def vault_client(make_client, settings, roam_dir):
    for name, text in FILES.items():
        (roam_dir / name).write_text(text, encoding="utf-8")
    return await make_client(settings)


async def search_roles(client, query: str) -> dict[tuple[str, str], dict]:
    resp = await client.get("/search", params={"q": query, "k": "30"})
    return {(r["file"], r["heading"]): r for r in (await resp.json())["results"]}


async def test_the_users_lines_beside_a_grounded_reply_are_found_and_the_reply_is_not(make_client, settings, roam_dir):
    client = await vault_client(make_client, settings, roam_dir)
    resp = await client.get("/similar", params={"node": MINE, "k": "50", "all": "true"})
    results = (await resp.json())["results"]
    found = {(r["file"], r["heading"]): r["role"] for r in results}
    assert found.get(PARAGRAPH, "missing") is None, "the user's paragraph beside an org-ai chat is their note"
    assert found.get(TYPED, "missing") is None, "the user's text under a gptel reply is their note"
    assert "ORACLEREPLY" not in json.dumps(results) and "GPTELREPLY" not in json.dumps(results)
    for query, place in (("MYPARAGRAPH rust brown", PARAGRAPH), ("MYTYPED twenty minute hold", TYPED)):
        hits = await search_roles(client, query)
        assert place in hits and hits[place]["role"] is None, (query, hits)
    for query in ("ORACLEREPLY", "GPTELREPLY", "tenmoku rust brown cone ten twenty minutes"):
        for place, hit in (await search_roles(client, query)).items():
            shown = json.dumps(hit)
            assert hit["role"] is not None or ("ORACLEREPLY" not in shown and "GPTELREPLY" not in shown), (query, hit)
    resp = await client.get("/suggest-links", params={"node": CHAT, "k": "50", "all": "true"})
    for s in (await resp.json())["suggestions"]:
        assert s["paragraph"] is None or "ORACLEREPLY" not in s["paragraph"]["text"], s
    # The chat is still dialogue: /recall gives it with its speakers, the reply included.
    resp = await client.post("/recall", json={"question": "why did my tenmoku tiles turn rust brown?", "k": 10})
    notes = [n for n in (await resp.json())["notes"] if n["file"] == "tenmoku-org-ai.org"]
    assert notes and "llama3.2+notes" in notes[0]["speakers"], notes


async def test_a_summary_holds_the_users_lines_and_not_the_reply(make_client, settings, roam_dir, fake_ollama):
    client = await vault_client(make_client, settings, roam_dir)
    resp = await client.post("/summarize", json={"node": CHAT})
    body = await resp.json()
    assert resp.status == 200, body
    prompts = json.dumps(fake_ollama.state.chats)
    assert "MYPARAGRAPH" in prompts, "the user's paragraph is summarized"
    assert "ORACLEREPLY" not in prompts



FILE_CHAT = "aaaacccc-0000-4000-8000-00000000000a"
FILE_LEVEL_CHAT = (
    f":PROPERTIES:\n:ID: {FILE_CHAT}\n:END:\n#+title: Shino glaze chat\n#+filetags: :pottery:\n\n"
    "#+begin_ai :model llama3.2+notes\n[ME]: Why did my shino glaze carbon trap?\n\n"
    "[AI]: FILEREPLY a shino glaze traps carbon when the kiln is reduced early; your tenmoku glaze test tiles say so.\n#+end_ai\n"
)


async def test_a_file_holding_nothing_but_a_grounded_chat_is_no_note_of_the_users(make_client, settings, roam_dir, fake_ollama):
    """The file's keywords (``#+title``, ``#+filetags``) are no one's lines: a file whose
    record holds only them and an org-ai chat with a grounded model is the oracle's, as a
    heading holding only the chat is (it was the user's note, its prompt its text)."""
    (roam_dir / "shino-chat.org").write_text(FILE_LEVEL_CHAT, encoding="utf-8")
    client = await vault_client(make_client, settings, roam_dir)
    resp = await client.get("/similar", params={"node": MINE, "k": "50", "all": "true"})
    found = {(r["file"], r["heading"]) for r in (await resp.json())["results"]}
    assert ("shino-chat.org", "Shino glaze chat") not in found, found
    resp = await client.post("/summarize", json={"node": FILE_CHAT})
    body = await resp.json()
    assert resp.status == 400 and "only the oracle's own words" in body["error"], body
    assert fake_ollama.state.chats == []


GPTEL_NODE = "bbbbcccc-0000-4000-8000-00000000000b"
GPTEL_WITH_ID = with_bounds(
    f":PROPERTIES:\n:ID: {GPTEL_NODE}\n:GPTEL_MODEL: llama3.2+notes\n:GPTEL_BOUNDS: ((response {{points}}))\n:END:\n"
    "#+title: Tenmoku chat\n\n",
    f"* How long should the tenmoku hold?\n{GPTEL_REPLY}\n\n"
    "MYTYPED I tried a twenty minute hold on the tenmoku tiles and the rust brown spots went away.\n",
    [GPTEL_REPLY],
)


async def test_a_note_marks_the_reply_in_the_users_heading(make_client, settings, roam_dir):
    """``/nodes/ID`` (what MCP's read_note rebuilds the note from) gives the heading as
    the user wrote it, reply and all, for it is in the file, but says which of its lines
    are the reply (``replies``), and read_note marks them: the heading is the user's
    (``role`` null), so nothing told a reader the reply's words from theirs."""
    (roam_dir / "tenmoku-gptel-node.org").write_text(GPTEL_WITH_ID, encoding="utf-8")
    client = await vault_client(make_client, settings, roam_dir)
    for node, name, heading, reply in (
        (CHAT, "tenmoku-org-ai.org", PARAGRAPH[1], "ORACLEREPLY"),
        (GPTEL_NODE, "tenmoku-gptel-node.org", TYPED[1], "GPTELREPLY"),
    ):
        resp = await client.get(f"/nodes/{node}")
        body = await resp.json()
        assert resp.status == 200, body
        lines = (roam_dir / name).read_text(encoding="utf-8").splitlines()
        marked = {}
        for h in body["headings"]:
            marked[h["heading"]] = [lines[n - 1] for span in h["replies"] for n in range(span["line"], span["end_line"] + 1)]
            assert h["end_line"] >= h["line"], h
        mixed = next(h for h in body["headings"] if h["heading"] == heading)
        assert mixed["role"] is None and reply in mixed["body"], mixed
        assert [line for line in marked.pop(heading) if line.strip()] == [n for n in lines if reply in n], (name, mixed)
        assert not any(marked.values()), marked
        # /heading (the web page's source text) says the same of the heading.
        resp = await client.get("/heading", params={"file": name, "line": str(mixed["line"])})
        alone = await resp.json()
        assert (alone["role"], alone["replies"], alone["end_line"]) == (None, mixed["replies"], mixed["end_line"]), alone
        # read_note's org text (MCP) puts the reply between #+begin_oracle and #+end_oracle.
        said = next(n for n in lines if reply in n)
        assert f"\n#+begin_oracle\n{said}\n#+end_oracle\n" in org_text(body)[0], org_text(body)[0]


LINKED_NODE = "ccccdddd-0000-4000-8000-00000000000c"
LINKING_REPLY = f"LINKREPLY see [[id:{IDS['starter']}][Starter maintenance]] before the next tenmoku firing."
LINKING_CHAT = with_bounds(
    f":PROPERTIES:\n:ID: {LINKED_NODE}\n:GPTEL_MODEL: llama3.2+notes\n:GPTEL_BOUNDS: ((response {{points}}))\n:END:\n"
    "#+title: Tenmoku links\n\n",
    f"* Which note holds the feeding?\n{LINKING_REPLY}\n\n"
    f"MYLINKED I linked [[id:{IDS['hydration']}][Bread Hydration]] myself, under the reply.\n",
    [LINKING_REPLY],
)


async def test_a_link_the_reply_wrote_is_not_the_users(make_client, settings, roam_dir):
    """A grounded reply's own ``[[id:]]`` link, in a heading of the user's, is the model's
    citation, as its ``Sources:`` list is: no link of the user's note (the link graph,
    backlinks, the "linked" marks). The user's own link under it stays."""
    (roam_dir / "tenmoku-links.org").write_text(LINKING_CHAT, encoding="utf-8")
    client = await make_client(settings)
    note = await (await client.get(f"/nodes/{LINKED_NODE}")).json()
    assert [link["node_id"] for link in note["links"]] == [IDS["hydration"]], note["links"]
    starter = await (await client.get(f"/nodes/{IDS['starter']}")).json()
    assert LINKED_NODE not in [b["node_id"] for b in starter["backlinks"]], starter["backlinks"]
    bread = await (await client.get(f"/nodes/{IDS['hydration']}")).json()
    assert LINKED_NODE in [b["node_id"] for b in bread["backlinks"]], bread["backlinks"]
