"""A question asked while Ollama is busy or hung on the embedding: the real daemon waits
``search_embed_wait`` for the question's embedding, as ``/search`` does, then grounds
the answer on the keyword candidates (``mode`` "keyword"), not the embedder's whole
timeout; the embedding goes on and serves the next question of those words. The same
for a grounded chat of the Ollama-compatible API. Asserted on events (the answer came
while the fake Ollama still held the embedding), never on elapsed time."""

from __future__ import annotations

import json

import aiohttp

from tests.runners import start_daemon

# Longer than any wait of this test: without the bounded wait, the answer never comes in time.
EMBED_TIMEOUT = "600"
WAIT_S = 60


async def post(daemon, path: str, body: dict) -> tuple[int, dict | list]:
    async with aiohttp.ClientSession(headers=daemon.headers, timeout=aiohttp.ClientTimeout(total=WAIT_S)) as s:
        async with s.post(daemon.url + path, json=body) as resp:
            text = await resp.text()
            if resp.content_type == "application/x-ndjson":
                return resp.status, [json.loads(line) for line in text.splitlines()]
            return resp.status, json.loads(text)


async def test_an_ask_while_the_embedder_hangs_is_grounded_on_the_keyword_matches(tmp_path, roam_dir, fake_ollama):
    # Ollama busy with a long answer, or hung: /search answered by keywords after 8 s, but
    # /ask (the page's, Emacs's) waited embed_timeout (60 s) for the question's vector.
    fake_ollama.state.chat_reply = "Remove the lower leaves [1]."
    daemon = await start_daemon(
        tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True,
        env={"ARCOLOGY_ORACLE_SEARCH_EMBED_WAIT": "0.5", "ARCOLOGY_ORACLE_EMBED_TIMEOUT": EMBED_TIMEOUT},
    )  # fmt: skip
    try:
        state = fake_ollama.state
        state.configure({"fault_paths": ["/api/embed"], "hang": True, "hang_max": 3600})
        status, found = await daemon.get_json("/search", q="tomato blight", k="50")
        assert status == 200 and found["mode"] == "keyword", found
        keyword_matches = {r["file"] for r in found["results"]}

        status, answer = await post(daemon, "/ask", {"question": "tomato blight", "stream": False})
        assert status == 200, answer
        assert state.hanging.is_set() and not state.hang_release.is_set()  # came while the embedding hung
        assert answer["answer"] == "Remove the lower leaves [1]." and answer["mode"] == "keyword", answer
        assert answer["sources"] and any("Blight" in s["heading"] for s in answer["sources"]), answer["sources"]
        assert {s["file"] for s in answer["sources"]} <= keyword_matches, (answer, found)

        # Streamed (the web page's ask): the sources event says so too.
        status, events = await post(daemon, "/ask", {"question": "tomato blight", "stream": True})
        assert status == 200 and events[0]["type"] == "sources" and events[0]["mode"] == "keyword", events
        assert events[-1]["type"] == "done", events

        # A grounded chat of the Ollama-compatible API retrieves the same way.
        chat = {"model": "llama3.2+notes", "stream": False, "messages": [{"role": "user", "content": "tomato blight"}]}
        status, replied = await post(daemon, "/api/chat", chat)
        assert status == 200 and replied["message"]["content"].startswith("Remove the lower leaves [1]."), replied
        assert "Blight and diseases" in replied["message"]["content"], replied  # its Sources: list
        grounding = state.requests["/api/chat"][-1]["messages"][0]["content"]
        assert "Blight" in grounding, grounding
        assert not state.hang_release.is_set()

        # The embedding came after all: the same question uses it.
        state.configure({"hang": False})
        state.release()
        await state.wait_for("/api/embed")
        status, answer = await post(daemon, "/ask", {"question": "tomato blight", "stream": False})
        assert status == 200 and answer["mode"] == "vector", answer
    finally:
        fake_ollama.state.release()
        daemon.stop()
