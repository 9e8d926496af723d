"""Time phrases a person uses that were not read, or read wrongly: months in kanji
numerals (三月, 十二月五日), a day of the month alone ("on the 5th"), a weekday's night
past midnight ("last Friday night"), the morning before 05:00, the fixed holidays
(Christmas, New Year's Eve and Day) and two days named together ("Monday or Tuesday");
and through the real daemon, the gate reading a question's subject, not its frame
("what do I know about sourdough?")."""

from __future__ import annotations

import datetime as dt

import aiohttp
import pytest

from arcology_oracle.answers.when import parse_when
from tests.runners import start_daemon

FRIDAY = dt.datetime(2026, 12, 11, 15)  # a Friday afternoon


def days(question: str, now: dt.datetime) -> tuple[str | None, str | None]:
    found = parse_when(question, now)
    assert found is not None, question
    return found.as_dict()["since"], found.as_dict()["until"]


@pytest.mark.parametrize(
    ("question", "since", "until"),
    [
        ("三月に何をした？", "2026-03-01", "2026-03-31"),
        ("十二月のメモ", "2026-12-01", "2026-12-31"),
        ("十二月二十五日は何をした", "2025-12-25", "2025-12-25"),  # the latest, not yet this year's
        ("去年の三月は何をした？", "2025-03-01", "2025-03-31"),
        ("一月から三月まで", "2026-01-01", "2026-03-31"),
        ("三月我做了什么", "2026-03-01", "2026-03-31"),
        ("2024年十月", "2024-10-01", "2024-10-31"),
    ],
)
def test_months_in_kanji_numerals(question, since, until):
    assert days(question, FRIDAY) == (since, until)


@pytest.mark.parametrize("question", ["十三月", "三日前に"])
def test_kanji_numerals_that_are_no_month_stay_as_they_were(question):
    found = parse_when(question, FRIDAY)
    assert found is None or found.expression == "三日前", found


@pytest.mark.parametrize(
    ("question", "now", "since", "until"),
    [
        # A day of the month alone: this month's when it has come, else last month's (or
        # the latest month that has it).
        ("what did I write on the 5th?", FRIDAY, "2026-12-05", "2026-12-05"),
        ("what did I write the 11th", FRIDAY, "2026-12-11", "2026-12-11"),
        ("what happened on the 20th?", FRIDAY, "2026-11-20", "2026-11-20"),
        ("what happened on the 31st?", FRIDAY, "2026-10-31", "2026-10-31"),  # November has none
        ("what did I do before the 5th", FRIDAY, None, "2026-12-04"),
        ("on 5 March", FRIDAY, "2026-03-05", "2026-03-05"),
        ("what did I cook March 5th", FRIDAY, "2026-03-05", "2026-03-05"),
        # A weekday's night runs past midnight into the next day's small hours.
        ("what did I do last Friday night?", FRIDAY, "2026-12-04", "2026-12-05"),
        ("what did I do on Wednesday night?", FRIDAY, "2026-12-09", "2026-12-10"),
        # The fixed holidays: the latest, or the year named.
        ("what did I do at Christmas?", FRIDAY, "2025-12-25", "2025-12-25"),
        ("what did I cook on Christmas Eve 2024?", FRIDAY, "2024-12-24", "2024-12-24"),
        ("what did I do on New Year's Eve?", FRIDAY, "2025-12-31", "2025-12-31"),
        ("what did I do on New Year's Day?", FRIDAY, "2026-01-01", "2026-01-01"),
        ("what did I do since Christmas?", FRIDAY, "2025-12-25", "2026-12-11"),
        ("between Christmas and New Year's Day", FRIDAY, "2025-12-25", "2026-01-01"),
        ("what did I do at Christmas?", dt.datetime(2026, 12, 25, 20), "2026-12-25", "2026-12-25"),
        # Two days together, not the first alone or "from" it to today.
        ("what did I write from last Tuesday and Wednesday?", FRIDAY, "2026-12-08", "2026-12-09"),
        ("did I bake on Monday or Tuesday?", FRIDAY, "2026-12-07", "2026-12-08"),
        ("did I bake on Monday or Tuesday?", dt.datetime(2026, 12, 7, 15), "2026-11-30", "2026-12-01"),
        # Before 05:00, this morning is the day still running's: yesterday's.
        ("what did I write this morning?", dt.datetime(2026, 12, 11, 0, 10), "2026-12-10", "2026-12-10"),
        ("what did I write this morning?", dt.datetime(2026, 12, 11, 6), "2026-12-11", "2026-12-11"),
        # A weekday named on that day is today (a week back would be "last Friday").
        ("what did I do on Friday?", FRIDAY, "2026-12-11", "2026-12-11"),
    ],
)
def test_english_phrases(question, now, since, until):
    assert days(question, now) == (since, until)


@pytest.mark.parametrize(
    "question",
    ["what was the 5th time I baked", "what is in the 3rd chapter", "the 1st draft of the essay",
     "what did I write about the Christmas tree?", "how do I make Christmas cake", "what did I buy Ana for Christmas?"],
)  # fmt: skip
def test_an_ordinal_or_a_holiday_that_names_a_thing_is_no_day(question):
    assert parse_when(question, FRIDAY) is None


def span(answer: dict) -> tuple[str, str] | None:
    found = answer.get("date_range")
    return (found["since"], found["until"]) if found else None


async def test_frame_words_a_day_of_the_month_and_a_friday_night_through_the_real_daemon(tmp_path, roam_dir, fake_ollama):
    # "what do I know about sourdough?" gave no notes where "sourdough" did; "on the 5th"
    # was no time; "last Friday night" left out the Saturday's small hours.
    today = dt.date.today()
    friday = today - dt.timedelta(days=(today.weekday() - 4) % 7 or 7)  # "last Friday"
    dated = {
        "Sourdough loaf": today - dt.timedelta(days=400), "Gig at the pub": friday,
        "Walked home at two": friday + dt.timedelta(days=1), "Thursday errands": friday - dt.timedelta(days=1),
    }  # fmt: skip
    for n, (heading, day) in enumerate(dated.items()):
        (roam_dir / f"dated-{n}.org").write_text(f"#+title: Dated {n}\n* {heading}\n:PROPERTIES:\n:CREATED: [{day} 10:00]\n:END:\nSomething.\n")
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    try:
        async with aiohttp.ClientSession(headers=daemon.headers) as session:

            async def ask(question: str) -> dict:
                async with session.post(daemon.url + "/ask", json={"question": question, "k": 8}) as resp:
                    assert resp.status == 200, await resp.text()
                    return await resp.json()

            for question in ("sourdough", "what do I know about sourdough?", "when did I first write about sourdough?"):
                assert "Sourdough loaf" in [s["heading"] for s in (await ask(question))["sources"]], question
            suffix = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}.get(today.day, "th")
            assert span(await ask(f"what did I write on the {today.day}{suffix}?")) == (str(today), str(today))
            night = await ask("what did I do last Friday night?")
            assert span(night) == (str(friday), str(friday + dt.timedelta(days=1)))
            assert {s["heading"] for s in night["sources"]} & set(dated) == {"Gig at the pub", "Walked home at two"}
    finally:
        daemon.stop()
