"""Conversations kept as headings read as dialogue (issue 28): a ``/converse`` subtree
(``Me``/``Oracle`` turn headings) and a gptel chat saved as org are stored per turn on the
conversation's root, with speakers and dates, and /recall and /ask give windows of them;
the oracle's own turns stay out of /ask's evidence and /similar, against real org files,
the real daemon and the fake Ollama."""

from __future__ import annotations

import pytest

from arcology_oracle.index.parsing import ParseOptions, parse_note
from arcology_oracle.notes.oracle_words import oracle_words_of
from arcology_oracle.notes.reader import read_org_bytes
from tests.answers.test_recall import post
from tests.runners import start_daemon

OPTIONS = ParseOptions(frozenset({"private"}), 2000, 200)

TALK = """#+title: Garden talk
* Tomato questions
:PROPERTIES:
:CREATED: [2024-05-01 Wed 09:00]
:END:
** Me
Why do my tomato leaves curl upwards in the greenhouse?
** Oracle
:PROPERTIES:
:ROLE:     oracle
:ORACLE_MODEL: llama3.2
:CREATED:  [2024-05-01 Wed 09:02]
:END:
Leaf roll comes from heat stress and uneven watering [1].

Sources:
- [1] [[id:1111aaaa-0000-4000-8000-000000000009][Greenhouse notes]]
** Me :private:
My neighbour Colm keeps a secret stash of blight spray.
** Me
:PROPERTIES:
:CREATED: [2024-05-03 Fri 18:30]
:END:
And should I pinch out the side shoots of cordon tomatoes?
"""


def gptel_file(exchanges: list[tuple[str, str]], model: str = "gpt-4o") -> str:
    """A gptel chat as gptel saves it in org: file properties, ``*** `` prompts, and
    the responses' character positions in ``GPTEL_BOUNDS``."""
    body = "".join(f"*** {prompt}\n\n{response}\n\n" for prompt, response in exchanges)
    points = "()"
    for _ in range(6):  # the positions depend on their own length: a fixed point
        head = f":PROPERTIES:\n:GPTEL_MODEL: {model}\n:GPTEL_BOUNDS: ((response {points}))\n:END:\n#+title: Bread chat\n\n"
        text, spans, at = head + body, [], 0
        for _, response in exchanges:
            at = text.index(response, at)
            spans.append(f"({at + 1} {at + 1 + len(response)})")
            at += len(response)
        points = " ".join(spans)
    return text


PADDING = " Keep notes of the flour, the water temperature and the timings, so that the next bake can be compared."
EXCHANGES = [(q, a + PADDING) for q, a in [
    ("Which flour makes the crispiest baguette crust?", "A French T65 flour with steam in the first ten minutes."),
    ("How long should the poolish ferment overnight?", "Twelve to sixteen hours at cool room temperature."),
    ("What oven temperature suits a rye loaf?", "Start at 250 degrees, then drop to 210 after fifteen minutes."),
    ("Why did my focaccia come out dense?", "The dough was underproofed; give it another hour and more olive oil."),
    ("Can I retard croissant dough in the fridge?", "Yes, up to 48 hours, wrapped tightly so it does not dry."),
    ("How do I stop bagels from wrinkling after boiling?", "Boil them briefly and bake at once; overproofed bagels wrinkle."),
    ("Is spelt good for a sandwich loaf?", "Spelt makes a soft loaf but needs gentle kneading and less water."),
    ("What makes brioche so yellow?", "Egg yolks and butter, plenty of both."),
]]


def test_a_conversation_is_one_dialogue_on_its_root():
    parsed, chunks = parse_note(TALK.encode(), "talk.org", OPTIONS)
    by_title = {h.title: (h, c) for h, c in zip(parsed.headings, chunks)}
    root, scenes = by_title["Tomato questions"]
    turns = scenes[0].dialogue
    assert [t.speaker for t in turns] == ["Me", "Me", "Oracle", "Me"]
    assert turns[2].text == "Oracle: Leaf roll comes from heat stress and uneven watering."  # no Sources, no [1]
    assert [t.when for t in turns] == ["2024-05-01", "2024-05-01", "2024-05-01", "2024-05-03"]
    lines = TALK.split("\n")
    assert [lines[t.start_line - 1] for t in turns] == ["* Tomato questions", "** Me", "** Oracle", "** Me"]
    assert "Colm" not in " ".join(t.text for t in turns) and "Colm" not in " ".join(c.text for c in scenes)
    assert scenes[0].text.startswith("Garden talk > Tomato questions (2024-05-01)\n\nMe: Tomato questions")
    # The turn headings keep their own chunks (/search; /similar for the user's).
    assert by_title["Oracle"][1][0].dialogue == () and "heat stress" in by_title["Oracle"][1][0].text


def test_a_gptel_chat_is_one_dialogue_on_its_file():
    text = gptel_file(EXCHANGES[:2])
    parsed, chunks = parse_note(text.encode(), "bread-chat.org", OPTIONS)
    turns = chunks[0][0].dialogue
    assert [t.speaker for t in turns] == ["user", "gpt-4o", "user", "gpt-4o"]
    assert turns[0].text == "user: Which flour makes the crispiest baguette crust?"
    assert turns[1].text == "gpt-4o: " + EXCHANGES[0][1]
    lines = text.split("\n")
    assert lines[turns[1].start_line - 1] == EXCHANGES[0][1] and turns[1].start_line == turns[1].end_line
    # A prompt of several lines stays the user's: the bounds say where the response is.
    longer = gptel_file([("Which flour?\nI want a crisp crust.", "T65 with steam.")])
    turns = parse_note(longer.encode(), "c.org", OPTIONS)[1][0][0].dialogue
    assert [t.text for t in turns] == ["user: Which flour?\nI want a crisp crust.", "gpt-4o: T65 with steam."]


def test_gptel_chats_without_bounds():
    # No bounds and no state saved (a mode line alone): a heading's title is the prompt,
    # its body the response.
    plain = "# -*- mode: org; eval: (gptel-mode 1) -*-\n*** Which flour?\nT65.\n*** And water?\n70 percent.\n"
    assert [t.text for t in parse_note(plain.encode(), "a.org", OPTIONS)[1][0][0].dialogue] == [
        "user: Which flour?", "assistant: T65.", "user: And water?", "assistant: 70 percent.",
    ]  # fmt: skip
    # gptel's state saved without bounds: it saved no reply, all is the user's.
    saved = ":PROPERTIES:\n:GPTEL_MODEL: llama3\n:END:\n*** Which flour?\nT65.\n*** And water?\n70 percent.\n"
    assert [c.dialogue for cs in parse_note(saved.encode(), "s.org", OPTIONS)[1] for c in cs if c.dialogue] == []
    # @user / @assistant prefix lines switch speaker; a mode line says it is gptel's.
    prefixed = "# -*- mode: org; eval: (gptel-mode 1) -*-\n@user\nWhich flour?\n\n@assistant\nT65.\n\n@user\nAnd water?\n"
    parsed = read_org_bytes(prefixed.encode(), "b.org")
    assert parsed.responses is None
    turns = parse_note(prefixed.encode(), "b.org", OPTIONS)[1][0][0].dialogue
    assert [(t.speaker, t.text) for t in turns] == [
        ("user", "user: Which flour?"), ("assistant", "assistant: T65."), ("user", "user: And water?"),
    ]  # fmt: skip
    # Bounds saved as a file variable (gptel outside Org's property drawers).
    body = "*** Which flour?\n\nT65.\n"
    local = f"{body}\n# Local Variables:\n# gptel--bounds: ((response ({body.index('T65') + 1} {body.index('T65') + 5})))\n# End:\n"
    parsed = read_org_bytes(local.encode(), "c.org")
    assert parsed.responses == ((3, 3),)
    turns = parse_note(local.encode(), "c.org", OPTIONS)[1][0][0].dialogue
    assert [t.text for t in turns] == ["user: Which flour?", "assistant: T65."]


@pytest.fixture
async def chats_daemon(tmp_path, roam_dir, fake_ollama):
    (roam_dir / "talk.org").write_text(TALK)
    (roam_dir / "bread-chat.org").write_text(gptel_file(EXCHANGES))
    for n in range(6):  # files whose titles name the question, their text in headings
        (roam_dir / f"focaccia-{n}.org").write_text(f"#+title: Dense focaccia bake {n}\n* Shopping\nEggs, milk.\n")
    d = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    yield d
    d.stop()


async def test_recall_gives_windows_of_a_gptel_chat(chats_daemon, fake_ollama):
    status, body = await post(chats_daemon, "/recall", {"question": "focaccia dense underproofed"})
    assert status == 200, body
    note = next(n for n in body["notes"] if n["file"] == "bread-chat.org")
    assert note["speakers"] == ["user", "gpt-4o"] and note["heading"] == "Bread chat"
    assert "user: Why did my focaccia come out dense?\n\ngpt-4o: The dough was underproofed" in note["text"]
    assert "rye loaf" in note["text"] or "croissant" in note["text"]  # its neighbours
    # A window of the chat, not the chat: neither its first exchange nor its last.
    assert "baguette" not in note["text"] and "brioche" not in note["text"]
    # A file's title alone (no text of its own) is no note taking a window's place.
    assert all(n["text"].strip() for n in body["notes"]), [n["heading"] for n in body["notes"] if not n["text"].strip()]
    status, answer = await post(chats_daemon, "/ask", {"question": "focaccia dense underproofed"})
    assert status == 200 and "user: Why did my focaccia come out dense?" in fake_ollama.state.chats[-1][0]["content"]


async def test_the_oracles_turns_in_recall_ask_and_similar(chats_daemon, fake_ollama):
    # /recall: the conversation as it went, the oracle's turn labelled, the private one never.
    status, body = await post(chats_daemon, "/recall", {"question": "tomato leaves curl greenhouse", "k": 3})
    [note] = [n for n in body["notes"] if n["file"] == "talk.org"]
    assert note["heading"] == "Tomato questions" and note["speakers"] == ["Me", "Oracle"]
    assert "Oracle: Leaf roll comes from heat stress" in note["text"] and "Colm" not in note["text"]
    assert note["role"] == "conversation" if "role" in note else True
    # /ask: the user's turns are evidence, the oracle's past answer is not.
    status, _ = await post(chats_daemon, "/ask", {"question": "tomato leaves curl greenhouse"})
    prompt = fake_ollama.state.chats[-1][0]["content"]
    assert "Me: Why do my tomato leaves curl upwards" in prompt and "heat stress" not in prompt
    assert prompt.count("tomato leaves curl upwards") == 1  # the turn's own heading is no second note
    # /similar: the root, whose scenes hold the oracle's words, is never a result.
    status, similar = await post(chats_daemon, "/similar", {"text": "leaf roll heat stress uneven watering", "all": True})
    assert status == 200
    from_talk = [r for r in similar["results"] if r["file"] == "talk.org"]
    assert all(r["heading"] not in ("Oracle", "Tomato questions") and r["role"] == "conversation" for r in from_talk)
    _, found = await chats_daemon.get_json("/search", q="tomato", k=20)
    roles = {r["heading"]: r["role"] for r in found["results"] if r["file"] == "talk.org"}
    assert roles.get("Tomato questions") == "conversation"


async def test_a_gptel_chat_with_a_grounded_model_is_no_evidence_of_its_answers(make_client, make_settings, fake_ollama, roam_dir):
    # Saved from gptel with llama3.2+notes: its answers cited the user's notes; asked again,
    # they must not come back as notes. The user's own questions there still count.
    asked = "Which kettle temperature suits a groundedquokka pour-over?"
    said = "Your notes say 93 degrees for groundedquokka beans, with a thirty second bloom."
    (roam_dir / "kettle-chat.org").write_text(gptel_file([(asked, said)], model="llama3.2+notes"))
    client = await make_client(make_settings(ollama_host=fake_ollama.url))
    resp = await client.post("/ask", json={"question": "groundedquokka kettle temperature"})
    assert resp.status == 200
    await resp.read()
    prompt = fake_ollama.state.chats[-1][0]["content"]
    assert "groundedquokka pour-over" in prompt and "93 degrees" not in prompt


def test_a_response_that_ends_the_file_with_its_line_ending_is_the_models():
    # The model's last line ended with a newline and nothing was typed after it: the
    # bounds end past the file's last line (Emacs counts the final newline as a point).
    reply = "T65, with steam in the first ten minutes.\n"
    at = 100
    for _ in range(3):  # the positions depend on their own length: a fixed point
        head = f":PROPERTIES:\n:GPTEL_MODEL: llama3.2+notes\n:GPTEL_BOUNDS: ((response ({at} {at + len(reply)})))\n:END:\n*** Which flour?\n"
        at = len(head) + 1
    text = head + reply
    assert text.index(reply) == at - 1 and text.endswith("\n")
    turns = parse_note(text.encode(), "eof.org", OPTIONS)[1][0][0].dialogue
    assert [(t.speaker, t.text) for t in turns] == [
        ("user", "user: Which flour?"), ("llama3.2+notes", "llama3.2+notes: T65, with steam in the first ten minutes."),
    ]  # fmt: skip


def test_gptels_prefix_lines_are_no_ones_words_in_a_chat_with_bounds():
    # gptel set to write "@user" / "@assistant" before prompts and responses, with the
    # responses' bounds saved: the prefix lines are gptel's, not the user's prompt, and
    # the empty prompt left at the end is no turn.
    exchanges = [("What flour for rye?", "Use wholemeal rye flour."), ("And the water?", "Use 80 percent water.")]
    body = "".join(f"@user\n{prompt}\n\n@assistant\n{reply}\n\n" for prompt, reply in exchanges) + "@user\n"
    points = "()"
    for _ in range(6):  # the positions depend on their own length: a fixed point
        head = f":PROPERTIES:\n:GPTEL_MODEL: llama3.2+notes\n:GPTEL_BOUNDS: ((response {points}))\n:END:\n#+title: Chat\n\n"
        text, spans, at = head + body, [], 0
        for _, reply in exchanges:
            at = text.index(reply, at)
            spans.append(f"({at + 1} {at + 1 + len(reply)})")
        points = " ".join(spans)
    turns = parse_note(text.encode(), "prefixed.org", OPTIONS)[1][0][0].dialogue
    assert [t.text for t in turns] == [
        "user: What flour for rye?", "llama3.2+notes: Use wholemeal rye flour.",
        "user: And the water?", "llama3.2+notes: Use 80 percent water.",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "around",
    [
        ("#+begin_src org\n", "#+end_src\n"),  # an example of org-ai's syntax, in a note about it
        ("#+begin_example\n", "#+end_example\n"),
        ("#+BEGIN_COMMENT\n", "#+END_COMMENT\n"),
        ("", ""),  # no #+end_ai: no block, as Org (and org-ai) reads it
    ],
)
def test_an_org_ai_block_only_in_the_users_text_is_no_chat(around):
    # A note that shows an org-ai chat inside another block, or a #+begin_ai line never
    # closed, holds no org-ai chat: it stays the user's note, no turn, no oracle's words.
    begin, end = around
    closing = "#+end_ai\n" if begin else "\nMy own notes go on after the example.\n"
    text = (
        "#+title: Org-ai setup\n\n* Pointing org-ai at the daemon\nMy notes on using org-ai with arcology-oracle.\n\n"
        f"{begin}#+begin_ai :model llama3.2+notes\n[ME]: What did I plant in May?\n\n[AI]: Tomatoes.\n{closing}{end}"
    )
    parsed, chunks = parse_note(text.encode(), "org-ai-setup.org", OPTIONS)
    assert [c.dialogue for cs in chunks for c in cs if c.dialogue] == []
    assert oracle_words_of(parsed, 2000, 200) == (set(), {})


def test_an_org_ai_block_beside_another_block_is_a_chat():
    # A block before or after it (a source block the user kept) leaves the chat a chat.
    text = (
        "* Tomatoes\n#+begin_src elisp\n(setq org-ai-default-chat-model \"llama3.2+notes\")\n#+end_src\n"
        "#+begin_ai :model llama3.2+notes\n[ME]: What did I plant in May?\n\n[AI]: Tomatoes.\n#+end_ai\n"
    )
    parsed, chunks = parse_note(text.encode(), "tomatoes.org", OPTIONS)
    turns = [c.dialogue for cs in chunks for c in cs if c.dialogue][0]
    assert [t.speaker for t in turns][-2:] == ["Me", "llama3.2+notes"]
    # The source block is the user's own: the heading is theirs, read without the reply.
    assert oracle_words_of(parsed, 2000, 200) == (set(), {0: ((8, 8),)})
    assert "setq" in parsed.headings[0].text and "[AI]" not in parsed.headings[0].text


def test_a_notes_file_where_gptel_saved_its_state_but_no_reply_is_the_users():
    # gptel-mode turned on in a notes file (the model llama3.2+notes, as the README sets
    # it up) and the file saved before any reply: gptel writes its :GPTEL_MODEL: and, only
    # when the buffer holds a reply, :GPTEL_BOUNDS:. Without bounds no line is the model's:
    # every heading stays the user's note, none a reply of the oracle's.
    text = (
        ":PROPERTIES:\n:GPTEL_MODEL: llama3.2+notes\n:GPTEL_BACKEND: Notes\n:END:\n#+title: 2026-12-05\n\n"
        "* Groceries\nBuy oat milk and rye flour.\n* Kiln\nThe kiln vent sticks again.\n"
    )
    parsed, chunks = parse_note(text.encode(), "daily/2026-12-05.org", OPTIONS)
    assert oracle_words_of(parsed, 2000, 200) == (set(), {})
    turns = [t for cs in chunks for c in cs for t in c.dialogue]
    assert all(t.speaker != "llama3.2+notes" for t in turns), turns


@pytest.mark.parametrize("header", [':model "llama3.2+notes"', ':service ollama :model "llama3.2+notes" :max-tokens 50'])
def test_an_org_ai_blocks_quoted_model_is_its_model(header):
    # org-ai reads its header as Babel's arguments, quotes taken away: :model "llama3.2+notes"
    # is that grounded model, its replies the oracle's.
    text = f"* Chat\n#+begin_ai {header}\n[ME]: Why rye?\n\n[AI]: Rye ferments faster.\n#+end_ai\n"
    parsed, chunks = parse_note(text.encode(), "chat.org", OPTIONS)
    assert [t.speaker for cs in chunks for c in cs for t in c.dialogue] == ["Me", "llama3.2+notes"]
    assert oracle_words_of(parsed, 2000, 200) == ({0}, {})


IMPORTED = """#+title: Chain skipping

* [2026-11-25 Wed 20:00] Chain skipping
Me: My bike chain skips on the third cog when I pedal hard. Is it the derailleur?

ChatGPT: Often it is a worn chain or cassette. Measure chain stretch: at 0.75% replace the chain.

Me: And if the barrel adjuster only helps a bit?

ChatGPT: Then indexing is not the cause; check the derailleur hanger and the chain wear.
"""


async def test_the_model_is_told_whose_words_a_conversations_turns_are(make_client, settings, roam_dir, fake_ollama):
    # The prompt said only "the notes are the user's own writing: say 'you wrote'", and
    # handed the model a window of an imported chat: ChatGPT's advice became "you wrote".
    (roam_dir / "chain-skipping.org").write_text(IMPORTED, encoding="utf-8")
    client = await make_client(settings)
    for path, body in [("/ask", {"question": "what did ChatGPT say about the chain skipping on the third cog?"}),
                       ("/api/chat", {"model": "llama3.2+notes", "stream": False, "messages": [
                           {"role": "user", "content": "what did ChatGPT say about the chain skipping on the third cog?"}]})]:  # fmt: skip
        resp = await client.post(path, json=body)
        assert resp.status == 200, await resp.text()
        system = next(m["content"] for m in fake_ollama.state.chats[-1] if "ChatGPT: Often it is a worn chain" in m["content"])
        assert "Speakers: Me, ChatGPT" in system
        assert "never what the user wrote" in system, path
