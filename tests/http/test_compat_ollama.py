"""The Ollama-compatible API, driven by the real ``ollama`` Python client.

The daemon (the real app over the example vault) talks to the fake Ollama; what the fake
records is what the upstream model was asked.
"""

from __future__ import annotations

import asyncio
import json

import aiohttp
import httpx
import ollama
import pytest

from arcology_oracle.answers import grounding as compat
from tests.compat_tools import COFFEE_ID, COFFEE_QUESTION, UNRELATED_QUESTION, base_url, notes_messages

@pytest.fixture
async def daemon_client(make_client, settings):
    return await make_client(settings)


@pytest.fixture
async def ollama_client(daemon_client):
    client = ollama.AsyncClient(host=base_url(daemon_client), timeout=httpx.Timeout(20, connect=5))
    yield client
    await client.close()


# --------------------------------------------------------------------------- naming


def test_grounded_names_and_their_spellings():
    assert compat.grounded_name("llama3.2:latest") == "llama3.2+notes"
    assert compat.grounded_name("qwen2.5:7b") == "qwen2.5:7b+notes"
    assert compat.grounded_name("hf.co/bartowski/Llama-3.2-1B-GGUF:Q4_K_M") == "hf.co/bartowski/Llama-3.2-1B-GGUF:Q4_K_M+notes"
    assert compat.split_model("llama3.2+notes") == ("llama3.2", True)
    assert compat.split_model("llama3.2+notes:latest") == ("llama3.2:latest", True)
    assert compat.split_model("qwen2.5:7b+notes") == ("qwen2.5:7b", True)
    assert compat.split_model("qwen2.5+notes:7b") == ("qwen2.5:7b", True)
    assert compat.split_model("user/model+notes:tag") == ("user/model:tag", True)
    assert compat.split_model("llama3.2") == ("llama3.2", False)
    assert compat.same_model("llama3.2+notes", "llama3.2:latest+notes")
    assert not compat.same_model("llama3.2+notes", "llama3.2")


def test_which_models_chat():
    assert compat.can_chat("anything", ["completion", "tools"], None)
    assert not compat.can_chat("anything", ["embedding"], None)
    # An Ollama too old to report capabilities: the family and the name decide.
    assert not compat.can_chat("nomic-embed-text:latest", None, {"family": "nomic-bert"})
    assert not compat.can_chat("mxbai-embed-large:latest", None, {"family": "llama"})
    assert compat.can_chat("llama3.2:latest", None, {"family": "llama", "families": ["llama"]})


def test_notes_go_after_the_leading_system_messages_and_the_query_takes_recent_turns():
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "first answer"},
        {"role": "user", "content": "follow-up"},
    ]
    out = compat.insert_notes(messages, "NOTES")
    assert [m["content"] for m in out] == ["sys", "NOTES", "first question", "first answer", "follow-up"]
    assert compat.insert_notes(messages[1:], "NOTES")[0]["content"] == "NOTES"
    assert compat.conversation_query(messages) == ("follow-up", "user: first question\nassistant: first answer")
    assert compat.conversation_query([{"role": "system", "content": "sys"}]) == ("", None)


# --------------------------------------------------------------------------- models


async def test_tags_pass_upstream_models_through_and_add_grounded_chat_variants(ollama_client, fake_ollama):
    listed = await ollama_client.list()
    names = [m.model for m in listed.models]
    upstream = [m["name"] for m in (await _upstream_json(fake_ollama, "GET", "/api/tags"))["models"]]
    assert [n for n in names if "+notes" not in n] == upstream  # unchanged, same order
    assert "llama3.2+notes" in names and "qwen2.5:7b+notes" in names
    assert names.index("llama3.2+notes") == names.index("llama3.2:latest") + 1
    assert not any(n.startswith(("nomic-embed-text", "all-minilm")) and "+notes" in n for n in names)


async def test_show_answers_for_upstream_and_grounded_models(ollama_client):
    plain = await ollama_client.show("llama3.2")
    grounded = await ollama_client.show("llama3.2+notes")
    assert grounded.capabilities == plain.capabilities == ["completion"]
    assert grounded.modelinfo == plain.modelinfo
    with pytest.raises(ollama.ResponseError) as info:
        await ollama_client.show("nomic-embed-text+notes")  # embedding models have no grounded variant
    assert info.value.status_code == 404


async def test_version_and_embed_pass_through(daemon_client, ollama_client, fake_ollama):
    response = await daemon_client.get("/api/version")  # the ollama client has no call for it
    assert response.status == 200 and await response.json() == {"version": fake_ollama.state.version}
    result = await ollama_client.embed(model="all-minilm", input=["sourdough starter", "rust borrow"])
    upstream = await _upstream_json(fake_ollama, "POST", "/api/embed",
                                    {"model": "all-minilm", "input": ["sourdough starter", "rust borrow"]})  # fmt: skip
    assert result.embeddings == upstream["embeddings"] and len(result.embeddings[0]) == 384


# --------------------------------------------------------------------------- chat


async def test_grounded_chat_puts_the_right_notes_after_the_client_system_prompt(ollama_client, fake_ollama):
    messages = [
        {"role": "system", "content": "You are a terse assistant."},
        {"role": "user", "content": COFFEE_QUESTION},
    ]
    answer = await ollama_client.chat(model="llama3.2+notes", messages=messages, stream=False)
    sent = fake_ollama.state.requests["/api/chat"][-1]
    assert sent["model"] == "llama3.2"
    assert sent["messages"][0] == messages[0]  # the client's system prompt stays first
    assert sent["messages"][1]["role"] == "system" and "<notes>" in sent["messages"][1]["content"]
    assert "[1] Coffee Brewing" in sent["messages"][1]["content"]
    assert sent["messages"][2] == messages[1]
    assert answer.model == "llama3.2+notes"
    assert answer.message.content.startswith("Based on your notes [1]")
    assert f"[[id:{COFFEE_ID}][Coffee Brewing" in answer.message.content.split("Sources:")[1]


async def test_pass_through_chat_is_forwarded_faithfully(ollama_client, fake_ollama):
    tools = [{"type": "function", "function": {"name": "now", "description": "the time",
                                               "parameters": {"type": "object", "properties": {}}}}]  # fmt: skip
    messages = [{"role": "user", "content": COFFEE_QUESTION, "images": ["aGVsbG8="]}]
    answer = await ollama_client.chat(
        model="llama3.2", messages=messages, stream=False, tools=tools, format="json",
        options={"temperature": 0.1, "num_predict": 50}, keep_alive="5m",
    )  # fmt: skip
    sent = fake_ollama.state.requests["/api/chat"][-1]
    assert sent["model"] == "llama3.2" and sent["format"] == "json" and sent["keep_alive"] == "5m"
    assert sent["options"] == {"temperature": 0.1, "num_predict": 50}
    assert sent["tools"][0]["function"]["name"] == "now"
    assert sent["messages"] == [{"role": "user", "content": COFFEE_QUESTION, "images": ["aGVsbG8="]}]
    assert not notes_messages(sent["messages"])
    assert json.loads(answer.message.content)["answer"].startswith("I found nothing in your notes")
    assert "Sources:" not in answer.message.content


async def test_grounded_chat_streams_incrementally(ollama_client, fake_ollama):
    state = fake_ollama.state
    state.stream_gate = asyncio.Event()
    stream = await ollama_client.chat(model="llama3.2+notes", messages=[{"role": "user", "content": COFFEE_QUESTION}],
                                      stream=True)  # fmt: skip
    first = await anext(stream)
    # The fake holds the rest of its answer behind the gate: the first piece reached the
    # client while the upstream model was still "generating".
    assert first.message.content and not first.done and not state.stream_gate.is_set()
    state.stream_gate.set()
    parts = [first] + [part async for part in stream]
    assert parts[-1].done and parts[-1].done_reason == "stop" and parts[-1].eval_count
    text = "".join(p.message.content for p in parts)
    assert text.startswith("Based on your notes [1]")
    assert text.rstrip().endswith("]]") and f"[[id:{COFFEE_ID}]" in text
    assert all(p.model == "llama3.2+notes" for p in parts)


async def test_sources_follow_text_that_arrives_in_the_final_frame(ollama_client, fake_ollama):
    """Ollama's tool-call parser holds back text that looked like the start of a call and
    sends it in the final (done) frame: the sources block still ends the answer."""
    fake_ollama.state.chat_held_pieces = 3
    messages = [{"role": "user", "content": COFFEE_QUESTION}]
    parts = [p async for p in await ollama_client.chat(model="llama3.2+notes", messages=messages, stream=True)]
    generated = [p async for p in await ollama_client.generate(model="llama3.2+notes", prompt=COFFEE_QUESTION, stream=True)]
    for text in ("".join(p.message.content for p in parts), "".join(p.response for p in generated)):
        body, _, sources = text.partition("\n\nSources:\n")
        assert body.startswith("Based on your notes [1]") and body.endswith(COFFEE_QUESTION)
        assert sources.startswith(f"- [1] [[id:{COFFEE_ID}]") and sources.endswith("]]\n")
    assert parts[-1].done and generated[-1].done


async def test_a_grounded_model_keeps_its_modelfile_system_prompt(ollama_client, fake_ollama):
    """Ollama gives a model its Modelfile's SYSTEM only when the conversation does not
    start with a system message (a generate: without a system): the notes, put first,
    would have dropped it."""
    fake_ollama.state.model("llama3.2").system = "You are Mario."
    await ollama_client.chat(model="llama3.2+notes", messages=[{"role": "user", "content": COFFEE_QUESTION}])
    sent = fake_ollama.state.requests["/api/chat"][-1]["messages"]
    assert sent[0] == {"role": "system", "content": "You are Mario."} and notes_messages(sent) == [sent[1]]
    await ollama_client.generate(model="llama3.2+notes", prompt=COFFEE_QUESTION)
    system = fake_ollama.state.requests["/api/generate"][-1]["system"]
    assert system.startswith("You are Mario.\n\n") and "[1] Coffee Brewing" in system
    # The client's own system prompt takes the model's place, as with Ollama itself.
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": COFFEE_QUESTION}]
    await ollama_client.chat(model="llama3.2+notes", messages=messages)
    assert "Mario" not in json.dumps(fake_ollama.state.requests["/api/chat"][-1]["messages"])


async def test_unrelated_question_gets_no_notes_and_no_sources(ollama_client, fake_ollama):
    answer = await ollama_client.chat(model="llama3.2+notes", messages=[{"role": "user", "content": UNRELATED_QUESTION}])
    assert not notes_messages(fake_ollama.state.requests["/api/chat"][-1]["messages"])
    assert "Sources:" not in answer.message.content


async def test_follow_up_uses_the_recent_conversation(ollama_client, fake_ollama):
    earlier_answer = "A medium-fine grind, according to your notes [1]."
    messages = [
        {"role": "user", "content": COFFEE_QUESTION},
        {"role": "assistant", "content": f"{earlier_answer}\n\nSources:\n- [1] [[id:{COFFEE_ID}][Coffee Brewing]]"},
        {"role": "user", "content": "And how long should that take?"},  # finds nothing on its own
    ]
    await ollama_client.chat(model="llama3.2+notes", messages=messages)
    sent = fake_ollama.state.requests["/api/chat"][-1]["messages"]
    notes = notes_messages(sent)
    assert notes and "Coffee Brewing" in notes[0]["content"]
    # The earlier answer's sources block (its [1] meant an earlier turn's note) is gone.
    assert [m["content"] for m in sent if m["role"] == "assistant"] == [earlier_answer]


async def test_sources_block_can_be_switched_off(make_client, make_settings, fake_ollama):
    daemon = await make_client(make_settings(ollama_host=fake_ollama.url, sources_in_compat_answers=False))
    async with ollama.AsyncClient(host=base_url(daemon), timeout=httpx.Timeout(20, connect=5)) as client:
        answer = await client.chat(model="llama3.2+notes", messages=[{"role": "user", "content": COFFEE_QUESTION}])
    assert notes_messages(fake_ollama.state.requests["/api/chat"][-1]["messages"])
    assert "Sources:" not in answer.message.content and "[[id:" not in answer.message.content


async def test_generate_grounded_and_pass_through(ollama_client, fake_ollama):
    grounded = await ollama_client.generate(model="llama3.2+notes", prompt=COFFEE_QUESTION, system="Be brief.")
    sent = fake_ollama.state.requests["/api/generate"][-1]
    assert sent["model"] == "llama3.2" and sent["system"].startswith("Be brief.\n\n")
    assert "[1] Coffee Brewing" in sent["system"] and sent["prompt"] == COFFEE_QUESTION
    assert grounded.response.startswith("Based on your notes [1]") and f"[[id:{COFFEE_ID}]" in grounded.response
    parts = [p async for p in await ollama_client.generate(model="llama3.2", prompt=COFFEE_QUESTION, stream=True)]
    assert "system" not in fake_ollama.state.requests["/api/generate"][-1]
    assert parts[-1].done and "Sources:" not in "".join(p.response for p in parts)


async def test_an_answer_in_a_format_or_a_completion_gets_no_sources_block(ollama_client, fake_ollama):
    messages = [{"role": "user", "content": COFFEE_QUESTION}]
    answer = await ollama_client.chat(model="llama3.2+notes", messages=messages, format="json")
    assert notes_messages(fake_ollama.state.requests["/api/chat"][-1]["messages"])  # grounded all the same
    assert isinstance(json.loads(answer.message.content), dict)  # the (fake) model's JSON, and nothing after it
    parts = [p async for p in await ollama_client.chat(model="llama3.2+notes", messages=messages,
                                                       format={"type": "object"}, stream=True)]  # fmt: skip
    assert isinstance(json.loads("".join(p.message.content for p in parts)), dict)
    # A completion with a suffix (an editor filling a gap in code): no notes, no sources.
    fake_ollama.state.chat_reply = "medium_fine"
    filled = await ollama_client.generate(model="llama3.2+notes", prompt=f"# {COFFEE_QUESTION}\ngrind = '", suffix="'\n")
    assert filled.response == "medium_fine"
    assert "system" not in fake_ollama.state.requests["/api/generate"][-1]


async def test_the_conversation_being_answered_is_no_note_of_it(make_client, make_settings, fake_ollama, roam_dir):
    from tests.answers.test_chat_dialogue import gptel_file

    asked = "Which kettle temperature suits a compatquokka pour-over?"
    said = "Around 93 degrees for light compatquokka beans, with a 30 second bloom and a slow spiral pour."
    (roam_dir / "kettle-chat.org").write_text(gptel_file([(asked, said)]))
    daemon = await make_client(make_settings(ollama_host=fake_ollama.url))
    messages = [{"role": "user", "content": asked}, {"role": "assistant", "content": said},
                {"role": "user", "content": "And what grind for compatquokka beans at that kettle temperature?"}]  # fmt: skip
    async with ollama.AsyncClient(host=base_url(daemon), timeout=httpx.Timeout(20, connect=5)) as client:
        answer = await client.chat(model="llama3.2+notes", messages=messages)
    notes = "\n".join(m["content"] for m in notes_messages(fake_ollama.state.requests["/api/chat"][-1]["messages"]))
    assert "93 degrees" not in notes and "kettle-chat" not in answer.message.content


# --------------------------------------------------------------------------- errors


async def test_unknown_model_is_ollamas_not_found(ollama_client):
    async def streamed(model):
        return [part async for part in await ollama_client.chat(model=model, messages=[{"role": "user", "content": "hi"}],
                                                                stream=True)]  # fmt: skip

    for model in ("no-such-model", "no-such-model+notes"):
        for call in (
            ollama_client.chat(model=model, messages=[{"role": "user", "content": "hi"}]),
            streamed(model),
            ollama_client.generate(model=model, prompt="hi"),
            ollama_client.show(model),
        ):
            with pytest.raises(ollama.ResponseError) as info:
                await call
            assert info.value.status_code == 404
            assert f'"{model}" not found' in info.value.error or f"'{model}' not found" in info.value.error


async def test_content_types_on_the_wire(daemon_client):
    for model in ("llama3.2", "llama3.2+notes"):
        response = await daemon_client.post("/api/chat", json={"model": model, "messages": [{"role": "user", "content": COFFEE_QUESTION}]})
        assert response.status == 200 and response.headers["Content-Type"] == "application/x-ndjson"
        lines = (await response.read()).decode().splitlines()
        assert all(json.loads(line) for line in lines) and json.loads(lines[-1])["done"] is True
        response = await daemon_client.post("/api/chat", json={"model": model, "stream": False, "messages": [{"role": "user", "content": "hi"}]})
        assert response.status == 200 and response.content_type == "application/json"


async def test_upstream_down_is_a_clear_502(ollama_client, fake_ollama):
    await fake_ollama.stop()
    for call in (
        ollama_client.chat(model="llama3.2", messages=[{"role": "user", "content": "hi"}]),
        ollama_client.chat(model="llama3.2+notes", messages=[{"role": "user", "content": "hi"}]),
        ollama_client.list(),
    ):
        with pytest.raises(ollama.ResponseError) as info:
            await call
        assert info.value.status_code == 502 and fake_ollama.url in info.value.error


async def test_upstream_error_mid_stream_reaches_the_client(ollama_client, fake_ollama):
    fake_ollama.state.chat_abort_midway = 2
    stream = await ollama_client.chat(model="llama3.2+notes", messages=[{"role": "user", "content": COFFEE_QUESTION}],
                                      stream=True)  # fmt: skip
    with pytest.raises(ollama.ResponseError) as info:
        async for _ in stream:
            pass
    assert "broke off" in info.value.error and fake_ollama.url in info.value.error


async def test_token_is_required(make_client, make_settings, fake_ollama):
    daemon = await make_client(make_settings(ollama_host=fake_ollama.url, token="s3cret"))
    async with ollama.AsyncClient(host=base_url(daemon), timeout=httpx.Timeout(20, connect=5)) as anonymous:
        with pytest.raises(ollama.ResponseError) as info:
            await anonymous.list()
        assert info.value.status_code == 401
    headers = {"Authorization": "Bearer s3cret"}
    async with ollama.AsyncClient(host=base_url(daemon), headers=headers, timeout=httpx.Timeout(20, connect=5)) as client:
        assert any(m.model == "llama3.2+notes" for m in (await client.list()).models)


# --------------------------------------------------------------------------- disconnects


async def test_client_disconnect_cancels_the_upstream_request(production_daemon, fake_ollama):
    state = fake_ollama.state
    for model in ("llama3.2", "llama3.2+notes"):
        state.client_gone.clear()
        state.client_disconnects = 0
        state.stream_gate = asyncio.Event()
        client = ollama.AsyncClient(host=production_daemon, timeout=httpx.Timeout(20, connect=5))
        stream = await client.chat(model=model, messages=[{"role": "user", "content": COFFEE_QUESTION}], stream=True)
        first = await anext(stream)
        assert first.message.content
        await stream.aclose()  # what gptel-abort does: the connection goes away mid-answer
        await client.close()
        await asyncio.wait_for(state.client_gone.wait(), 10)
        assert state.client_disconnects == 1 and not state.stream_gate.is_set()


async def _upstream_json(fake, method: str, path: str, body=None):
    async with aiohttp.ClientSession() as session:
        async with session.request(method, fake.url + path, json=body) as response:
            return await response.json()


async def test_hanging_upstream_is_a_504_that_says_it_timed_out(make_client, make_settings, fake_ollama):
    """The pass-through and the native embedder share one error translator: a timeout is
    a timeout, named so, whichever client met it."""
    daemon = await make_client(make_settings(ollama_host=fake_ollama.url, chat_timeout=0.5))
    fake_ollama.state.hang = True
    try:
        response = await daemon.post("/api/chat", json={"model": "llama3.2", "stream": False,
                                                        "messages": [{"role": "user", "content": "hi"}]})  # fmt: skip
        body = await response.json()
        assert response.status == 504 and "timed out" in body["error"] and fake_ollama.url in body["error"]
    finally:
        fake_ollama.state.hang = False
        fake_ollama.state.release()
