"""A request to Ollama cancelled twice still closes its connection, so Ollama stops
generating (``ollama/client.py``, :func:`~arcology_oracle.ollama.client.cancelled_once`).

When a client drops a streamed answer, aiohttp cancels the handler (handler cancellation)
and the daemon's disconnect watcher cancels it too, and nothing keeps the two apart: the
second cancellation can land while the first one's clean-up is closing the connection to
Ollama. httpcore closes it inside the cancelled task, past an await (a lock) that a second
``Task.cancel()`` cuts short, and the connection stayed open and checked out, with Ollama
generating for nobody (how ``tests/http/test_load.py`` lost a dropped stream now and then).

Each case cancels the request, lets ``turns`` turns of the event loop pass (no sleeping:
callbacks scheduled with ``call_soon`` run one turn later), and cancels it again, so the
second cancellation lands at each of the first awaits of the clean-up in turn.
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing

import pytest

from arcology_oracle.ollama.chat import OllamaChat
from arcology_oracle.ollama.proxy import Upstream
from tests.runners import wait_until

QUESTION = [{"role": "user", "content": "how do I feed a sourdough starter"}]


def cancel_twice(task: asyncio.Task, turns: int) -> None:
    """Cancel ``task`` now, and again ``turns`` (>= 1) turns of the event loop later."""
    loop = asyncio.get_running_loop()

    def again(left: int) -> None:
        if left:
            loop.call_soon(again, left - 1)
        else:
            task.cancel()

    task.cancel()
    loop.call_soon(again, turns - 1)


async def read_chat(chat: OllamaChat, reached: asyncio.Event) -> None:
    """Stream an answer through :class:`OllamaChat` (``/ask``, summaries, conversations)."""
    async with aclosing(chat.stream_chat(QUESTION)) as pieces:
        async for _ in pieces:
            reached.set()


async def read_proxy(upstream: Upstream, reached: asyncio.Event) -> None:
    """Stream an answer through the compatible APIs' :class:`Upstream`."""
    async with upstream.stream("/api/chat", {"model": "llama3.2", "messages": QUESTION}) as lines:
        async for _ in lines:
            reached.set()


async def open_client(kind: str, settings):
    if kind == "chat":
        return OllamaChat(settings)
    upstream = Upstream(settings.ollama_host, timeout=settings.chat_timeout, connect_timeout=settings.connect_timeout)
    await upstream.open()
    return upstream


@pytest.mark.parametrize("turns", [1, 2, 3, 4])
@pytest.mark.parametrize("when", ["mid-answer", "before-answer"])
@pytest.mark.parametrize("kind", ["chat", "proxy"])
async def test_a_request_cancelled_twice_closes_its_connection(make_settings, fake_ollama, kind, when, turns):
    state = fake_ollama.state
    reached = asyncio.Event()  # the request waits on Ollama where the case wants it
    if when == "mid-answer":
        state.stream_gate = asyncio.Event()  # the answer stops after its first piece
    else:
        state.hang = True  # no byte of the answer comes
        state.hanging = reached
    client = await open_client(kind, make_settings(ollama_host=fake_ollama.url))
    try:
        read = read_chat if kind == "chat" else read_proxy
        task = asyncio.create_task(read(client, reached))
        await reached.wait()
        cancel_twice(task, turns)
        with pytest.raises(asyncio.CancelledError):
            await task
        # Before the client closes: closing it closes every connection it still holds.
        await wait_until(lambda: state.client_disconnects == 1, timeout=5)
    finally:
        await client.close()
