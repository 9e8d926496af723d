"""Conversations as memory: turns chunked with their dates, the oracle's own answers kept
out of the evidence (and marked in /similar), and POST /recall with and without
multi_query, against the real daemon and the fake Ollama."""

from __future__ import annotations

import aiohttp
import pytest

from arcology_oracle.answers.recall import search_strings
from arcology_oracle.index.parsing import ParseOptions, parse_note
from tests.runners import start_daemon

CHAT = """#+title: Bread chat
* Rye starter questions
** Which flour should I feed a rye starter?
:PROPERTIES:
:ROLE: user
:CREATED: [2024-04-02 Tue 09:58]
:END:
My rye starter smells of acetone.
** Oracle
:PROPERTIES:
:ROLE:     oracle
:ORACLE_MODEL: llama3.2
:CREATED:  [2024-04-02 Tue 10:00]
:END:
Feed it wholemeal rye using the quokkaberry method twice a day.
"""

GPTEL = """:PROPERTIES:
:GPTEL_MODEL: llama3.2
:GPTEL_BOUNDS: ((response (120 400)))
:END:
#+title: gptel chat
*** How do I prune zucchini plants? [2024-06-01 Sat]
Cut the lower leaves that shade the fruit; remove yellowing leaves first.
"""

OPTIONS = ParseOptions(frozenset({"private"}), 2000, 200)


def test_a_turn_is_chunked_with_its_question_and_date():
    parsed, chunks = parse_note(CHAT.encode(), "chat.org", OPTIONS)
    by_title = {h.title: c for h, c in zip(parsed.headings, chunks)}
    [answer] = by_title["Oracle"]
    assert answer.text.startswith("Bread chat > Rye starter questions > Oracle (2024-04-02)")
    assert "Question: Which flour should I feed a rye starter? My rye starter smells of acetone." in answer.text
    assert answer.text.endswith("Answer:\n\nFeed it wholemeal rye using the quokkaberry method twice a day.")
    [question] = by_title["Which flour should I feed a rye starter?"]
    assert question.text.startswith("Bread chat > Rye starter questions > Which flour should I feed a rye starter? (2024-04-02)")
    # A long answer stays one turn up to three chunk sizes.
    long_chat = CHAT + ("More about feeding ratios and temperatures. " * 100) + "\n"
    parsed, chunks = parse_note(long_chat.encode(), "chat.org", OPTIONS)
    assert len(chunks[-1]) == 1 and len(chunks[-1][0].text) > 4000


def test_gptel_headings_are_turns():
    parsed, chunks = parse_note(GPTEL.encode(), "gptel.org", OPTIONS)
    [turn] = chunks[1]
    assert turn.text.startswith("gptel chat > How do I prune zucchini plants? [2024-06-01 Sat] (2024-06-01)")
    # The same text outside a gptel file is chunked as any heading (no date line).
    _, plain = parse_note(GPTEL.split("#+title", 1)[1].join(["#+title", ""]).encode(), "plain.org", OPTIONS)
    assert "(2024-06-01)" not in plain[1][0].text


def test_search_strings_from_a_reply():
    reply = "1. rye flour starter\n- \"feeding schedule\"\n\nRye starter?\nrye flour starter\nfour\nfive"
    assert search_strings(reply, "rye starter?") == ["rye flour starter", "feeding schedule", "four"]


async def post(daemon, path: str, body: dict):
    async with aiohttp.ClientSession(headers=daemon.headers) as session:
        async with session.post(daemon.url + path, json=body) as resp:
            return resp.status, await resp.json()


@pytest.fixture
async def chat_daemon(tmp_path, roam_dir, fake_ollama):
    (roam_dir / "chat.org").write_text(CHAT)
    d = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    yield d
    d.stop()


async def test_own_answers_are_not_evidence_but_are_marked_in_search(chat_daemon, fake_ollama):
    _, found = await chat_daemon.get_json("/search", q="quokkaberry")
    assert [(r["heading"], r["role"]) for r in found["results"]] == [("Oracle", "oracle")]
    # Not the user's notes: never a similar note (issue 26).
    status, similar = await post(chat_daemon, "/similar", {"text": "quokkaberry method wholemeal rye", "all": True})
    assert status == 200 and "Oracle" not in [r["heading"] for r in similar["results"]]

    status, answer = await post(chat_daemon, "/ask", {"question": "quokkaberry method"})
    assert status == 200 and "Oracle" not in [s["heading"] for s in answer["sources"]]
    assert "quokkaberry" not in fake_ollama.state.chats[-1][0]["content"]  # not in the prompt
    # The user's own question in the same conversation is evidence: the conversation is
    # recalled as a window of its turns (issue 28), the oracle's turn in it labelled.
    status, recalled = await post(chat_daemon, "/recall", {"question": "rye starter acetone smell"})
    assert status == 200 and recalled["queries"] == ["rye starter acetone smell"]
    [talk] = [n for n in recalled["notes"] if n["file"] == "chat.org"]
    assert talk["heading"] == "Rye starter questions" and talk["speakers"] == ["Me", "Oracle"]
    assert "Me: Which flour should I feed a rye starter?\n\nMy rye starter smells of acetone." in talk["text"]
    assert "Oracle: Feed it wholemeal rye" in talk["text"]


async def test_a_setting_lets_own_answers_in(tmp_path, roam_dir, fake_ollama):
    (roam_dir / "chat.org").write_text(CHAT)
    d = await start_daemon(
        tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True,
        env={"ARCOLOGY_ORACLE_ORACLE_ANSWERS_AS_EVIDENCE": "true"},
    )  # fmt: skip
    try:
        status, recalled = await post(d, "/recall", {"question": "quokkaberry method"})
        assert status == 200 and "Oracle" in recalled["notes"][0]["speakers"]
        # In /ask too: the answer's own words reach the prompt, labelled.
        status, _ = await post(d, "/ask", {"question": "quokkaberry method"})
        assert status == 200 and "Oracle: Feed it wholemeal rye using the quokkaberry" in fake_ollama.state.chats[-1][0]["content"]
    finally:
        d.stop()


async def test_recall_multi_query_fuses_the_models_search_strings(chat_daemon, fake_ollama):
    fake_ollama.state.chat_reply = "- sourdough hydration\n2. starter feeding\n"
    status, body = await post(chat_daemon, "/recall", {"question": "how wet should dough be", "multi_query": True, "k": 5})
    assert status == 200, body
    assert body["queries"] == ["how wet should dough be", "sourdough hydration", "starter feeding"]
    system = fake_ollama.state.chats[-1][0]
    assert system["role"] == "system" and "search queries" in system["content"]
    assert 0 < len(body["notes"]) <= 5
    assert {"node_id", "heading", "file", "line", "text", "fused_score"} <= set(body["notes"][0])
    # Notes the extra strings found are fused in ("starter feeding" finds the starter).
    assert any("starter" in n["heading"].lower() or "starter" in n["text"].lower() for n in body["notes"])

    # The chat model down: the question alone is searched, and the answer says why.
    fake_ollama.state.fail_status = 500
    status, body = await post(chat_daemon, "/recall", {"question": "sourdough hydration", "multi_query": True})
    assert status == 200 and body["queries"] == ["sourdough hydration"] and "multi_query_error" in body
    fake_ollama.state.fail_status = None

    status, body = await post(chat_daemon, "/recall", {"question": "what did I bake last week", "since": "2024-01-01"})
    assert status == 200 and body["date_range"]["since"] == "2024-01-01"
    for bad in ({}, {"question": ""}, {"question": "x", "k": 0}, {"question": "x", "multi_query": "maybe"}):
        status, body = await post(chat_daemon, "/recall", bad)
        assert status == 400, (bad, body)


async def test_a_question_holding_every_word_of_a_heading_in_another_form_finds_it(chat_daemon, roam_dir):
    # "when did I bake a sourdough loaf?" left out the journal's "Baked a sourdough loaf":
    # its vector is below the gate, and "bake" was stemmed "bake" where "baked" was "bak",
    # so the heading did not hold every word of the question.
    status, body = await post(chat_daemon, "/recall", {"question": "when did I bake a sourdough loaf?"})
    assert status == 200, body
    found = [(n["file"], n["date"]) for n in body["notes"] if n["heading"] == "Baked a sourdough loaf"]
    assert found == [("journal/2024-03-01.org", "2024-03-01")], body["notes"]
    node = next(n["node_id"] for n in body["notes"] if n["heading"] == "Baked a sourdough loaf")
    assert f":ID:       {node}" in (roam_dir / "journal" / "2024-03-01.org").read_text()
