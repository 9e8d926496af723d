"""Time: heading dates and their sources, reading the time in questions, and answers
from that time through the real daemon (real dailies, real watcher)."""

from __future__ import annotations

import datetime as dt
import os
import re

import aiohttp
import pytest

from arcology_oracle.answers import retrieval, timeline
from arcology_oracle.answers.when import explicit_range, parse_when
from arcology_oracle.errors import BadRequest
from tests.notes.test_orgreader import by_title, read
from tests.runners import start_daemon, wait_until

TODAY = dt.date(2026, 12, 3)  # a Thursday


# -- dates in org -------------------------------------------------------------------------


def test_heading_dates_record_their_source(tmp_path):
    text = (
        "#+title: Plain\n"
        "* Created\n:PROPERTIES:\n:CREATED: [2024-05-06 Mon 10:00]\n:END:\n"
        "** Child inherits\n"
        "* Stamped <2024-07-08 Mon>\n"
        "* DONE Closed\nCLOSED: [2024-08-09 Fri 11:00]\n"
        "* Body stamp\nMet Ann on [2024-09-10 Tue] at the market.\n"
        "* Nothing\nno date here\n"
    )
    h = by_title(read(tmp_path, "plain.org", text))
    got = {title: (x.date, x.date_source) for title, x in h.items()}
    assert got["Created"] == ("2024-05-06", "created")
    assert got["Child inherits"] == ("2024-05-06", "created")
    assert got["Stamped <2024-07-08 Mon>"] == ("2024-07-08", "timestamp")
    assert got["Closed"] == ("2024-08-09", "closed")
    assert got["Body stamp"] == ("2024-09-10", "timestamp")
    assert got["Nothing"] == (None, None)  # the store falls back on the file's mtime
    daily = by_title(read(tmp_path, "daily/2025-01-02.org", "#+title: x\n* Plan\nSCHEDULED: <2025-02-01 Sat>\n"))
    assert (daily["Plan"].date, daily["Plan"].date_source) == ("2025-01-02", "daily")


# -- reading the time in questions --------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "since", "until"),
    [
        ("what did I do last week", "2026-11-23", "2026-11-29"),
        ("What did I bake in March 2024?", "2024-03-01", "2024-03-31"),
        ("what did I read in March", "2026-03-01", "2026-03-31"),
        ("yesterday", "2026-12-02", "2026-12-02"),
        ("what happened this day last year", "2025-12-03", "2025-12-03"),
        ("what changed between January and March", "2026-01-01", "2026-03-31"),
        ("since 2024-05-01 what did I cook", "2024-05-01", "2026-12-03"),
        ("notes before May 2025", None, "2025-04-30"),
        ("anything in 2024", "2024-01-01", "2024-12-31"),
        # A trailing year is both sides' (it was this year's March to 2024's May).
        ("what did I say between March and May 2024", "2024-03-01", "2024-05-31"),
        ("between 5 March and 10 March 2024", "2024-03-05", "2024-03-10"),
        ("between May 2024 and March 2024", "2024-03-01", "2024-05-31"),  # either order
        ("from 2024-02-01 to 2024-02-28", "2024-02-01", "2024-02-28"),  # not until today
        ("from March to May", "2026-03-01", "2026-05-31"),
        ("since May", "2026-05-01", "2026-12-03"),  # a month alone, though "may" is a verb too
        # The calendar's ends: no day before the first or after the last (a 500 before).
        ("what did I say before 0001-01-01", None, "0001-01-01"),
        ("0001年1月1日より前に何を言った", None, "0001-01-01"),
        ("what did I say after 9999-12-31", "9999-12-31", "2026-12-03"),
        # Spans counted back from today (TODAY is a Thursday), and weekends.
        ("what did I do in the past week", "2026-11-27", "2026-12-03"),
        ("in the last 3 days", "2026-12-01", "2026-12-03"),
        ("what did I write over the last two weeks", "2026-11-20", "2026-12-03"),
        # "the" unsaid before a count (it was no time at all).
        ("what did I write last two weeks", "2026-11-20", "2026-12-03"),
        ("notes from past 3 days", "2026-12-01", "2026-12-03"),
        ("in the last few days", "2026-12-01", "2026-12-03"),
        ("in the past month", "2026-11-04", "2026-12-03"),
        ("what did I say last weekend", "2026-11-28", "2026-11-29"),
        # Days by their parts (it was every day up to the day before yesterday; the others none).
        ("what did I note the day before yesterday?", "2026-12-01", "2026-12-01"),
        # A night runs past midnight: its small hours are today (a turn at 00:10 is dated so).
        ("what did I say last night", "2026-12-02", "2026-12-03"),
        ("what did I say yesterday night", "2026-12-02", "2026-12-03"),
        # ... and they bound a range as any day does (it was that day alone).
        ("what changed since the day before yesterday", "2026-12-01", "2026-12-03"),
        ("what did I write since last night", "2026-12-02", "2026-12-03"),
        ("what did I note before the day before yesterday", None, "2026-11-30"),
        ("what did I do since last weekend", "2026-11-28", "2026-12-03"),
        ("what did I note after this morning's call", "2026-12-03", "2026-12-03"),
        ("what did I write after last night", "2026-12-03", "2026-12-03"),
        # A part of a day followed by when in it (after dinner, before bed) or where (in the
        # meeting) is still that day; 'from last night' was read as 'until this morning'.
        ("what did I eat last night after dinner", "2026-12-02", "2026-12-03"),
        ("what did I say this morning before work", "2026-12-03", "2026-12-03"),
        ("what did I say last night in the meeting", "2026-12-02", "2026-12-03"),
        ("what did I write from last night until this morning", "2026-12-02", "2026-12-03"),
        ("what did I write yesterday evening about owls", "2026-12-02", "2026-12-02"),
        ("what did I note this morning", "2026-12-03", "2026-12-03"),
        # A month's short name beside a number (no time was read).
        ("what did I say on Dec 1", "2026-12-01", "2026-12-01"),
        ("what did I note on 5 Sept 2024", "2024-09-05", "2024-09-05"),
        ("what did I cook in Oct 2025", "2025-10-01", "2025-10-31"),
        ("what did I bake on Mar 3", "2026-03-03", "2026-03-03"),
        ("what did I say on Dec 1st", "2026-12-01", "2026-12-01"),
        ("what did I plant on Sept 5th", "2026-09-05", "2026-09-05"),
        ("what did I say on the 1st of Dec", "2026-12-01", "2026-12-01"),
        # A span of something else is no span counted back from today.
        ("the last two weeks of December", "2026-12-01", "2026-12-31"),
        ("what did I do the last weekend in May", "2026-05-01", "2026-05-31"),
        # A month of a year named relative to this one: it was this year's month.
        ("what was I doing in March last year?", "2025-03-01", "2025-03-31"),
        ("what did I write in December of last year", "2025-12-01", "2025-12-31"),
        ("what changed since March last year", "2025-03-01", "2026-12-03"),
        ("between March last year and May last year", "2025-03-01", "2025-05-31"),
        ("what do I plan for Jan next year", "2027-01-01", "2027-01-31"),
        ("what did I do this past week?", "2026-11-27", "2026-12-03"),
        ("what did I read over this past month", "2026-11-04", "2026-12-03"),
        ("what did I do the week before last?", "2026-11-16", "2026-11-22"),
        ("what did I write the month before last month", "2026-10-01", "2026-10-31"),
        # Its year with the month, where the search reads them apart.
        ("what happened in the first week of March 2024?", "2024-03-01", "2024-03-31"),
        ("what did I do in the last days of December 2025?", "2025-12-01", "2025-12-31"),
        # "may" the verb beside a time is no May.
        ("what may I do this year?", "2026-01-01", "2026-12-31"),
        ("May I see what I did last week?", "2026-11-23", "2026-11-29"),
    ],
)
def test_questions_become_date_ranges(question, since, until):
    found = parse_when(question, TODAY)
    assert found is not None
    assert found.as_dict()["since"] == since and found.as_dict()["until"] == until


@pytest.mark.parametrize(
    "question",
    ["hydration of 75 percent", "what may I bake", "the second fermentation", "Sourdough starter", "2000 grams of flour",
     "the last day of school", "the last 3 days of the trip", "my last 3 days in Lisbon", "the past few days before the deadline",
     "in the last 0 days", "I mar 2 loaves", "jan 2000 grams", "I ate 2 of jan's cookies", "what did I write about the last night of the trip",
     "what did we eat on our last night in Lisbon", "my last night before the move", "the week before last Easter",
     # "since" giving a reason: a clause not in the past.
     "what can I bake since I have rye flour", "since we are out of eggs, what can I bake?",
     "since I need bread what should I bake", "since I put salt in, why is it flat?"],
)
def test_questions_without_time_have_no_range(question):
    assert parse_when(question, TODAY) is None


@pytest.mark.parametrize(
    ("question", "since", "until", "expression"),
    [
        ("先週は何をした？", "2026-11-23", "2026-11-29", "先週"),
        ("昨日は何を焼いた？", "2026-12-02", "2026-12-02", "昨日"),
        ("今朝食べたもの", "2026-12-03", "2026-12-03", "今朝"),
        ("昨夜話したこと", "2026-12-02", "2026-12-03", "昨夜"),  # a night runs past midnight, as "last night"
        ("2024年3月に何を焼いた？", "2024-03-01", "2024-03-31", "2024年3月"),
        ("3月に読んだ本", "2026-03-01", "2026-03-31", "3月"),
        ("5月3日に何を直した？", "2026-05-03", "2026-05-03", "5月3日"),
        ("2024年の記録", "2024-01-01", "2024-12-31", "2024年"),
        ("一昨年のこと", "2024-01-01", "2024-12-31", "一昨年"),
        ("先々月", "2026-10-01", "2026-10-31", "先々月"),
        ("3日前に会った人", "2026-11-30", "2026-11-30", "3日前"),
        ("月曜日に何をした", "2026-11-30", "2026-11-30", "月曜日"),
        ("去年の今日は何をしていた？", "2025-12-03", "2025-12-03", "去年の今日"),
        ("1月から3月まで何が変わった", "2026-01-01", "2026-03-31", "1月から3月まで"),
        ("2024-05-01から何を作った", "2024-05-01", "2026-12-03", "2024-05-01から"),
        ("2024年以来", "2024-01-01", "2026-12-03", "2024年以来"),
        ("先月までのメモ", None, "2026-11-30", "先月まで"),
        ("2025年5月より前のメモ", None, "2025-04-30", "2025年5月より前"),
        ("last weekに何をした", "2026-11-23", "2026-11-29", "last week"),  # English time words still read
        # Dates in digits are counted, not left to dateparser (which read 12月1日 as 2012).
        ("12月1日に何をした", "2026-12-01", "2026-12-01", "12月1日"),
        ("12月31日", "2025-12-31", "2025-12-31", "12月31日"),  # the latest on or before today
        ("12月25日より前", None, "2025-12-24", "12月25日より前"),
        ("2月29日", "2024-02-29", "2024-02-29", "2月29日"),  # the last leap year's
        ("2024-05から", "2024-05-01", "2026-12-03", "2024-05から"),
        ("2024年11月5日", "2024-11-05", "2024-11-05", "2024年11月5日"),
        ("三日前に会った人", "2026-11-30", "2026-11-30", "三日前"),  # kanji numerals up to 九十九
        ("十五日前", "2026-11-18", "2026-11-18", "十五日前"),
        ("二十年前の写真", "2006-01-01", "2006-12-31", "二十年前"),
        # Chinese, the same way.
        ("上周我做了什么？", "2026-11-23", "2026-11-29", "上周"),
        ("昨天吃了什么", "2026-12-02", "2026-12-02", "昨天"),
        # Chinese writes last night 昨晚 (晚, not Japanese 晩), and tonight 今晚.
        ("我昨晚说了什么", "2026-12-02", "2026-12-03", "昨晚"),
        ("今晚吃什么", "2026-12-03", "2026-12-03", "今晚"),
        ("今夜話したこと", "2026-12-03", "2026-12-03", "今夜"),
        ("昨晚以来写了什么", "2026-12-02", "2026-12-03", "昨晚以来"),
        ("3天前见到的人", "2026-11-30", "2026-11-30", "3天前"),
        ("两周前", "2026-11-16", "2026-11-22", "两周前"),
        ("这个月的笔记", "2026-12-01", "2026-12-31", "这个月"),
        ("星期一做了什么", "2026-11-30", "2026-11-30", "星期一"),
        ("从1月到3月", "2026-01-01", "2026-03-31", "从1月到3月"),
        ("2025年5月之前", None, "2025-04-30", "2025年5月之前"),
        ("去年的今天", "2025-12-03", "2025-12-03", "去年的今天"),
        ("我上周做了什么", "2026-11-23", "2026-11-29", "上周"),
        ("2024年的笔记", "2024-01-01", "2024-12-31", "2024年"),
        ("2024年以前", None, "2023-12-31", "2024年以前"),  # before, in Chinese (in Japanese: until its end)
        # A month of a year named relative to this one: it was all of that year.
        ("去年の3月は何をした？", "2025-03-01", "2025-03-31", "去年の3月"),
        ("去年3月我做了什么", "2025-03-01", "2025-03-31", "去年3月"),
        ("去年的3月5日", "2025-03-05", "2025-03-05", "去年的3月5日"),
        ("一昨年の12月から今年の2月まで", "2024-12-01", "2026-02-28", "一昨年の12月から今年の2月まで"),
    ],
)
def test_japanese_and_chinese_questions_become_date_ranges(question, since, until, expression):
    found = parse_when(question, TODAY)
    assert found is not None, question
    assert found.as_dict() == {"since": since, "until": until, "expression": expression}


@pytest.mark.parametrize(
    "question",
    ["味噌汁の作り方", "5分で作れる料理", "2000年問題について", "三三日前", "十十日前", "13月", "2月30日", "0000年から",
     "2024年かかった", "12024年に", "令和6年3月", "2024年度",
     # Words that hold a Chinese time word in another sense, and numbers that are not N.
     "日本周辺の地図", "日本周边的地图", "每周一次的会议", "一周三次锻炼", "说明年度计划", "日本月面探査",
     "今天気がいい", "前天候型", "数十年前", "三百二十年前", "in 2000年問題"],
)  # fmt: skip
def test_japanese_questions_without_a_time_word_have_no_range(question):
    assert parse_when(question, TODAY) is None


def test_japanese_explicit_bounds():
    rng = explicit_range("先月", "先週", TODAY)
    assert (rng.since.isoformat(), rng.until.isoformat()) == ("2026-11-01", "2026-11-29")
    with pytest.raises(BadRequest):
        explicit_range("0000年", None, TODAY)


def at(hour: int, minute: int = 0) -> dt.datetime:
    """TODAY at that time of day: the clock a question is asked by."""
    return dt.datetime.combine(TODAY, dt.time(hour, minute))


@pytest.mark.parametrize(
    ("question", "now", "since", "until"),
    [
        # Hours and minutes ago are counted from now (they were from noon: '12 hours ago' at
        # 03:00 was today, not yesterday afternoon), a window a quarter of the span wide
        # either way, an hour at least, never past now.
        ("what did I say 12 hours ago", at(3), "2026-12-02", "2026-12-02"),  # 12:00-18:00
        ("what did I say 12 hours ago", at(10), "2026-12-02", "2026-12-03"),  # 19:00-01:00
        ("what did I note 3 hours ago", at(1), "2026-12-02", "2026-12-02"),  # 21:00-23:00
        ("what did I write 30 minutes ago", at(0, 10), "2026-12-02", "2026-12-03"),
        ("an hour ago", at(15), "2026-12-03", "2026-12-03"),
        ("what did I write since 12 hours ago", at(3), "2026-12-02", "2026-12-03"),
        ("what did I write in the last 3 hours", at(1), "2026-12-02", "2026-12-03"),
        ("3時間前に何を言った", at(1), "2026-12-02", "2026-12-02"),
        ("三時間前のメモ", at(1), "2026-12-02", "2026-12-02"),
        ("30分前", at(0, 10), "2026-12-02", "2026-12-03"),
        ("3小时前说了什么", at(1), "2026-12-02", "2026-12-02"),
        # Tonight (and this evening) asked in the small hours is the night that began the
        # evening before; last night, then, takes in the night before that too.
        ("what did I do tonight", at(0, 30), "2026-12-02", "2026-12-03"),
        ("what did I do tonight", at(21), "2026-12-03", "2026-12-03"),
        ("what did I say this evening", at(0, 30), "2026-12-02", "2026-12-03"),
        ("今夜話したこと", at(0, 30), "2026-12-02", "2026-12-03"),
        ("今晩のメモ", at(0, 30), "2026-12-02", "2026-12-03"),
        ("今晚吃什么", at(0, 30), "2026-12-02", "2026-12-03"),
        ("what did I say last night", at(0, 30), "2026-12-01", "2026-12-03"),
        ("昨夜話したこと", at(0, 30), "2026-12-01", "2026-12-03"),
        ("what did I say last night", at(9), "2026-12-02", "2026-12-03"),
        # After an event of a time ('last night's dinner') starts with that time, not after
        # it: what followed the dinner was still last night.
        ("what did I write after last night's dinner", at(9), "2026-12-02", "2026-12-03"),
        ("what did I write after yesterday's meeting", at(9), "2026-12-02", "2026-12-03"),
        ("what did I write after Monday's meeting", at(9), "2026-11-30", "2026-12-03"),
        ("what changed after last week’s review", at(9), "2026-11-23", "2026-12-03"),
        ("what did I write after last night", at(9), "2026-12-03", "2026-12-03"),  # the time itself: after it
        # Before a part of a day keeps the day it is part of (it was the day before).
        ("what did I write before last night", at(9), None, "2026-12-02"),
        ("昨夜より前のメモ", at(9), None, "2026-12-02"),
        ("what did I note before this morning's call", at(9), None, "2026-12-03"),
        ("what did I write before the day before yesterday", at(9), None, "2026-11-30"),  # whole days: as before
        # Hours and minutes in words.
        ("what did I say half an hour ago", at(0, 20), "2026-12-02", "2026-12-03"),
        ("what did I say a couple of hours ago", at(0, 30), "2026-12-02", "2026-12-02"),
        ("what did I write in the past hour", at(0, 20), "2026-12-02", "2026-12-03"),
        # Each end of a span is read by the clock as it is alone ('3 hours ago' at 02:00 was
        # yesterday evening), in English as in Japanese: the ends were counted from noon.
        ("what did I write between 5 hours ago and 3 hours ago", at(2), "2026-12-02", "2026-12-03"),
        ("what did I note from 10 hours ago to 8 hours ago", at(2), "2026-12-02", "2026-12-02"),
        ("5時間前から3時間前までのメモ", at(2), "2026-12-02", "2026-12-03"),
        ("what did I say between last night and this morning", at(0, 30), "2026-12-01", "2026-12-03"),
        # Hours ago as people type them: short units ('3h'), a fraction of an hour, minutes
        # without 'and', days before the hours. They were read from noon ('3h ago' at 01:00
        # was today) or in part ('1.5 hours ago' as '5 hours ago', '2 days and 3 hours ago'
        # as '3 hours ago').
        ("what did I write 3h ago", at(1), "2026-12-02", "2026-12-02"),  # 21:00-23:00
        ("what did I write 30m ago", at(0, 10), "2026-12-02", "2026-12-03"),
        ("what did I say 1.5 hours ago", at(1), "2026-12-02", "2026-12-03"),  # 22:30-00:30
        ("what did I say 3 hours 20 minutes ago", at(1), "2026-12-02", "2026-12-02"),
        ("what did I say 2 days and 3 hours ago", at(1), "2026-11-30", "2026-12-01"),
        ("what did I say a day and 3 hours ago", at(1), "2026-12-01", "2026-12-02"),  # 27 h: 15:15-04:45
        ("what did I note 3 months ago", at(1), "2026-09-01", "2026-09-30"),  # no minutes ('m')
    ],
)
def test_questions_read_by_the_clock(question, now, since, until):
    found = parse_when(question, now)
    assert found is not None, question
    assert (found.as_dict()["since"], found.as_dict()["until"]) == (since, until), found


@pytest.mark.parametrize(
    ("question", "plain"),
    [
        # A half after the number or alone, in Japanese and Chinese, and Chinese's measure
        # word 个: each reads as the same span in whole units (they read as no time).
        ("1時間半前に何を書いた", "90分前"),
        ("半時間前のメモ", "30分前"),
        ("一个半小时前我写了什么", "90分钟前"),
        ("两个半小时前", "150分钟前"),
        ("半小时前说的", "30分钟前"),
        ("半个小时前说的", "30分钟前"),
        ("3个小时前我在做什么", "3小时前"),
        ("两个钟头前", "2小时前"),
        ("半日前のメモ", "12時間前"),
        ("两个星期前我写了什么", "2週間前"),
        ("3个星期前", "3週間前"),
        ("半年前に書いたこと", "6か月前"),
        ("一年半前", "18か月前"),
        ("半个月前", "15日前"),
        ("一个半月前的笔记", "45日前"),
    ],
)
def test_halves_and_measure_words_read_as_whole_units(question, plain):
    for now in (at(1), at(15)):
        found, expected = parse_when(question, now), parse_when(plain, now)
        assert expected is not None and found is not None, question
        assert (found.since, found.until) == (expected.since, expected.until), (question, now)
    assert parse_when("1時間半前に何を書いた", at(1)).as_dict()["since"] == "2026-12-02"  # 23:30, an hour either way
    assert parse_when("1時間半前から30分前までのメモ", at(1)).since == dt.date(2026, 12, 2)  # a part of a day, as 90分前から
    assert parse_when("大半年前の話", TODAY) is None and parse_when("一半小时", TODAY) is None  # most of a year; no 前


def test_explicit_bounds_read_by_the_clock():
    assert explicit_range("3 hours ago", None, at(1)).since == dt.date(2026, 12, 2)
    assert explicit_range("tonight", None, at(0, 30)).since == dt.date(2026, 12, 2)


def test_since_an_event_is_left_to_the_notes():
    found = parse_when("what changed since the move", TODAY)
    assert found.event == "the move" and found.until == TODAY and found.since is None


@pytest.mark.parametrize(
    ("question", "expression", "event"),
    [
        ("What happened since I ordered the new chain?", "since I ordered the new chain", "ordered the new chain"),
        ("what changed since we moved", "since we moved", "moved"),
        ("since I started the new job, what did I write?", "since I started the new job", "started the new job"),
        ("what did I bake since I first met Ana?", "since I first met Ana", "met Ana"),
    ],
)
def test_since_a_clause_is_left_to_the_notes_as_a_noun_phrase_is(question, expression, event):
    # "since I ordered the new chain" was no time at all: only "since the new chain order" was.
    found = parse_when(question, TODAY)
    assert found is not None, question
    assert (found.event, found.expression, found.since, found.until) == (event, expression, None, TODAY)


@pytest.mark.parametrize(
    ("question", "words"),
    [("What did I do last week?", "What did I do"), ("先週は何をした？", ""), ("先週は何をしましたか？", ""),
     ("昨日は何があった？", ""), ("上周我做了什么？", ""), ("上周发生了什么", ""), ("last weekに何をした", ""),
     # A run holding any other word is kept whole, as it was.
     ("先週は何を焼いた？", "は何を焼いた"), ("先週のおやつ", "のおやつ"), ("上周我吃了什么", "我吃了什么")],
)  # fmt: skip
def test_a_question_in_any_language_that_is_only_its_time_has_no_subject(question, words):
    # 先週は何をした left は何をした to search for (は何, 何を): no question about all of last week.
    subject = timeline.subject(question, parse_when(question, TODAY))
    assert subject == words
    assert (retrieval.fts_query(subject) is None) == (words in ("", "What did I do"))


def test_explicit_bounds_read_what_questions_read():
    # since=last night, until=last weekend: the words a question reads were a 400 here.
    assert explicit_range("last night", None, TODAY).since == dt.date(2026, 12, 2)
    assert explicit_range("the past week", "this morning", TODAY).as_dict() == {
        "since": "2026-11-27", "until": "2026-12-03", "expression": "since the past week until this morning"}
    assert explicit_range(None, "last weekend", TODAY).until == dt.date(2026, 11, 29)
    with pytest.raises(BadRequest):  # a span inside other words is no bound
        explicit_range("what I wrote last night", None, TODAY)


def test_explicit_bounds():
    rng = explicit_range("2024-01-05", "last week", TODAY)
    assert (rng.since.isoformat(), rng.until.isoformat()) == ("2024-01-05", "2026-11-29")
    with pytest.raises(BadRequest):
        explicit_range("not a date", None, TODAY)
    with pytest.raises(BadRequest):
        explicit_range("2025-01-02", "2025-01-01", TODAY)
    with pytest.raises(BadRequest):  # no month 13 (dateparser read it as 13 January)
        explicit_range("2024-13-01", None, TODAY)


# -- the real daemon ----------------------------------------------------------------------


def write_dailies(roam_dir, today: dt.date) -> dict[str, dt.date]:
    """Sixty days of dailies; baking every few days, one fact per theme per day."""
    days = {}
    for back in range(60):
        day = today - dt.timedelta(days=back)
        lines = [f":PROPERTIES:\n:ID: 0000{back:04d}-aaaa-4000-8000-000000000000\n:END:\n#+title: {day}"]
        if back % 3 == 0:
            lines.append(f"* Baked a loaf\nBaked a rye loaf number {back} with caraway seeds.")
        lines.append(f"* Walk\nWalked the dog along the canal, day {back}.")
        (roam_dir / "daily").mkdir(exist_ok=True)
        (roam_dir / "daily" / f"{day}.org").write_text("\n".join(lines) + "\n")
        days[str(back)] = day
    (roam_dir / "moving.org").write_text(
        f"#+title: Moving\n* The move to Leipzig\n:PROPERTIES:\n:CREATED: [{today - dt.timedelta(days=10)} Mon 09:00]\n:END:\nBoxes everywhere.\n"
    )
    return days


async def get(daemon, path, **params):
    return await daemon.get_json(path, **params)


async def post(daemon, path, body):
    async with aiohttp.ClientSession(headers=daemon.headers) as session:
        async with session.post(daemon.url + path, json=body) as resp:
            return resp.status, await resp.json()


@pytest.fixture
async def journal_daemon(tmp_path, roam_dir, fake_ollama):
    write_dailies(roam_dir, dt.date.today())
    d = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, embedded=True)
    yield d
    d.stop()


async def test_search_since_until_and_ask_from_the_time_named(journal_daemon, roam_dir, fake_ollama):
    today = dt.date.today()
    week_start = today - dt.timedelta(days=today.weekday() + 7)
    week_end = week_start + dt.timedelta(days=6)
    _, body = await get(journal_daemon, "/search", q="rye loaf caraway", k="50", since=str(week_start), until=str(week_end))
    dates = [r["date"] for r in body["results"]]
    assert dates and all(str(week_start) <= d <= str(week_end) for d in dates)
    assert body["date_range"]["since"] == str(week_start)
    # Without a range the same search reaches across the two months.
    _, wide = await get(journal_daemon, "/search", q="rye loaf caraway", k="50")
    assert min(r["date"] for r in wide["results"] if r["date"]) < str(week_start)

    status, answer = await post(journal_daemon, "/ask", {"question": "What did I bake last week?"})
    assert status == 200, answer
    assert answer["date_range"] == {"since": str(week_start), "until": str(week_end), "expression": "last week"}
    assert answer["sources"] and all(str(week_start) <= s["date"] <= str(week_end) for s in answer["sources"])
    # Journal context comes in date order.
    assert [s["date"] for s in answer["sources"]] == sorted(s["date"] for s in answer["sources"])

    # The grounded models read the time too: only last week's entries reach the prompt.
    status, _ = await post(
        journal_daemon, "/api/chat",
        {"model": "llama3.2+notes", "stream": False, "messages": [{"role": "user", "content": "What did I bake last week?"}]},
    )  # fmt: skip
    assert status == 200
    notes = fake_ollama.state.chats[-1][0]["content"]
    days = set(re.findall(r"^Date: (\S+)$", notes, re.M))
    assert days and all(str(week_start) <= d <= str(week_end) for d in days), days

    # A question that is only its time lists that time.
    status, answer = await post(journal_daemon, "/ask", {"question": "what did I do yesterday?"})
    yesterday = str(today - dt.timedelta(days=1))
    assert answer["date_range"]["since"] == yesterday
    assert answer["sources"] and {s["date"] for s in answer["sources"]} == {yesterday}

    # Asked in Japanese, the same time.
    status, answer = await post(journal_daemon, "/ask", {"question": "先週は何を焼いた？"})
    assert status == 200 and answer["date_range"] == {"since": str(week_start), "until": str(week_end), "expression": "先週"}
    assert answer["sources"] and all(str(week_start) <= s["date"] <= str(week_end) for s in answer["sources"])

    # "since the move": the move's heading dates the start.
    status, answer = await post(journal_daemon, "/ask", {"question": "how often did I bake since the move?"})
    assert answer["date_range"]["since"] == str(today - dt.timedelta(days=10))

    # Explicit bounds win, and bad ones are a 400.
    status, answer = await post(journal_daemon, "/ask", {"question": "rye loaf", "since": str(today), "until": str(today)})
    assert {s["date"] for s in answer["sources"]} <= {str(today)}
    status, body = await get(journal_daemon, "/search", q="rye", since="someday maybe")
    assert status == 400 and "since" in body["error"]

    # Written while the daemon runs: the watcher indexes it with its date.
    (roam_dir / "daily" / "2020-02-02.org").write_text("#+title: old\n* Zeppelin ride\nA zeppelin over the lake.\n")

    async def dated():
        _, body = await get(journal_daemon, "/search", q="zeppelin", since="2020-02-01", until="2020-02-03")
        return [r["date"] for r in body["results"]] == ["2020-02-02"]

    await wait_until(dated, timeout=10)
    status, body = await post(journal_daemon, "/similar", {"text": "zeppelin lake", "since": "2021-01-01"})
    assert status == 200 and body["results"] == [] or all(r["date"] >= "2021-01-01" for r in body["results"])
    os.unlink(roam_dir / "daily" / "2020-02-02.org")


async def test_since_an_event_is_dated_by_the_users_notes_not_the_oracles(make_client, make_settings, fake_ollama, roam_dir):
    # The oracle's answer speaks of the move more than the user's note does, and later: its
    # date is when it answered, not when the move was.
    today = dt.date.today()
    moved, answered = today - dt.timedelta(days=10), today - dt.timedelta(days=2)
    (roam_dir / "moving.org").write_text(
        f"#+title: Moving\n* The move to Leipzig\n:PROPERTIES:\n:CREATED: [{moved} Mon 09:00]\n:END:\nBoxes everywhere.\n"
    )
    (roam_dir / "talk.org").write_text(
        f"#+title: Talk\n* Settling in\n** How do I settle in?\n:PROPERTIES:\n:ROLE: user\n:END:\nAny tips?\n"
        f"** The move\n:PROPERTIES:\n:ROLE:     oracle\n:CREATED:  [{answered} Fri 10:00]\n:END:\n"
        "After the move, unpack the kitchen first: the move is over when the move's boxes are gone.\n"
    )
    client = await make_client(make_settings(ollama_host=fake_ollama.url))
    resp = await client.post("/recall", json={"question": "what did I bake since the move?"})
    assert (await resp.json())["date_range"]["since"] == str(moved)


async def test_what_i_noted_today_comes_before_notes_only_edited_today(make_client, make_settings, fake_ollama, roam_dir):
    # Every note of the copied vault was written to disk today, and most are dated by that
    # (their file's modification time): a question that is only its time must still find
    # the capture the user made today, not only the first notes by path.
    (roam_dir / "areas").mkdir()
    for n in range(12):  # notes edited today, their paths before daily/
        (roam_dir / "areas" / f"area-{n}.org").write_text(f"#+title: Area {n}\n" + "".join(f"* Item {i}\nText {i}.\n" for i in range(5)))
    client = await make_client(make_settings(ollama_host=fake_ollama.url))
    resp = await client.post("/memorize", json={"text": "Ordered a zorbleflux vent for the kiln"})
    assert resp.status == 200
    for question in ("what did I note today?", "what did I do today?"):
        resp = await client.post("/recall", json={"question": question, "k": 5})
        notes = (await resp.json())["notes"]
        assert any("zorbleflux" in n["text"] for n in notes), (question, [n["heading"] for n in notes])


THINGS = ["Kiln", "Bicycle", "Taxes", "Garden", "Piano", "Roof", "Library", "Dentist", "Passport", "Sourdough", "Gutter", "Chess"]


async def test_a_question_that_is_only_its_time_reads_every_day_of_it(make_client, make_settings, fake_ollama, roam_dir):
    # A busy Monday (a dozen headings) and a few notes on each other day of the week: the
    # notes for "what did I do that week" were the Monday's alone, the first k by date.
    week = [dt.date(2019, 6, 3) + dt.timedelta(days=n) for n in range(7)]
    (roam_dir / "daily").mkdir(exist_ok=True)
    for day in week:
        count = 12 if day == week[0] else 2
        body = "".join(f"* {THINGS[i]} on {day:%A}\nSaw to the {THINGS[i].lower()} today.\n" for i in range(count))
        (roam_dir / "daily" / f"{day}.org").write_text(f"#+title: {day}\n{body}")
    client = await make_client(make_settings(ollama_host=fake_ollama.url))
    resp = await client.post("/recall", json={"question": "what did I do between 2019-06-03 and 2019-06-09?", "k": 5})
    dates = [n["date"] for n in (await resp.json())["notes"]]
    assert len(set(dates)) >= 4 and max(dates) >= "2019-06-07", dates
    resp = await client.get("/search", params={"q": "what did I do", "since": "2019-06-03", "until": "2019-06-09", "k": "5"})
    body = await resp.json()
    dates = [r["date"] for r in body["results"]]
    assert body["mode"] == "dated" and dates == sorted(dates), body
    assert len(set(dates)) >= 4 and max(dates) >= "2019-06-07", dates


def test_a_long_run_of_japanese_filler_is_read_at_once():
    # でした is で + した too: a run of sixty of them before a word that is no filler was
    # tried every way it can be cut (2^60) before the run was kept, on the event loop (/search).
    run = "でした" * 60 + "猫"
    assert timeline.subject("先週" + run, parse_when("先週", TODAY)) == run
