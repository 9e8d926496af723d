"""A gptel chat saved with a grounded model (``llama3.2+notes``, the daemon's own): its
responses are the oracle's words (notes/oracle_words.py), so a heading holding one (the
prompt as its title, the reply as its body, as gptel saves a chat in org) is no /similar
result, is marked ``oracle`` in /search and is left out of summaries. The user's prompts
stay theirs: a prompt no reply was written under is a note, and every prompt is a
``user`` turn of the chat. A chat with another model is the user's, as before."""

from __future__ import annotations

import json

CHAT_ID = "5555cccc-0000-4000-8000-000000000005"
MINE = "6666cccc-0000-4000-8000-000000000006"


def with_bounds(head: str, body: str, replies: list[str]) -> str:
    """``head`` (a drawer holding ``{points}``) and ``body``, with ``GPTEL_BOUNDS`` at the
    replies' character positions, as gptel saves them."""
    points = "()"
    for _ in range(6):  # the positions depend on their own length: a fixed point
        text, spans, at = head.format(points=points) + body, [], 0
        for reply in replies:
            at = text.index(reply, at)
            spans.append(f"({at + 1} {at + 1 + len(reply)})")
            at += len(reply)
        points = " ".join(spans)
    return text


REPLY_CHAT = "GROUNDEDREPLY the axolotl tank should stay at sixteen to eighteen degrees, as your tank temperature readings say."
REPLY_BOUNDED = "BOUNDEDREPLY your axolotl tank notes say sixteen to eighteen degrees, never above twenty."
FILES = {
    "axolotl-mine.org": (
        f":PROPERTIES:\n:ID: {MINE}\n:END:\n#+title: Axolotl tank log\n\n"
        "* Axolotl tank temperature readings\nMy axolotl tank reads seventeen degrees in the morning.\n"
    ),
    # A chat of one prompt, its title, and the reply under it.
    "axolotl-chat.org": with_bounds(
        f":PROPERTIES:\n:ID: {CHAT_ID}\n:GPTEL_MODEL: llama3.2+notes\n:GPTEL_BOUNDS: ((response {{points}}))\n:END:\n"
        "#+title: Axolotl chat\n\n",
        f"* What axolotl tank temperature?\n{REPLY_CHAT}\n",
        [REPLY_CHAT],
    ),
    # gptel with bounds: the second prompt has no reply yet.
    "axolotl-bounded.org": with_bounds(
        ":PROPERTIES:\n:GPTEL_MODEL: llama3.2+notes\n:GPTEL_BOUNDS: ((response {points}))\n:END:\n#+title: Bounded\n\n",
        f"*** How warm may the axolotl tank get?\n\n{REPLY_BOUNDED}\n\n"
        "*** PROMPTONLY should I chill the axolotl tank water in summer?\n",
        [REPLY_BOUNDED],
    ),
    # The same with a model that is not the daemon's: the user's own chat, their notes
    # (saved without bounds: no reply, all the user's).
    "axolotl-other.org": (
        ":PROPERTIES:\n:GPTEL_MODEL: gpt-4o\n:END:\n#+title: Other chat\n\n"
        "* Axolotl tank temperature again?\nOTHERMODEL axolotl tank temperature sixteen degrees.\n"
    ),
}
ORACLE_HEADINGS = {("axolotl-chat.org", "What axolotl tank temperature?"), ("axolotl-bounded.org", "How warm may the axolotl tank get?")}
PROMPT_ONLY = ("axolotl-bounded.org", "PROMPTONLY should I chill the axolotl tank water in summer?")


async def vault_client(make_client, settings, roam_dir):
    for name, text in FILES.items():
        (roam_dir / name).write_text(text, encoding="utf-8")
    return await make_client(settings)


async def test_a_grounded_chats_replies_are_no_notes_and_its_prompts_are(make_client, settings, roam_dir):
    client = await vault_client(make_client, settings, roam_dir)
    resp = await client.get("/similar", params={"node": MINE, "k": "50", "all": "true"})
    found = {(r["file"], r["heading"]): r["role"] for r in (await resp.json())["results"]}
    assert not set(found) & ORACLE_HEADINGS
    assert found.get(PROMPT_ONLY, "missing") is None, "a prompt is the user's words"
    assert found.get(("axolotl-other.org", "Axolotl tank temperature again?"), "missing") is None
    resp = await client.get("/search", params={"q": "axolotl tank temperature", "k": "30"})
    roles = {(r["file"], r["heading"]): r["role"] for r in (await resp.json())["results"]}
    for place in ORACLE_HEADINGS:
        assert roles[place] == "oracle", place
    assert roles[("axolotl-other.org", "Axolotl tank temperature again?")] is None
    resp = await client.get("/search", params={"q": "PROMPTONLY chill", "k": "30"})
    roles = {(r["file"], r["heading"]): r["role"] for r in (await resp.json())["results"]}
    assert roles[PROMPT_ONLY] is None
    resp = await client.post("/recall", json={"question": "What axolotl tank temperature?", "k": 10})
    said = json.dumps(await resp.json())
    assert "user: What axolotl tank temperature?" in said, "the prompt is the user's turn of the chat"


async def test_a_summary_is_not_given_a_grounded_chats_replies(make_client, settings, roam_dir, fake_ollama):
    client = await vault_client(make_client, settings, roam_dir)
    resp = await client.post("/summarize", json={"question": "the axolotl tank temperature"})
    body = await resp.json()
    prompts = json.dumps(fake_ollama.state.chats)
    assert resp.status == 200, body
    assert "GROUNDEDREPLY" not in prompts and "BOUNDEDREPLY" not in prompts
    assert "seventeen degrees" in prompts, "the user's note is summarized"
    assert CHAT_ID not in json.dumps(body["sources"]), "a chat of nothing but replies is no source"
    assert [s["n"] for s in body["sources"]] == list(range(1, len(body["sources"]) + 1))


async def test_a_chat_of_nothing_but_grounded_replies_is_no_note_to_summarize(make_client, settings, roam_dir, fake_ollama):
    """Its one heading is a reply, and its file's record holds no text: a summary of it
    was a summary of nothing (200, the model asked about an empty note)."""
    client = await vault_client(make_client, settings, roam_dir)
    resp = await client.post("/summarize", json={"node": CHAT_ID})
    body = await resp.json()
    assert resp.status == 400, body
    assert "only the oracle's own words" in body["error"]
    assert fake_ollama.state.chats == [], "nothing is asked of the model"


def with_spans(head: str, pieces: list[tuple[str, str]]) -> str:
    """``head`` (a drawer holding ``{bounds}``) and the ``pieces`` ``(kind, text)`` in order,
    with ``GPTEL_BOUNDS`` as gptel 0.9.9 saves it: ``((response (B E)...) (ignore (B E)...)
    (tool (B E ID)...))`` for the pieces of those kinds; ``user`` pieces and gptel's own
    block lines (``raw``) have no property."""
    bounds = "()"
    for _ in range(6):  # the positions depend on their own length: a fixed point
        text, spans = head.format(bounds=bounds), {}
        for kind, piece in pieces:
            start, text = len(text) + 1, text + piece
            if kind in ("response", "ignore", "tool"):
                extra = ' "call_1"' if kind == "tool" else ""
                spans.setdefault(kind, []).append(f"({start} {len(text) + 1}{extra})")
        bounds = "(" + " ".join(f"({kind} {' '.join(s)})" for kind, s in spans.items()) + ")"
    return text


THINKING = "THINKINGWORDS the user asks about the kiln; their pottery notes mention cone six glaze firing."
TOOL_RESULT = "TOOLRESULT Cone six glaze firing notes: hold at the top for ten minutes."
REASONING_CHAT = with_spans(
    ":PROPERTIES:\n:GPTEL_MODEL: llama3.2+notes\n:GPTEL_BOUNDS: {bounds}\n:END:\n#+title: Kiln chat\n\n",
    [
        ("user", "*** How long should the kiln hold at cone six?\n"),
        # gptel-include-reasoning 'ignore: the model's thinking, in a block gptel leaves unsent.
        ("raw", "#+begin_reasoning\n"), ("ignore", THINKING + "\n"), ("raw", "#+end_reasoning\n"),
        ("response", "Hold the kiln ten minutes at the top, as your firing notes say.\n"),
        ("user", "\n*** And how fast should it cool?\n"),
        # A tool call and its result, in the block gptel writes in org.
        ("tool", f'#+begin_tool (search_notes :query "kiln cooling")\n(:name "search_notes" :args (:query "kiln cooling"))\n\n{TOOL_RESULT}\n#+end_tool\n'),
        ("response", "Let it cool slowly overnight with the lid closed.\n"),
    ],
)


async def test_a_grounded_chats_reasoning_and_tool_calls_are_not_the_users_words(make_client, settings, roam_dir, fake_ollama):
    # gptel keeps a model's thinking (include-reasoning 'ignore) and its tool calls out of
    # its responses' bounds; they are the model's words all the same, never the user's turn.
    (roam_dir / "kiln-chat.org").write_text(REASONING_CHAT, encoding="utf-8")
    client = await make_client(settings)
    resp = await client.post("/recall", json={"question": "what did I ask about the kiln at cone six?", "k": 10})
    notes = [n for n in (await resp.json())["notes"] if n["file"] == "kiln-chat.org"]
    assert notes, "the chat is recalled"
    for n in notes:
        for turn in n["text"].split("\n\n"):
            assert not (turn.startswith("user:") and ("THINKINGWORDS" in turn or "TOOLRESULT" in turn)), turn
        assert "#+end_reasoning" not in n["text"] and "#+begin_reasoning" not in n["text"]
    resp = await client.post("/ask", json={"question": "what did I ask about the kiln at cone six?"})
    assert resp.status == 200
    await resp.read()
    prompt = fake_ollama.state.chats[-1][0]["content"]
    assert "THINKINGWORDS" not in prompt and "TOOLRESULT" not in prompt
    assert "How long should the kiln hold at cone six?" in prompt, "the user's prompt is still theirs"


async def test_a_grounded_chats_root_is_marked_a_conversation_in_search(make_client, settings, roam_dir):
    # The chat's file record holds its turns (its chunks are their scenes, the replies
    # included): a search for a reply's words finds it, and it is no note of the user's.
    (roam_dir / "kiln-chat.org").write_text(REASONING_CHAT, encoding="utf-8")
    client = await vault_client(make_client, settings, roam_dir)
    for query, root in [("overnight lid closed", ("kiln-chat.org", "Kiln chat")), ("BOUNDEDREPLY", ("axolotl-bounded.org", "Bounded"))]:
        resp = await client.get("/search", params={"q": query, "k": "30"})
        roles = {(r["file"], r["heading"]): r["role"] for r in (await resp.json())["results"]}
        assert roles.get(root, "missing") == "conversation", (query, roles)


# gptel ends a chat it saved in org with its prompt prefix, a heading of nothing ("*** "),
# waiting for the next prompt.
GLAZE_REPLY = "GLAZEREPLY a celadon glaze suits your porcelain mugs, as your glaze tests say."
GLAZE_CHAT = with_bounds(
    ":PROPERTIES:\n:GPTEL_MODEL: llama3.2+notes\n:GPTEL_BOUNDS: ((response {points}))\n:END:\n#+title: Glaze chat\n\n",
    f"*** Which glaze for the porcelain mugs?\n\n{GLAZE_REPLY}\n\n*** \n",
    [GLAZE_REPLY],
)


async def test_the_empty_prompt_heading_gptel_leaves_is_no_source(make_client, settings, roam_dir, fake_ollama):
    # The heading has no words of its own: given to the model it was an empty note
    # ("## Glaze chat > "), and the answer's sources named it ([[file:...glaze-chat.org::N][Glaze chat]]).
    (roam_dir / "glaze-chat.org").write_text(GLAZE_CHAT, encoding="utf-8")
    (roam_dir / "glaze-tests.org").write_text("#+title: Glaze tests\n* Celadon glaze chat with Mei\nCeladon on porcelain: even, glassy.\n")
    client = await make_client(settings)
    resp = await client.post("/ask", json={"question": "glaze chat"})
    body = await resp.json()
    assert resp.status == 200, body
    assert all(s["heading"] or s["speakers"] for s in body["sources"]), [(s["heading"], s["line"]) for s in body["sources"]]
    assert "glaze-tests.org" in [s["file"] for s in body["sources"]]
    assert "Glaze chat > \n" not in fake_ollama.state.chats[-1][0]["content"]
    resp = await client.post("/api/chat", json={"model": "llama3.2+notes", "stream": False,
                                                "messages": [{"role": "user", "content": "glaze chat"}]})  # fmt: skip
    answer = (await resp.json())["message"]["content"]
    assert "glaze-tests.org::2]" in answer and "glaze-chat.org::11]" not in answer, answer



BIKE_ID = "8888cccc-0000-4000-8000-000000000008"
BIKE_REPLY = "BIKEREPLY pump the bike tyres to the pressure your bike maintenance notes give."
BIKE_CHAT = with_bounds(
    f":PROPERTIES:\n:ID: {BIKE_ID}\n:GPTEL_MODEL: llama3.2+notes\n:GPTEL_BOUNDS: ((response {{points}}))\n:END:\n"
    "#+title: Bike chat\n\n",
    f"*** How hard should I pump the bike tyres?\n\n{BIKE_REPLY}\n\n*** \n",
    [BIKE_REPLY],
)


async def test_the_empty_prompt_heading_gptel_leaves_is_no_result(make_client, settings, roam_dir):
    # gptel's "*** " has neither a title nor text: /search listed it first for "bike"
    # (an empty title and snippet), /similar and /suggest-links as a note of no title.
    # A heading under an empty one is still a heading of its own.
    (roam_dir / "bike-chat.org").write_text(BIKE_CHAT, encoding="utf-8")
    (roam_dir / "bike-mine.org").write_text(
        f":PROPERTIES:\n:ID: {MINE}\n:END:\n#+title: Bike maintenance\n\n"
        "* Bike tyre pressure\nThe bike tyres take four bar; the bike chain wants wax monthly.\n"
    )
    (roam_dir / "bike-outline.org").write_text("#+title: Bike outline\n\n* \n** Bike chain waxing\nCHAINWAX melt the wax.\n")
    client = await make_client(settings)
    lists = {}
    for q in ("bike", "bike chat", "bike tyres"):
        resp = await client.get("/search", params={"q": q, "k": "30"})
        lists[f"search {q}"] = (await resp.json())["results"]
    for params in ({"node": MINE}, {"file": "bike-mine.org", "line": "6"}):
        resp = await client.get("/similar", params=params | {"k": "50", "all": "true"})
        lists[f"similar {params}"] = (await resp.json())["results"]
    resp = await client.post("/similar", json={"text": "* Bike tyres\nHow hard to pump the bike tyres?", "k": 50, "all": True})
    lists["similar text"] = (await resp.json())["results"]
    resp = await client.get("/suggest-links", params={"node": MINE, "k": "50", "all": "true"})
    lists["suggest-links"] = (await resp.json())["suggestions"]
    assert lists["search bike"] and lists["similar text"], lists
    empty = {("bike-chat.org", BIKE_CHAT.split("\n").index("*** ") + 1), ("bike-outline.org", 3)}
    for name, results in lists.items():
        assert not [r for r in results if (r["file"], r["line"]) in empty or r["heading"] == ""], name
    resp = await client.get("/search", params={"q": "CHAINWAX"})
    assert [(r["file"], r["heading"], r["olp"]) for r in (await resp.json())["results"]] == [
        ("bike-outline.org", "Bike chain waxing", [""])
    ]


TYRE_ID = "9999cccc-0000-4000-8000-000000000009"


async def test_a_note_whose_nearest_heading_is_empty_is_found_by_its_others(make_client, settings, roam_dir):
    # The user's own chat with another model, ended by gptel's "*** ": that empty heading,
    # embedded from its title path alone, is the chat's heading nearest to a question in
    # the chat's title words. A note was grouped by its nearest heading, which no list
    # shows: the whole chat left /similar.
    (roam_dir / "tyre-chat.org").write_text(
        f":PROPERTIES:\n:ID: {TYRE_ID}\n:GPTEL_MODEL: gpt-4o\n:END:\n#+title: Tyre pressure chat\n\n"
        "Asked about the commute bike after the puncture in March.\n\n"
        "*** Pump\nPUMPANSWER four bar suits the road tyres; check them weekly.\n\n*** \n",
        encoding="utf-8",
    )
    (roam_dir / "bike-mine.org").write_text(
        f":PROPERTIES:\n:ID: {MINE}\n:END:\n#+title: Tyre pressure\n\n* Tyre pressure chat\nFour bar.\n"
    )
    (roam_dir / "other.org").write_text("#+title: Sourdough\n\n* Starter\nFeed it flour and water.\n")
    client = await make_client(settings)
    lists = {}
    for params in ({"node": MINE}, {"file": "bike-mine.org", "line": "6"}):
        resp = await client.get("/similar", params=params | {"k": "50", "all": "true"})
        lists[str(params)] = (await resp.json())["results"]
    resp = await client.post("/similar", json={"text": "Tyre pressure chat", "k": 50, "all": True})
    lists["text"] = (await resp.json())["results"]
    for name, results in lists.items():
        assert [r["file"] for r in results].count("tyre-chat.org") == 1, (name, results)
