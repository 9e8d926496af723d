"""A grounded answer of the Ollama- and OpenAI-compatible endpoints (what gptel and ellama
insert into the user's org buffer) carries no diary sexp Org's agenda would evaluate, in
every shape a client reads it in: streamed or whole, chat or generate, Ollama's or
OpenAI's. Nothing else of the answer changes, and a plain model's answer is as the
model wrote it."""

from __future__ import annotations

import httpx
import openai
import ollama
import pytest

from arcology_oracle.notes.org_escape import ZWSP
from tests.compat_tools import COFFEE_QUESTION, base_url
from tests.http.test_compat_openai import make_openai

# A line starting "%%(" (a block's too), one starting "&%%(", a "<%%(" timestamp mid-line;
# "100%%(" and "a %%(" mid-line are no diary sexp.
# A lone CR starts a line once gptel's text is saved into a daily with CR line endings.
REPLY = ("Grind finer.\n%%(shell-command \"touch PWNED\")\n```\n%%(progn (delete-file \"x\"))\n```\n"
         "&%%(diary-float t 1 1) and <%%(kill-emacs)> but 100%%(x) and a %%(y)\r%%(z)")  # fmt: skip
QUIETED = (REPLY.replace("\n%%(", f"\n{ZWSP}%%(").replace("\r%%(", f"\r{ZWSP}%%(").replace("&%%(", f"&{ZWSP}%%(")
           .replace("<%%(", f"<{ZWSP}%%("))  # fmt: skip


@pytest.fixture
async def daemon_client(make_client, settings):
    return await make_client(settings)


async def test_a_grounded_answer_has_no_diary_sexp_the_agenda_would_run(daemon_client, fake_ollama):
    # gptel inserts the answer where the user asked, often into a daily (an agenda file);
    # Org's agenda evaluates each "%%(" starting a line there, in blocks too, asking nothing.
    fake_ollama.state.chat_reply = REPLY
    messages = [{"role": "user", "content": COFFEE_QUESTION}]
    client = ollama.AsyncClient(host=base_url(daemon_client), timeout=httpx.Timeout(20, connect=5))
    oai = make_openai(base_url(daemon_client))
    try:
        streamed = [p async for p in await client.chat(model="llama3.2+notes", messages=messages, stream=True)]
        whole = await client.chat(model="llama3.2+notes", messages=messages, stream=False)
        generated = [p async for p in await client.generate(model="llama3.2+notes", prompt=COFFEE_QUESTION, stream=True)]
        chunks = [c async for c in await oai.chat.completions.create(model="llama3.2+notes", messages=messages,
                                                                      stream=True)]  # fmt: skip
        plain = await client.chat(model="llama3.2", messages=messages, stream=False)
    finally:
        await client.close()
        await oai.close()
    texts = {
        "streamed": "".join(p.message.content or "" for p in streamed),
        "whole": whole.message.content,
        "generated": "".join(p.response or "" for p in generated),
        "openai": "".join(c.choices[0].delta.content or "" for c in chunks if c.choices),
    }
    for shape, text in texts.items():
        assert text.partition("\n\nSources:\n")[0] == QUIETED, (shape, text)
    assert plain.message.content == REPLY  # a plain model is proxied as it is


@pytest.mark.parametrize("reply", ["Grind finer.\n%%", "Grind finer <"])
async def test_what_may_start_a_sexp_still_reaches_the_client_when_the_model_fails(daemon_client, fake_ollama, reply):
    # The quieter holds back what may start a sexp with the next piece ("%%" starting a
    # line, a "<"); the model failing after it must not eat it: the client gets every
    # character the model sent, then the error.
    fake_ollama.state.chat_reply = reply
    fake_ollama.state.chat_error_midway = 3  # after all three pieces
    messages = [{"role": "user", "content": COFFEE_QUESTION}]
    client = ollama.AsyncClient(host=base_url(daemon_client), timeout=httpx.Timeout(20, connect=5))
    oai = make_openai(base_url(daemon_client))

    async def received(stream, text) -> str:
        pieces = []
        with pytest.raises((ollama.ResponseError, openai.APIError)) as info:
            async for part in stream:
                pieces.append(text(part) or "")
        assert "fake failure" in str(info.value)
        return "".join(pieces)

    try:
        texts = {
            "chat": await received(await client.chat(model="llama3.2+notes", messages=messages, stream=True),
                                   lambda p: p.message.content),
            "generate": await received(await client.generate(model="llama3.2+notes", prompt=COFFEE_QUESTION,
                                                             stream=True), lambda p: p.response),
            "openai": await received(await oai.chat.completions.create(model="llama3.2+notes", messages=messages,
                                                                       stream=True),
                                     lambda c: c.choices[0].delta.content if c.choices else ""),
        }  # fmt: skip
    finally:
        await client.close()
        await oai.close()
    assert texts == {"chat": reply, "generate": reply, "openai": reply}
