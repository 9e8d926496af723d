"""A stop of the daemon ends the compatible APIs' streams in their own shape: a client of
the OpenAI API (gptel, through curl) or of Ollama's reads an error frame and the chunked
body's end. Their handlers watch for the stop by themselves (``cancelled_on_disconnect``),
and the Stopping that left them once the stream had begun made the middleware write a
whole ``HTTP/1.1 503`` response into the 200's chunked body (curl: "Illegal or missing
hexadecimal sequence in chunked-encoding")."""

from __future__ import annotations

import asyncio
import json
import signal

import aiohttp

from tests.runners import wait_until

MESSAGES = [{"role": "user", "content": "sourdough starter"}]
STOPPING = "the daemon is stopping"


async def test_a_stop_ends_each_compatible_stream_with_an_error_frame(daemon, fake_ollama):
    state = fake_ollama.state
    state.stream_gate = asyncio.Event()  # every answer waits after its first piece
    asks = [
        ("/v1/chat/completions", "llama3.2+notes"), ("/v1/chat/completions", "llama3.2"),
        ("/api/chat", "llama3.2+notes"), ("/api/chat", "llama3.2"),
    ]  # fmt: skip
    async with aiohttp.ClientSession(headers=daemon.headers) as session:
        responses = []
        for path, model in asks:
            resp = await session.post(daemon.url + path, json={"model": model, "stream": True, "messages": MESSAGES})
            assert resp.status == 200 and (await resp.content.readline()).strip()
            responses.append(resp)
        await wait_until(lambda: state.count("/api/chat") == len(asks))

        daemon.proc.send_signal(signal.SIGTERM)
        rests = [await asyncio.wait_for(resp.content.read(), 30) for resp in responses]
    sse = [json.loads(line.removeprefix(b"data: ")) for rest in rests[:2] for line in rest.splitlines() if line]
    assert sse == [{"error": {"message": STOPPING, "type": "api_error"}}] * 2
    assert [json.loads(rest) for rest in rests[2:]] == [{"error": STOPPING}] * 2
    assert await asyncio.to_thread(daemon.proc.wait, 30) == 0
    await wait_until(lambda: state.client_disconnects >= len(asks))
