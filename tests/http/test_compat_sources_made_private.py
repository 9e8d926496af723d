"""A grounded answer of the compatible APIs ends with a ``Sources:`` block, written after
the model's last piece: a note made private while the model was answering is not named
there (its title, its ID), for by then it is private. Its text went into the prompt while
it was public; what the daemon sends once it is private must not name it.

Real daemon and org files; the fake Ollama holds the answer after its first piece until
the note has left the index."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from tests.runners import start_daemon, wait_until

NODE = "cccccccc-0000-4000-8000-000000000001"
NOTE = f":PROPERTIES:\n:ID: {NODE}\n:END:\n#+title: Racetitleibis\n{{tags}}\n* Plans\nThe raceplans for the garden.\n"
QUESTION = [{"role": "user", "content": "what are the raceplans for the garden?"}]


@pytest.mark.parametrize("path", ["/api/chat", "/v1/chat/completions"])
async def test_a_note_made_private_while_the_model_answers_is_not_among_the_sources(path, tmp_path, roam_dir, fake_ollama):
    note = roam_dir / "race.org"
    note.write_text(NOTE.format(tags=""), encoding="utf-8")
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    state = fake_ollama.state
    state.chat_reply = "Start with compost."  # quotes nothing of the prompt
    state.stream_gate = asyncio.Event()

    async def gone() -> bool:
        _, body = await daemon.get_json("/search", q="raceplans")
        return not body["results"]

    try:
        async with aiohttp.ClientSession(headers=daemon.headers) as session:
            body = {"model": "llama3.2+notes", "messages": QUESTION, "stream": True}
            async with session.post(daemon.url + path, json=body) as resp:
                assert resp.status == 200
                await asyncio.wait_for(state.first_piece_sent.wait(), 30)
                assert "raceplans for the garden." in str(state.chats[-1])  # the note was a source when asked
                note.write_text(NOTE.format(tags="#+filetags: :private:"), encoding="utf-8")
                await wait_until(gone, timeout=20)
                state.stream_gate.set()
                answer = (await resp.read()).decode()
    finally:
        daemon.stop()
    assert "compost" in answer.replace('"', "")
    assert NODE not in answer and "Racetitleibis" not in answer, answer[-300:]
