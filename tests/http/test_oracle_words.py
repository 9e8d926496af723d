"""The oracle's words are not the user's notes (issue 26): an answer the daemon wrote into
a conversation (``:ROLE: oracle``, its ``Sources:`` list of links, as answers were written
before) is no result of /similar, no place for a suggested link, and no link of the
graph; /search shows it and the conversation's turns, marked. A conversation's own turns
are never the sources of its answer."""

from __future__ import annotations

from arcology_oracle.answers.oracle import Oracle
from arcology_oracle.ollama.chat import OllamaChat
from tests.org_samples import IDS

TALK = "1111bbbb-0000-4000-8000-000000000001"
TALK_FILE = "sourdough-talk.org"
CONVERSATION = (
    f":PROPERTIES:\n:ID: {TALK}\n:END:\n#+title: Sourdough talk\n\n"
    "* Sourdough questions\n"
    "** Me\nHow do I revive a sluggish sourdough starter that smells of acetone?\n"
    "** Oracle\n:PROPERTIES:\n:ROLE:     oracle\n:ORACLE_MODEL: m\n:END:\n"
    "Feed the sluggish sourdough starter with flour and water twice a day, keep the bread "
    "dough warm during bulk fermentation and mind the hydration of the loaf [1].\n\n"
    f"Sources:\n- [1] [[id:{IDS['starter']}][Starter maintenance]]\n"
)
ORACLE_LINE = CONVERSATION.splitlines().index("** Oracle") + 1


async def get(client, path, **params):
    resp = await client.get(path, params={k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in params.items()})
    body = await resp.json()
    assert resp.status == 200, body
    return body


async def talk_client(make_client, settings, roam_dir):
    (roam_dir / TALK_FILE).write_text(CONVERSATION, encoding="utf-8")
    return await make_client(settings)


async def test_an_oracle_answer_is_no_link_of_the_graph(make_client, settings, roam_dir):
    client = await talk_client(make_client, settings, roam_dir)
    starter = await get(client, f"/nodes/{IDS['starter']}")
    assert TALK not in [b["node_id"] for b in starter["backlinks"]]
    talk = await get(client, f"/nodes/{TALK}")
    assert talk["links"] == []
    # So Starter maintenance, "linked" only by the oracle's citation, may be suggested.
    suggested = await get(client, "/suggest-links", node=TALK, k=50, all=True)
    assert IDS["starter"] in [s["node_id"] for s in suggested["suggestions"]]


async def test_an_oracle_answer_is_no_result_and_no_place_for_a_link(make_client, settings, roam_dir):
    client = await talk_client(make_client, settings, roam_dir)
    for query in ({"node": IDS["sourdough"]}, {"node": IDS["starter"]}, {"file": "sourdough-baking.org", "line": 1}):
        results = (await get(client, "/similar", k=50, all=True, **query))["results"]
        assert TALK in [r["node_id"] for r in results], "the conversation's own turns are the user's words"
        assert all(r["role"] != "oracle" and r["heading"] != "Oracle" for r in results), query
    suggested = await get(client, "/suggest-links", node=TALK, k=50, all=True)
    assert suggested["suggestions"]
    for s in suggested["suggestions"]:
        assert s["heading"]["heading"] != "Oracle"
        assert s["paragraph"] is None or s["paragraph"]["end_line"] < ORACLE_LINE, s


async def test_search_marks_oracle_answers_and_conversation_turns(make_client, settings, roam_dir):
    client = await talk_client(make_client, settings, roam_dir)
    results = (await get(client, "/search", q="sluggish sourdough starter acetone", k=20))["results"]
    roles = {(r["file"], r["heading"]): r["role"] for r in results}
    assert roles[(TALK_FILE, "Oracle")] == "oracle"
    assert roles[(TALK_FILE, "Me")] == "conversation"
    assert roles.get(("sourdough-baking.org", "Reviving a sluggish starter"), None) is None


async def test_a_conversation_never_cites_its_own_turns(index, settings, roam_dir, fake_ollama):
    (roam_dir / TALK_FILE).write_text(CONVERSATION, encoding="utf-8")
    await index.reconcile()
    await index.embed_pending()
    follow_up = "** Me again\nAnd does the acetone smell of a sluggish sourdough starter go away?\n"
    org = CONVERSATION.split("\n* ", 1)[1]
    llm = OllamaChat(index.settings)
    try:
        result = await Oracle(index, llm).converse("* " + org + follow_up)
    finally:
        await llm.close()
    assert result.sources, "the notes about starters are still its sources"
    cited = [(s.file, s.heading) for s in result.sources]
    turns = {(TALK_FILE, h) for h in ("Sourdough questions", "Me", "Oracle")}
    assert not turns & set(cited), cited
