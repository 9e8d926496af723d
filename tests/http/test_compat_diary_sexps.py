"""A grounded answer of the Ollama- and OpenAI-compatible endpoints (what gptel and ellama
insert into the user's org buffer) carries no diary sexp Org's agenda would evaluate, in
every shape a client reads it in: streamed or whole, chat or generate, Ollama's or
OpenAI's. Nothing else of the answer changes, and a plain model's answer is as the
model wrote it."""

from __future__ import annotations

import httpx
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
