"""Time questions through the app and the real daemon: "since" a clause ("since I ordered
the new chain") dated by the notes as "since the new chain order" is, and a question that
is only its time in Japanese or Chinese ("先週は何をした？") listing each day's headings in
file order, as in English."""

from __future__ import annotations

import datetime as dt

import aiohttp

from tests.runners import start_daemon

WORDS = ("Alpha", "Bravo", "Charlie", "Delta")


def last_week_start(today: dt.date) -> dt.date:
    return today - dt.timedelta(days=today.weekday() + 7)


def write_notes(roam_dir, today: dt.date) -> dict[str, dt.date]:
    """Two days of last week with four headings each (each its own node), the day the new
    chain was ordered (before last week) and the day it was fitted (today: yesterday is
    in last week on a Monday), and a chat about chains a year old."""
    daily = roam_dir / "daily"
    daily.mkdir(exist_ok=True)
    start = last_week_start(today)
    for n in range(2):
        day = start + dt.timedelta(days=n)
        body = "".join(
            f"* {w} {n}\n:PROPERTIES:\n:ID: {w.lower()}{n}-0000-4000-8000-000000000000\n:END:\n{w} thing.\n" for w in WORDS
        )
        (daily / f"{day}.org").write_text(f"#+title: {day}\n{body}")
    ordered, fitted, chat = start - dt.timedelta(days=5), today, today - dt.timedelta(days=365)
    (daily / f"{ordered}.org").write_text(f"#+title: {ordered}\n* Ordered the new chain\nA KMC chain from the bike shop.\n")
    (daily / f"{fitted}.org").write_text(f"#+title: {fitted}\n* Fitted the new chain\nThe old one had stretched.\n")
    (roam_dir / "chain-chat.org").write_text(
        f"#+title: Chat about chains\n* Cleaning a bike chain\n:PROPERTIES:\n:CREATED: [{chat} Mon 10:00]\n:END:\n"
        "Speakers: Me, ChatGPT\nMe: How often should I clean the chain of my bike?\n"
        "ChatGPT: Clean the chain every few rides; a chain that is kept clean lasts.\n"
    )
    return {"ordered": ordered, "fitted": fitted, "chat": chat}


def day_order(notes: list[dict]) -> dict[str, list[str]]:
    """The headings of each day of last week's two, in the order given."""
    order: dict[str, list[str]] = {}
    for n in notes:
        if n["heading"].split()[0] in WORDS:
            order.setdefault(n["date"], []).append(n["heading"])
    return order


FILE_ORDER = [[f"{w} {n}" for w in WORDS] for n in range(2)]


async def test_since_a_clause_is_dated_by_the_notes(make_client, make_settings, fake_ollama, roam_dir):
    # "since I ordered the new chain" was no time: /recall gave the old chat about chains
    # and not the note of the day the chain was fitted.
    today = dt.date.today()
    days = write_notes(roam_dir, today)
    client = await make_client(make_settings(ollama_host=fake_ollama.url))
    resp = await client.post("/recall", json={"question": "What happened since I ordered the new chain?", "k": 8})
    body = await resp.json()
    assert body["date_range"] and body["date_range"]["since"] == str(days["ordered"]), body["date_range"]
    headings = [n["heading"] for n in body["notes"]]
    assert "Fitted the new chain" in headings and "Cleaning a bike chain" not in headings, headings
    assert all(n["date"] >= str(days["ordered"]) for n in body["notes"])


async def test_last_week_in_japanese_and_chinese_lists_each_day_in_file_order(make_client, make_settings, fake_ollama, roam_dir):
    # 先週は何をした？ left は何をした to search for, and a day's headings came in the order they
    # scored (Alpha, Charlie, Delta, Bravo), where "last week" gives them in file order.
    write_notes(roam_dir, dt.date.today())
    client = await make_client(make_settings(ollama_host=fake_ollama.url))
    for question in ("What did I do last week?", "先週は何をした？", "上周我做了什么？"):
        resp = await client.post("/recall", json={"question": question, "k": 8})
        assert list(day_order((await resp.json())["notes"]).values()) == FILE_ORDER, question


async def test_both_through_the_real_daemon(tmp_path, roam_dir, fake_ollama):
    today = dt.date.today()
    days = write_notes(roam_dir, today)
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        async with aiohttp.ClientSession(headers=daemon.headers) as session:

            async def ask(question: str) -> dict:
                async with session.post(daemon.url + "/ask", json={"question": question, "k": 8}) as resp:
                    assert resp.status == 200
                    return await resp.json()

            answer = await ask("what did I do since we ordered the new chain?")
            assert answer["date_range"]["since"] == str(days["ordered"])
            assert "Fitted the new chain" in [s["heading"] for s in answer["sources"]]
            for question in ("What did I do last week?", "先週は何をした？"):
                assert list(day_order((await ask(question))["sources"]).values()) == FILE_ORDER, question
    finally:
        daemon.stop()


async def test_a_weekday_a_weekend_and_a_fortnight_through_the_real_daemon(tmp_path, roam_dir, fake_ollama):
    # Asked on a Sunday, "what did I write on Sunday" gave the Sunday a week back; 先週末
    # gave all of last week; "the past fortnight" was no time at all. The same weekday
    # case comes every day: today's weekday asked today.
    today = dt.date.today()
    saturday = last_week_start(today) + dt.timedelta(days=5)
    dated = {
        "Kite today": today, "Kite a week ago": today - dt.timedelta(days=7),
        "Weekend walk": saturday, "Midweek walk": saturday - dt.timedelta(days=3),
        "Fortnight kiln": today - dt.timedelta(days=12), "Older kiln": today - dt.timedelta(days=20),
    }  # fmt: skip
    for n, (heading, day) in enumerate(dated.items()):
        (roam_dir / f"dated-{n}.org").write_text(f"#+title: Dated {n}\n* {heading}\n:PROPERTIES:\n:CREATED: [{day} 10:00]\n:END:\nSomething.\n")
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        async with aiohttp.ClientSession() as session:

            async def recalled(question: str) -> set[str]:
                async with session.post(daemon.url + "/recall", json={"question": question, "k": 20}) as resp:
                    assert resp.status == 200, await resp.text()
                    return {n["heading"] for n in (await resp.json())["notes"]} & set(dated)

            assert await recalled(f"what did I write on {today:%A}?") == {"Kite today"}
            # On a weekend day, a week ago is last weekend too.
            weekend = {h for h, day in dated.items() if saturday <= day <= saturday + dt.timedelta(days=1)}
            assert "Weekend walk" in weekend and await recalled("先週末は何を書いた？") == weekend
            fortnight = await recalled("what did I write in the past fortnight?")
            assert "Fortnight kiln" in fortnight and "Older kiln" not in fortnight
    finally:
        daemon.stop()


async def test_a_busy_first_day_leaves_room_for_a_later_conversation(tmp_path, roam_dir, fake_ollama):
    # "what did I do in May 2025?" with a first day of eight headings gave those eight and
    # no window of the standup three weeks later: windows were taken oldest first, where
    # headings are spread over the range's days.
    busy = "".join(f"* {w} errand\n:PROPERTIES:\n:ID: {w.lower()}-0000-4000-8000-000000000000\n:END:\nDone.\n" for w in WORDS * 2)
    (roam_dir / "daily").mkdir(exist_ok=True)
    (roam_dir / "daily" / "2025-05-01.org").write_text(f"#+title: 2025-05-01\n{busy}")
    turns = ["Ana: The parser refactor landed.", "Ben: The websocket test still flakes.",
             "Ana: Pin the event loop policy.", "Ben: I will try that today."]  # fmt: skip
    (roam_dir / "standup.org").write_text("#+title: Standup\n* [2025-05-20 Tue 09:00] Standup\n" + "\n\n".join(turns) + "\n")
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        async with aiohttp.ClientSession(headers=daemon.headers) as session:
            for route, key in (("/ask", "sources"), ("/recall", "notes")):
                async with session.post(daemon.url + route, json={"question": "What did I do in May 2025?", "k": 8}) as resp:
                    assert resp.status == 200, await resp.text()
                    dates = {n["date"][:10] for n in (await resp.json())[key]}
                assert dates == {"2025-05-01", "2025-05-20"}, (route, dates)
    finally:
        daemon.stop()
