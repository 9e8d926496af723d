"""The answers that name their sources after the model's call (``POST /ask`` and
``POST /summarize`` answered whole, ``GET /ask``'s ``Sources:`` list, ``/converse``'s
heading and its ``:SOURCES:``, and the streamed ones, whose ``sources`` event is sent once
the model's first piece has come) name only the notes the index still holds then: a note
made private while the model was answering is not named (its title, its ID). Its text went
into the prompt while it was public; what the daemon sends, or has written into a note,
once it is private must not name it.

Real daemon and org files; the fake Ollama holds the answer (after its first piece, or,
for the streamed routes, before it) until the note has left the index (as in
test_compat_sources_made_private.py)."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest

from tests.runners import start_daemon, wait_until

NODE = "cccccccc-0000-4000-8000-000000000002"
NOTE = f":PROPERTIES:\n:ID: {NODE}\n:END:\n#+title: Racetitleibis\n{{tags}}\n* Plans\nThe raceplans for the garden.\n"
QUESTION = "what are the raceplans for the garden?"
CONVERSATION = f"* Garden talk\n** {QUESTION}\n"

# route -> (method, path, what it is sent); the streamed ones are held before the first piece.
ROUTES = {
    "POST /ask streamed": ("post", "/ask", {"json": {"question": QUESTION, "stream": True}}),
    "POST /summarize streamed": ("post", "/summarize", {"json": {"node": NODE, "stream": True}}),
    "POST /ask": ("post", "/ask", {"json": {"question": QUESTION, "stream": False}}),
    "GET /ask": ("get", "/ask", {"params": {"q": QUESTION}}),
    "POST /summarize": ("post", "/summarize", {"json": {"node": NODE, "stream": False}}),
    "POST /converse": ("post", "/converse", {"json": {"org": CONVERSATION, "file": "talk.org", "line": 1}}),
}


@pytest.mark.parametrize("route", list(ROUTES))
async def test_a_note_made_private_while_the_model_answers_is_not_named(route, tmp_path, roam_dir, fake_ollama):
    note = roam_dir / "race.org"
    note.write_text(NOTE.format(tags=""), encoding="utf-8")
    talk = roam_dir / "talk.org"  # where Emacs inserts a /converse answer
    talk.write_text(CONVERSATION, encoding="utf-8")
    before = talk.read_bytes()
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    state = fake_ollama.state
    state.chat_reply = "Start with compost."  # quotes nothing of the prompt
    streamed = route.endswith("streamed")
    if streamed:  # the chat waits before its first byte
        state.fault_paths, state.hang_release, state.hang = {"/api/chat"}, asyncio.Event(), True
    else:
        state.stream_gate = asyncio.Event()
    method, path, sent = ROUTES[route]

    async def gone() -> bool:
        _, body = await daemon.get_json("/search", q="raceplans")  # talk.org's question is found
        return NODE not in str(body["results"])

    async def answer(session: aiohttp.ClientSession) -> str:
        async with session.request(method, daemon.url + path, **sent) as resp:
            text = await resp.text()
            assert resp.status == 200, text
            return text

    try:
        async with aiohttp.ClientSession(headers=daemon.headers) as session:
            asking = asyncio.create_task(answer(session))
            await asyncio.wait_for((state.hanging if streamed else state.first_piece_sent).wait(), 30)
            assert "raceplans for the garden." in str(state.chats[-1])  # the note was a source when asked
            note.write_text(NOTE.format(tags="#+filetags: :private:"), encoding="utf-8")
            await wait_until(gone, timeout=20)
            (state.hang_release if streamed else state.stream_gate).set()
            text = await asyncio.wait_for(asking, 30)
    finally:
        daemon.stop()
    assert "compost" in text
    if route == "POST /converse":
        # As arcology-oracle-converse inserts the answer: the conversation's last child.
        # The note gains that heading and nothing else, and no byte of it names the node.
        org = json.loads(text)["org"].encode("utf-8")
        talk.write_bytes(before + org)
        after = talk.read_bytes()
        assert after[: len(before)] == before and after[len(before) :] == org
        assert NODE.encode() not in after and b"Racetitleibis" not in after, after.decode()
        # Its only source gone, it cites none, and says why (not "none were relevant").
        assert b":SOURCES:" not in org and org.endswith(b"Sources:\n- none: the notes used have left the index since"
                                                          b" (made private or deleted)\n"), org.decode()
    assert NODE not in text and "Racetitleibis" not in text, text[-400:]
