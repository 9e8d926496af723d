"""Time questions asked on the days the calendar turns: a Monday (yesterday is in last
week), a Sunday (this week ends today), the 1st of a month, 31 March (last month has no
31st), 1 January (last month and yesterday are last year) and 29 February (a year ago
had none). CI asks on whatever day it runs, so each is pinned here with ``now``."""

from __future__ import annotations

import datetime as dt

import pytest

from arcology_oracle.answers.when import parse_when

MONDAY_1ST = dt.datetime(2027, 3, 1, 10)
SUNDAY = dt.datetime(2027, 2, 28, 10)
MARCH_31 = dt.datetime(2027, 3, 31, 10)
NEW_YEAR = dt.datetime(2027, 1, 1, 10)
LEAP_DAY = dt.datetime(2028, 2, 29, 10)


@pytest.mark.parametrize(
    ("now", "question", "since", "until"),
    [
        (MONDAY_1ST, "what did I do last week?", "2027-02-22", "2027-02-28"),
        (MONDAY_1ST, "what did I do yesterday?", "2027-02-28", "2027-02-28"),
        (MONDAY_1ST, "what did I do this week?", "2027-03-01", "2027-03-07"),
        (MONDAY_1ST, "what did I do last weekend?", "2027-02-27", "2027-02-28"),
        (MONDAY_1ST, "what did I do last month?", "2027-02-01", "2027-02-28"),
        (MONDAY_1ST, "先週は何をした？", "2027-02-22", "2027-02-28"),
        (MONDAY_1ST, "上周我做了什么？", "2027-02-22", "2027-02-28"),
        (SUNDAY, "what did I do last week?", "2027-02-15", "2027-02-21"),
        (SUNDAY, "what did I do this week?", "2027-02-22", "2027-02-28"),
        (SUNDAY, "what did I do this weekend?", "2027-02-27", "2027-02-28"),
        (SUNDAY, "what did I do last weekend?", "2027-02-20", "2027-02-21"),
        (SUNDAY, "今週は何をした？", "2027-02-22", "2027-02-28"),
        (MARCH_31, "what did I do last month?", "2027-02-01", "2027-02-28"),
        (MARCH_31, "what did I do a month ago?", "2027-02-01", "2027-02-28"),
        (MARCH_31, "what did I do this day last year?", "2026-03-31", "2026-03-31"),
        (MARCH_31, "先月は何をした？", "2027-02-01", "2027-02-28"),
        (MARCH_31, "上个月做了什么", "2027-02-01", "2027-02-28"),
        (NEW_YEAR, "what did I do yesterday?", "2026-12-31", "2026-12-31"),
        (NEW_YEAR, "what did I do last month?", "2026-12-01", "2026-12-31"),
        (NEW_YEAR, "what did I do last year?", "2026-01-01", "2026-12-31"),
        (NEW_YEAR, "what did I do this week?", "2026-12-28", "2027-01-03"),
        (NEW_YEAR, "what did I do last week?", "2026-12-21", "2026-12-27"),
        (NEW_YEAR, "昨日は何をした？", "2026-12-31", "2026-12-31"),
        (LEAP_DAY, "what did I do this day last year?", "2027-02-28", "2027-02-28"),
        (LEAP_DAY, "去年の今日は何をした？", "2027-02-28", "2027-02-28"),
        (LEAP_DAY, "what did I do this month?", "2028-02-01", "2028-02-29"),
        (LEAP_DAY, "what did I do yesterday?", "2028-02-28", "2028-02-28"),
        (LEAP_DAY, "what did I do last month?", "2028-01-01", "2028-01-31"),
    ],
)
def test_the_days_the_calendar_turns(now, question, since, until):
    found = parse_when(question, now)
    assert found is not None, question
    assert (found.since.isoformat(), found.until.isoformat()) == (since, until), (now, question)


SUNDAY_EVENING = dt.datetime(2027, 2, 28, 19)
SATURDAY = dt.datetime(2027, 2, 27, 10)
WEDNESDAY = dt.datetime(2027, 3, 3, 10)


@pytest.mark.parametrize(
    ("now", "question", "since", "until"),
    [
        # A weekday named alone on that weekday is today ("last Sunday" is a week back).
        (SUNDAY_EVENING, "what did I write on Sunday?", "2027-02-28", "2027-02-28"),
        (SUNDAY_EVENING, "what did I do Sunday", "2027-02-28", "2027-02-28"),
        (SUNDAY_EVENING, "what did I do on Sunday evening?", "2027-02-28", "2027-02-28"),
        (SUNDAY_EVENING, "what did I do last Sunday?", "2027-02-21", "2027-02-21"),
        (SUNDAY_EVENING, "what have I done since Sunday?", "2027-02-21", "2027-02-28"),
        (SUNDAY_EVENING, "日曜日に何を書いた？", "2027-02-28", "2027-02-28"),
        (SUNDAY_EVENING, "日曜に何をした？", "2027-02-28", "2027-02-28"),
        (SUNDAY_EVENING, "星期天我写了什么", "2027-02-28", "2027-02-28"),
        (SATURDAY, "what did I write on Sunday?", "2027-02-21", "2027-02-21"),
        (SATURDAY, "what did I write on Saturday?", "2027-02-27", "2027-02-27"),
        (WEDNESDAY, "what did I write on Sunday?", "2027-02-28", "2027-02-28"),
        # A weekend is its Saturday and Sunday, never the whole week.
        (WEDNESDAY, "先週末は何をした？", "2027-02-27", "2027-02-28"),
        (SUNDAY_EVENING, "先週末は何をした？", "2027-02-20", "2027-02-21"),
        (WEDNESDAY, "今週末の予定は？", "2027-03-06", "2027-03-07"),
        (WEDNESDAY, "週末は何をした？", "2027-02-27", "2027-02-28"),
        (SUNDAY_EVENING, "週末は何をした？", "2027-02-27", "2027-02-28"),
        (WEDNESDAY, "先週末から何をした？", "2027-02-27", "2027-03-03"),
        (WEDNESDAY, "上周末做了什么", "2027-02-27", "2027-02-28"),
        (WEDNESDAY, "上个周末做了什么", "2027-02-27", "2027-02-28"),
        (WEDNESDAY, "这周末做什么", "2027-03-06", "2027-03-07"),
        (WEDNESDAY, "周末做了什么", "2027-02-27", "2027-02-28"),
        (WEDNESDAY, "what did I do over the weekend?", "2027-02-27", "2027-02-28"),
        (SATURDAY, "what did I do on the weekend?", "2027-02-27", "2027-02-28"),
        (WEDNESDAY, "what is on next weekend?", "2027-03-13", "2027-03-14"),  # as "next week"
        (WEDNESDAY, "来週末の予定は？", "2027-03-13", "2027-03-14"),
        (WEDNESDAY, "what did I do last weekend?", "2027-02-27", "2027-02-28"),
        # A weekday of last, this or next week is that day, not the whole week.
        (WEDNESDAY, "先週の日曜日に何をした？", "2027-02-28", "2027-02-28"),
        (WEDNESDAY, "来週の金曜の予定", "2027-03-12", "2027-03-12"),
        (WEDNESDAY, "上周日写了什么", "2027-02-28", "2027-02-28"),
        (WEDNESDAY, "上个星期一做了什么", "2027-02-22", "2027-02-22"),
        (WEDNESDAY, "这周日做什么", "2027-03-07", "2027-03-07"),
        (WEDNESDAY, "上个月做了什么", "2027-02-01", "2027-02-28"),
        # A fortnight is 14 days, today and the 13 before.
        (WEDNESDAY, "what did I do last fortnight?", "2027-02-18", "2027-03-03"),
        (WEDNESDAY, "what did I do the past fortnight?", "2027-02-18", "2027-03-03"),
        (WEDNESDAY, "what did I do over the last fortnight?", "2027-02-18", "2027-03-03"),
        (WEDNESDAY, "what did I do in the past 2 fortnights?", "2027-02-04", "2027-03-03"),
    ],
)
def test_weekdays_weekends_and_fortnights(now, question, since, until):
    found = parse_when(question, now)
    assert found is not None, question
    assert (found.since.isoformat(), found.until.isoformat()) == (since, until), (now, question)


@pytest.mark.parametrize("question", ["毎週末何をしている？", "週末旅行のメモ", "每周末做什么"])
def test_every_weekend_is_no_time(question):
    assert parse_when(question, WEDNESDAY) is None
