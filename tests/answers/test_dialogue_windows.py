"""Dialogue read as dialogue: a heading of ``Name: text`` paragraphs is stored per turn
with speakers and times, cut into scenes, and /recall and /ask give windows of turns
(the matching turn with its neighbours, verbatim, with speakers, date and link), against
the real daemon and the fake Ollama."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from arcology_oracle.index.parsing import ParseOptions, parse_note
from arcology_oracle.notes import dialogue
from tests.answers.test_recall import post
from tests.runners import run_cli, start_daemon

FILLER = [
    ("Me", "How was the week at the office, any better than the last one?"),
    ("Ana", "Busy, lots of meetings about the quarterly planning and the budget."),
    ("Me", "Same here, too many meetings and not enough time to do real work."),
    ("Ana", "The weather was grim all week, grey skies and cold wind from the north."),
    ("Me", "Rain every day. My umbrella finally broke on Thursday evening."),
    ("Ana", "I need a holiday somewhere warm, maybe in the autumn if money allows."),
    ("Me", "We could look at flights together next weekend and compare prices."),
    ("Ana", "Good idea, I will bring my laptop and we can make a list of places."),
    ("Me", "Did you finish painting the hallway or is it still half blue?"),
    ("Ana", "Still half blue, the shop ran out of the colour I wanted to use."),
    ("Me", "Typical. I hope they restock it before the end of the month."),
    ("Me", "Shall we try the new noodle place near the station on Friday?"),
    ("Ana", "Yes please, I heard their broth takes two days to make properly."),
    ("Me", "Then Friday it is, I will book a table for seven in the evening."),
    ("Ana", "They said two weeks, so I am not holding my breath about it."),
]


def session(stamp: str, title: str, middle: list[tuple[str, str]]) -> str:
    turns = FILLER[:2] + middle + FILLER[2:]
    return f"* [{stamp}] {title}\n" + "\n".join(f"{who}: {text}\n" for who, text in turns)


CHATS = "#+title: Chats with Ana\n\n" + "\n".join([
    session("2024-03-02 Sat 19:00", "Catching up", [("Ana", "We adopted a whippet called Pepper from the shelter."),
                                                     ("Me", "Lovely, send photos.")]),
    session("2024-05-11 Sat 20:15", "Evening chat", [("Me", "I started learning Welsh with a tutor called Gwen."),
                                                      ("Ana", "Pob lwc! That means good luck.")]),
    session("2024-06-20 Thu 18:40", "Quick hello", [("Ana", "I told Gwen about your Welsh lessons."),
                                                     ("Me", "Ha, small world.")]),
    session("2024-07-06 Sat 11:05", "Saturday", [("Ana", "We danced until two, the DJ played old funk."),
                                                  ("Me", "Sounds like a great night out.")]),
])  # fmt: skip
OPTIONS = ParseOptions(frozenset({"private"}), 2000, 200)


def test_a_dialogue_is_read_per_turn_and_cut_into_scenes():
    parsed, chunks = parse_note(CHATS.encode(), "ana.org", OPTIONS)
    first = chunks[1]
    turns = first[0].dialogue
    assert [t.speaker for t in turns[:4]] == ["Me", "Ana", "Ana", "Me"]
    lines = CHATS.split("\n")
    assert all(lines[t.start_line - 1] == t.text for t in turns)  # lines counted in the file
    assert turns[2].text == "Ana: We adopted a whippet called Pepper from the shelter." and turns[2].when == "2024-03-02"
    assert first[0].text.startswith("Chats with Ana > [2024-03-02 Sat 19:00] Catching up (2024-03-02)\n\nMe: How was")
    scenes = [c for c in first if c.first_turn != c.last_turn]
    assert (scenes[0].first_turn, scenes[-1].last_turn) == (0, len(turns) - 1) and len(scenes) > 1
    # Then each turn alone, so that a vector can find the turn and not only its scene.
    alone = [c for c in first if c.first_turn == c.last_turn]
    assert [c.first_turn for c in alone] == list(range(len(turns)))
    assert alone[2].text == "Chats with Ana > [2024-03-02 Sat 19:00] Catching up (2024-03-02)\n\n" + turns[2].text
    # Not a dialogue: one speaker line among paragraphs of prose.
    assert dialogue.read_turns("Note: this is prose.\n\nMore prose here.\n\nAnd more.") == []


def test_scenes_cut_at_time_gaps_markers_and_size():
    body = "\n".join(
        ["[10:00] Ana: hello", "[10:05] Me: hi", "[10:09] Ana: so", "[11:30] Me: back after lunch", "-----",
         "Ana: a new topic", *[f"Me: {'word ' * 60}" for _ in range(6)]]
    )  # fmt: skip
    turns = dialogue.read_turns(body, "2024-01-01")
    assert turns[3].when == "2024-01-01T11:30" and turns[4].marker
    scenes = dialogue.scenes(turns)
    assert scenes[0] == (0, 2)  # the gap of 81 minutes
    assert scenes[1] == (3, 3)  # the marker
    assert all(sum(len(t.text) for t in turns[a : b + 1]) <= dialogue.SCENE_MAX_CHARS for a, b in scenes)
    assert len(scenes) > 3 and {o for a, b in scenes for o in range(a, b + 1)} == set(range(len(turns)))


# Three turns of one session match, best first at 3 and 9 (all three words), then 6:
# the windows around 3 and 9 do not touch, the one around 6 touches both.
LIGHTHOUSE = ["Ben: Morning.", "Me: Morning, coffee is on.", "Ben: Thanks, I slept badly.",
              "Ben: The lighthouse keeper lit the old brass lantern last night.", "Me: Which one?",
              "Ben: The one on the north pier.", "Me: The lighthouse keeper is my uncle.",
              "Ben: Nice walk.", "Me: It was windy.", "Ben: The keeper of the lighthouse lantern waved.",
              "Me: Friendly man.", "Ben: Very.", "Me: Lunch?", "Ben: Soup, please."]  # fmt: skip


@pytest.fixture
async def chat_daemon(tmp_path, roam_dir, fake_ollama):
    (roam_dir / "ana.org").write_text(CHATS)
    (roam_dir / "ben.org").write_text("#+title: Ben\n* [2024-08-01 Thu 09:00] Pier\n" + "\n\n".join(LIGHTHOUSE) + "\n")
    d = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    yield d
    d.stop()


async def test_recall_and_ask_give_windows_of_turns(chat_daemon, fake_ollama):
    status, body = await post(chat_daemon, "/recall", {"question": "whippet Pepper shelter", "k": 2})
    assert status == 200, body
    note = body["notes"][0]
    # The matching turn with its neighbours, verbatim whole turns, not the whole session.
    evidence = "Ana: We adopted a whippet called Pepper from the shelter."
    lines = CHATS.split("\n")
    assert evidence in note["text"]
    assert note["text"] == "\n".join(lines[note["line"] - 1 : note["end_line"]])
    assert "Ana: They said two weeks" not in note["text"]  # the session's end: another scene
    assert set(note["speakers"]) == {"Ana", "Me"} and note["date"] == "2024-03-02"
    assert note["heading"] == "[2024-03-02 Sat 19:00] Catching up"
    assert len(body["notes"]) <= 2

    status, answer = await post(chat_daemon, "/ask", {"question": "whippet Pepper shelter", "k": 1})
    assert status == 200 and set(answer["sources"][0]["speakers"]) == {"Ana", "Me"}
    prompt = fake_ollama.state.chats[-1][0]["content"]
    assert "Speakers: " in prompt and evidence in prompt
    assert "Ana: They said two weeks" not in prompt  # the rest of the session stays out


async def test_a_turn_found_by_its_own_vector_is_a_window_of_its_neighbours(chat_daemon):
    # No keyword finds "DJ" (too short for the turns' BM25), and the whole scene's vector
    # is too far from the question: only the turn's own vector finds it.
    status, body = await post(chat_daemon, "/recall", {"question": "Who was the DJ?", "k": 2})
    assert status == 200, body
    note = body["notes"][0]
    assert "Ana: We danced until two, the DJ played old funk." in note["text"]
    assert note["date"] == "2024-07-06" and "Ana: They said two weeks" not in note["text"]
    assert len(note["text"].split("\n\n")) <= 5  # the turn and two either side


async def test_windows_that_come_to_touch_become_one(chat_daemon):
    status, body = await post(chat_daemon, "/recall", {"question": "lighthouse keeper lantern", "k": 3})
    assert status == 200, body
    pier = [n for n in body["notes"] if n["file"] == "ben.org"]
    assert len(pier) == 1, [(n["line"], n["end_line"]) for n in pier]  # no turn in two windows
    assert all(LIGHTHOUSE[i] in pier[0]["text"] for i in (3, 6, 9))


async def test_a_question_in_the_first_person_weighs_the_users_turns(chat_daemon):
    status, body = await post(chat_daemon, "/recall", {"question": "What did I say about Gwen and Welsh?", "k": 1})
    assert status == 200, body
    assert "Me: I started learning Welsh with a tutor called Gwen." in body["notes"][0]["text"]
    status, body = await post(chat_daemon, "/recall", {"question": "What did Ana say about Gwen and Welsh?", "k": 1})
    assert "Ana: I told Gwen about your Welsh lessons." in body["notes"][0]["text"]


async def test_a_questions_frame_does_not_gate_the_turns(chat_daemon):
    # "when did I first write about" asked for "first" and "writ" in the turns too.
    for question in ("whippet", "when did I first write about the whippet?", "what do I know about the whippet?"):
        status, body = await post(chat_daemon, "/recall", {"question": question, "k": 2})
        assert status == 200, body
        assert any("a whippet called Pepper" in n["text"] for n in body["notes"]), question


async def test_a_question_in_japanese_finds_a_japanese_turn(tmp_path, roam_dir, fake_ollama):
    """A Japanese question was refused (500) wherever dialogue was indexed: its bigrams
    searched a column the turns lacked. It finds the turn that holds its words, on /recall
    and /ask."""
    session = "\n".join(f"{who}: {text}\n" for who, text in [
        ("Me", "今日は何を作るの？"), ("Ana", "昆布と鰹節で出汁を取って、味噌汁を作るつもり。"),
        ("Me", "いいね、豆腐も入れて。"), ("Ana", "明日は雨が降るらしい。"), ("Me", "傘を忘れないでね。")])  # fmt: skip
    (roam_dir / "ryouri.org").write_text("#+title: 料理の会話\n* [2024-09-01 Sun 10:00] 夕食\n" + session)
    (roam_dir / "ana.org").write_text(CHATS)
    d = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        status, body = await post(d, "/recall", {"question": "味噌汁の作り方", "k": 1})
        assert status == 200, body
        assert "Ana: 昆布と鰹節で出汁を取って、味噌汁を作るつもり。" in body["notes"][0]["text"]
        status, answer = await post(d, "/ask", {"question": "味噌汁の作り方", "k": 1})
        assert status == 200, answer
        assert "味噌汁を作るつもり" in fake_ollama.state.chats[-1][0]["content"]
    finally:
        d.stop()


def imported_chat(day: dt.date) -> str:
    """A chat as ``arcology-oracle import`` writes it, its session on ``day``."""
    stamp = f"{day.isoformat()} {day.strftime('%a')} 10:00"
    return (
        ":PROPERTIES:\n:ID:       32ed2cdc-b37b-5223-be7e-a73c8d3ca170\n:IMPORTED_FROM: chatgpt\n:END:\n#+title: Bike repair\n\n"
        f"* [{stamp}] Bike repair\n:PROPERTIES:\n:ID:       e8e0d94b-b770-542f-b5f5-754dc04593c0\n:END:\n"
        "Me: The rear derailleur on my bicycle skips gears on hills.\n\n"
        "ChatGPT: Adjust the barrel adjuster a quarter turn counterclockwise.\n\n"
        "Me: That fixed the chain rubbing, thanks.\n\n"
        "ChatGPT: Great, also lubricate the chain.\n"
    )


@pytest.mark.parametrize(
    "body",
    [
        {"question": "what did I say about my bicycle derailleur"},
        {"question": "what did I say about my bicycle derailleur last week"},
        {"question": "what did I say about my bicycle derailleur", "since": "last week", "until": "last week"},
        {"question": "what did I say last week"},  # only a time: the range's turns
        {"question": "what did I say", "since": "last week", "until": "last week"},
    ],
)
async def test_a_time_in_the_question_dates_the_turns_and_hides_none(make_client, make_settings, fake_ollama, roam_dir, body):
    today = dt.date.today()
    last_week = today - dt.timedelta(days=today.weekday() + 5)  # Wednesday of last week
    (roam_dir / "bike-chat.org").write_text(imported_chat(last_week))
    client = await make_client(make_settings(ollama_host=fake_ollama.url))
    resp = await client.post("/recall", json=body)
    assert resp.status == 200
    notes = (await resp.json())["notes"]
    assert any(n["file"] == "bike-chat.org" and "derailleur" in n["text"] for n in notes), notes


def test_a_time_earlier_than_the_turn_before_is_on_the_next_day():
    # A chat log kept past midnight: [00:10] after [23:50] is the next day, as the
    # transcript importer reads it; a time with its date is taken as written.
    body = "[23:40] Ana: still up?\n[23:50] Me: yes\n[00:10] Ana: the owls are loud\n[00:25] Me: go to sleep\n[2024-03-09 08:00] Ana: morning"
    turns = dialogue.read_turns(body, "2024-03-05")
    assert [t.when for t in turns] == ["2024-03-05T23:40", "2024-03-05T23:50", "2024-03-06T00:10", "2024-03-06T00:25", "2024-03-09T08:00"]
    assert dialogue.scenes(turns)[0] == (0, 3)  # twenty minutes apart, not a day back


def test_a_time_a_few_minutes_before_the_turn_before_is_on_the_same_day():
    # Two devices' clocks a few minutes apart, or a turn edited in: [14:03] after [14:05]
    # is two minutes back, not the next day (nor is every turn after it); the next day is
    # only a time more than three hours back.
    body = "[14:00] Ana: lunch?\n[14:05] Me: yes\n[14:03] Ana: the usual place\n[14:10] Me: see you\n[02:00] Ana: home now"
    turns = dialogue.read_turns(body, "2024-03-05")
    assert [t.when for t in turns] == ["2024-03-05T14:00", "2024-03-05T14:05", "2024-03-05T14:03", "2024-03-05T14:10", "2024-03-06T02:00"]
    # The night the clocks go back (02:00 summer time is 01:00 again): the same night.
    body = "[01:40] Ana: still up?\n[01:55] Me: yes\n[01:05] Ana: the clocks went back\n[01:20] Me: an extra hour"
    turns = dialogue.read_turns(body, "2024-10-27")
    assert [t.when[:10] for t in turns] == ["2024-10-27"] * 4


def test_a_reply_the_next_morning_to_an_evenings_message_is_on_the_next_day():
    # A chat kept over a night: [08:00] after [19:40] is eleven hours and forty minutes
    # back, but no clock is that far apart nor a turn edited in so far back: it is the
    # next morning, as are the turns after it.
    body = "[19:30] Ana: kiln tonight?\n[19:40] Me: too tired\n[08:00] Ana: morning! kiln now?\n[08:05] Me: yes"
    turns = dialogue.read_turns(body, "2024-03-05")
    assert [t.when for t in turns] == ["2024-03-05T19:30", "2024-03-05T19:40", "2024-03-06T08:00", "2024-03-06T08:05"]


async def test_a_turn_after_midnight_is_recalled_by_its_own_day(make_client, make_settings, fake_ollama, roam_dir):
    (roam_dir / "late-chat.org").write_text(
        "#+title: Late chat\n\n* [2024-03-05 Tue 23:30] Late chat with Ana\n"
        "[23:40] Ana: Are you still up?\n[23:50] Me: Yes, finishing the tax return.\n"
        "[00:10] Ana: The owls in the churchyard are so loud tonight.\n[00:25] Me: I hear the barn owl nesting in the belfry.\n"
    )
    client = await make_client(make_settings(ollama_host=fake_ollama.url))
    resp = await client.post("/recall", json={"question": "what did I say about the owl on 2024-03-06?"})
    notes = (await resp.json())["notes"]
    assert any(n["file"] == "late-chat.org" and "barn owl" in n["text"] for n in notes), notes


async def test_a_question_that_is_only_its_time_finds_that_days_conversation(make_client, make_settings, fake_ollama, roam_dir):
    # Notes saved today (dated by their file's modification time) are as many as k: the
    # conversation captured today must still be one of the notes of "what did I say today?".
    (roam_dir / "areas").mkdir()
    for n in range(12):
        (roam_dir / "areas" / f"area-{n}.org").write_text(f"#+title: Area {n}\n" + "".join(f"* Item {i}\nText {i}.\n" for i in range(5)))
    client = await make_client(make_settings(ollama_host=fake_ollama.url))
    said = "Me: the zorbleflux kiln vent sticks\n\nAna: oil the zorbleflux hinge\n\nMe: zorbleflux fixed now\n\nAna: great news"
    resp = await client.post("/memorize", json={"text": said})
    assert resp.status == 200
    for question in ("what did I say today?", "what did I note today?"):
        resp = await client.post("/recall", json={"question": question, "k": 5})
        notes = (await resp.json())["notes"]
        assert any("zorbleflux" in n["text"] for n in notes), (question, [n["heading"] for n in notes])


async def test_what_chatgpt_said_in_an_imported_chat_is_recalled(tmp_path, roam_dir, fake_ollama):
    # "what did ChatGPT tell me about rye" found nothing: "tell" counted as a word the
    # turns must hold, so neither the user's turn about rye nor ChatGPT's reply passed.
    export = Path(__file__).parent.parent / "importers" / "fixtures" / "chatgpt.json"
    code, _, err = await run_cli("import", "chatgpt", str(export), "--roam-dir", str(roam_dir), "--db", str(tmp_path / "daemon.sqlite3"))
    assert code == 0, err
    d = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        status, body = await post(d, "/recall", {"question": "what did ChatGPT tell me"})
        assert status == 200 and "ChatGPT: An 11-34 gives you" in "\n".join(n["text"] for n in body["notes"])
        status, body = await post(d, "/recall", {"question": "what did ChatGPT tell me about rye"})
        texts = "\n".join(n["text"] for n in body["notes"])
        assert status == 200 and "ChatGPT: Feed it at a ratio of 1:1:1." in texts, body
        assert "11-34" not in texts  # its words about something else are not evidence
    finally:
        d.stop()
