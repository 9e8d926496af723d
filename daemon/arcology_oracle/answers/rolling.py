"""Spans a question counts back from now, which dateparser does not read: "in the past
week", "over the last 3 days", "in the last couple of months", "in the last 2 hours", and
"last weekend" / "this weekend"; and the parts of a day dateparser reads wrongly or not
at all: "the day before yesterday" (read as "before yesterday", every day up to it),
"last night" and "tonight" (and the small hours after them: a night runs past midnight),
"yesterday evening", "this morning", "3 hours ago" (read from noon, not from now). After
"since", "before"... each bounds a range as a date does (:func:`.day_range.bound_range`;
a part of a day keeps the day it is part of, "last night's dinner" all its days).

A rolling span ends today and goes back the number of hours, days, weeks, months or years
it names (one without a number): "the past week" is today and the six days before, not
last calendar week (which "last week" is, read by :mod:`.when`); "last fortnight" is the
past 14 days (a fortnight has no calendar). A weekend is its Saturday and Sunday: "last
weekend" the one before this week (weeks start on Monday), "over the weekend" the latest
(:func:`.day_range.weekend`).
What the clock decides (the night running in the small hours, hours ago) is
:mod:`.clock`'s.
"""

from __future__ import annotations

import datetime as dt
import re

from . import clock
from .day_range import POSSESSIVE, bound_range, weekend

_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10, "an": 1, "few": 3, "couple of": 2, "couple": 2}  # fmt: skip
# The longest first: "couple of" before "couple".
_NUMBER_WORDS = "|".join(sorted(map(re.escape, _NUMBERS), key=len, reverse=True))
# "the last two weeks of December", "the last weekend in May", "the past few days before
# the deadline": a span of something else, not one counted back from today.
_NOT_OF = r"(?!\s+(?:of|in|before|after|from|until|to)\b)"
# "the" may go unsaid before a count ("what did I write last two weeks"), never before a
# unit alone: "last week" and "last year" are calendar periods (read by :mod:`.when`);
# "this past week" is the past week.
_ROLLING_RE = re.compile(
    rf"\b(?:(in|over|during|within|for)\s+)?(the\s+|this\s+)?(past|last|previous)\s+(?:(\d{{1,4}}|{_NUMBER_WORDS})\s+)?"
    r"(minute|hour|day|week|fortnight|month|year)s?\b" + _NOT_OF,
    re.I,
)
# A fortnight is no calendar period: "last fortnight" is the past 14 days (dateparser
# reads it as one week, two weeks back).
_FORTNIGHT_RE = re.compile(r"\b(?:last|past|previous|this)\s+fortnight\b" + _NOT_OF, re.I)
_WEEKEND_RE = re.compile(r"\b(?:(last|this|past|previous|next)\s+|(?:on|over|at|during)\s+the\s+)weekend\b" + _NOT_OF, re.I)
# The words before a span that make it a range's bound, right before it.
_BOUND_RE = re.compile(r"\b(since|after|from|before|until|till)\s+$", re.I)
# A day by its part, and how many days back it is. When in it or where may follow ("last
# night after dinner", "this morning in the meeting"); "the last night of the trip", "our
# last night in Lisbon" are no time counted back from today.
_PART_OF_DAY_RE = re.compile(
    r"\b(?:(?:the\s+)?(day\s+before\s+yesterday)"
    r"|((?<!\bthe\s)(?<!\bmy\s)(?<!\bour\s)(?<!\bhis\s)(?<!\bher\s)(?<!\byour\s)(?<!\btheir\s)(?<!\bits\s)(?<!\ba\s)"
    r"last\s+night|yesterday\s+(?:morning|afternoon|evening|night))"
    r"|(this\s+(?:morning|afternoon|evening)|tonight))\b(?!\s+of\b)",
    re.I,
)
# A count and the space after it: digits (a fraction too, "1.5"), which a short unit may
# follow at once ("3h"), or words.
_COUNT = rf"(?:(?<![\d.])\d{{1,4}}(?:\.\d{{1,2}})?\s*|(?:a\s+)?(?:{_NUMBER_WORDS})\s+)"
_HOURS = r"(?:hours?|hrs?|h)\b"
_MINUTES = r"(?:minutes?|mins?|m)\b"  # "m" alone, not "months"
# Hours and minutes ago, counted from now ("2 hours and 30 minutes ago", "half an hour
# ago", "3h ago", "3 hours 20 minutes ago"), the days before them too ("2 days and 3 hours ago").
_AGO_RE = re.compile(
    rf"\b(?:{_COUNT}days?\s+(?:and\s+)?)?(?:half\s+an\s+hour|{_COUNT}{_HOURS}(?:\s+(?:and\s+)?{_COUNT}{_MINUTES})?"
    rf"|{_COUNT}{_MINUTES})\s+ago\b",
    re.I,
)
_NUMBER_WORD_RE = re.compile(rf"\bhalf\s+an\s+hour\b|\b(?:a\s+)?({_NUMBER_WORDS})\b", re.I)


def rolling_span(text: str, now: dt.datetime) -> tuple[dt.date | None, dt.date | None, str] | None:
    """``(first day, last day, the words that say it)`` of a rolling span, a part of a
    day, hours ago or a weekend in ``text`` asked at ``now``, else None; after "since",
    "before"... (:data:`_BOUND_RE`) the range it bounds (either end open), as :mod:`.when`
    reads a date after those words."""
    found = _span(text, now)
    if found is None:
        return None
    first, last, m, part = found
    bound = _BOUND_RE.search(text, 0, m.start())
    if bound is None:
        return first, last, m[0].strip()
    event = text[m.end() :].startswith(POSSESSIVE)
    return *bound_range(bound[1].lower(), first, last, now.date(), event=event, part=part), bound[0] + m[0]


def whole_span(text: str, now: dt.datetime) -> tuple[dt.date, dt.date] | None:
    """The days of ``text`` when it is a rolling span, a part of a day, hours ago or a
    weekend and nothing else ("last night", "the past week": a ``since``/``until``
    parameter)."""
    found = _span(text, now)
    return found[:2] if found and found[2][0].lower().split() == text.lower().split() else None


def _span(text: str, now: dt.datetime) -> tuple[dt.date, dt.date, re.Match, bool] | None:
    """:func:`rolling_span` without the words bounding it, with the match that says it
    and whether the span is part of a day (hours, a night) rather than whole days."""
    today = now.date()
    # "the last day of school" is no span: without a number, "last" needs "in", "over"...
    m = next((m for m in _ROLLING_RE.finditer(text) if m[4] or m[2] and (m[1] or m[3].lower() == "past")), None)
    if m:
        count = m[4].lower() if m[4] else "one"
        n = int(count) if count.isdigit() else _NUMBERS[count]
        if n == 0:
            return None
        unit = m[5].lower()
        if unit in ("minute", "hour"):
            return clock.since_hours(dt.timedelta(**{unit + "s": n}), now), today, m, True
        if unit in ("day", "week", "fortnight"):
            first = today - dt.timedelta(days=n * {"day": 1, "week": 7, "fortnight": 14}[unit] - 1)
        else:
            first = _months_back(today, n * (12 if unit == "year" else 1)) + dt.timedelta(days=1)
        return max(first, dt.date.min), today, m, False
    if m := _FORTNIGHT_RE.search(text):
        return today - dt.timedelta(days=13), today, m, False
    if m := _PART_OF_DAY_RE.search(text):
        words = m[0].lower().split()
        if words[-1] == "night" or words[-1] == "tonight" or words == ["this", "evening"]:
            return *clock.night(now, last=words[-1] == "night"), m, True
        # Before 05:00 this morning is the day still running's, yesterday's: today's has not come.
        day = clock.evening_day(now) if m[3] else today - dt.timedelta(days=2 if m[1] else 1)
        return day, day, m, not m[1]
    if m := _AGO_RE.search(text):
        days = clock.ago(_NUMBER_WORD_RE.sub(_digits, m[0]), now)
        return (*days, m, True) if days else None
    if m := _WEEKEND_RE.search(text):
        which = (m[1] or "").lower()
        return *weekend(today, "last" if which in ("past", "previous") else which), m, False
    return None


def _digits(m: re.Match) -> str:
    """A number in words as dateparser reads it: "a couple of" 2, "half an hour" 30 minutes."""
    return str(_NUMBERS[m[1].lower()]) if m[1] else "30 minutes"


def _months_back(day: dt.date, months: int) -> dt.date:
    """``day`` ``months`` months earlier (the month's last day when it has fewer days)."""
    index = day.year * 12 + day.month - 1 - months
    if index < 12:  # before year 1
        return dt.date.min
    year, month = divmod(index, 12)
    for last in (day.day, 30, 29, 28):
        try:
            return dt.date(year, month + 1, min(day.day, last))
        except ValueError:
            continue
    return dt.date(year, month + 1, 28)
