"""Spans a question counts back from today, which dateparser does not read: "in the past
week", "over the last 3 days", "in the last couple of months", and "last weekend" /
"this weekend"; and the parts of a day dateparser reads wrongly or not at all: "the day
before yesterday" (read as "before yesterday", every day up to it), "last night" (and
the small hours of today: a night runs past midnight), "yesterday evening", "this
morning". After "since", "before"... each bounds a range as a date does.

A rolling span ends today and goes back the number of days, weeks, months or years it
names (one without a number): "the past week" is today and the six days before, not
last calendar week (which "last week" is, read by :mod:`.when`). A weekend is its
Saturday and Sunday; "last weekend" the one before this week (weeks start on Monday).
"""

from __future__ import annotations

import datetime as dt
import re

_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10, "few": 3, "couple of": 2, "couple": 2}  # fmt: skip
# "the last two weeks of December", "the last weekend in May", "the past few days before
# the deadline": a span of something else, not one counted back from today.
_NOT_OF = r"(?!\s+(?:of|in|before|after|from|until|to)\b)"
_ROLLING_RE = re.compile(
    r"\b(?:(in|over|during|within|for)\s+)?the\s+(past|last|previous)\s+(?:(\d{1,4}|"
    + "|".join(sorted(map(re.escape, _NUMBERS), key=len, reverse=True))
    + r")\s+)?(day|week|month|year)s?\b" + _NOT_OF,
    re.I,
)
_WEEKEND_RE = re.compile(r"\b(last|this|past|previous)\s+weekend\b" + _NOT_OF, re.I)
# The words before a span that make it a range's bound, right before it.
_BOUND_RE = re.compile(r"\b(since|after|from|before|until|till)\s+$", re.I)
# A day by its part, and how many days back it is. When in it or where may follow ("last
# night after dinner", "this morning in the meeting"); "the last night of the trip", "our
# last night in Lisbon" are no time counted back from today.
_PART_OF_DAY_RE = re.compile(
    r"\b(?:(?:the\s+)?(day\s+before\s+yesterday)"
    r"|((?<!\bthe\s)(?<!\bmy\s)(?<!\bour\s)(?<!\bhis\s)(?<!\bher\s)(?<!\byour\s)(?<!\btheir\s)(?<!\bits\s)(?<!\ba\s)"
    r"last\s+night|yesterday\s+(?:morning|afternoon|evening|night))"
    r"|(this\s+(?:morning|afternoon|evening)))\b(?!\s+of\b)",
    re.I,
)


def rolling_span(text: str, today: dt.date) -> tuple[dt.date | None, dt.date | None, str] | None:
    """``(first day, last day, the words that say it)`` of a rolling span, a part of a
    day or a weekend in ``text``, else None; after "since", "before"... (:data:`_BOUND_RE`)
    the range it bounds (either end open), as :mod:`.when` reads a date after those words."""
    found = _span(text, today)
    if found is None:
        return None
    first, last, m = found
    bound = _BOUND_RE.search(text, 0, m.start())
    word = bound[1].lower() if bound else ""
    if word in ("since", "from"):
        return first, today, bound[0] + m[0]
    if word == "after":  # the day after it; after what ends today (this morning, last night), today
        return min(last + dt.timedelta(days=1), today), today, bound[0] + m[0]
    if word == "before":
        return None, first - dt.timedelta(days=1), bound[0] + m[0]
    if word in ("until", "till"):
        return None, last, bound[0] + m[0]
    return first, last, m[0].strip()


def whole_span(text: str, today: dt.date) -> tuple[dt.date, dt.date] | None:
    """The days of ``text`` when it is a rolling span, a part of a day or a weekend and
    nothing else ("last night", "the past week": a ``since``/``until`` parameter)."""
    found = _span(text, today)
    return found[:2] if found and found[2][0].lower().split() == text.lower().split() else None


def _span(text: str, today: dt.date) -> tuple[dt.date, dt.date, re.Match] | None:
    """:func:`rolling_span` without the words bounding it, with the match that says it."""
    # "the last day of school" is no span: without a number, "last" needs "in", "over"...
    m = next((m for m in _ROLLING_RE.finditer(text) if m[1] or m[3] or m[2].lower() == "past"), None)
    if m:
        count = m[3].lower() if m[3] else "one"
        n = int(count) if count.isdigit() else _NUMBERS[count]
        if n == 0:
            return None
        unit = m[4].lower()
        if unit in ("day", "week"):
            first = today - dt.timedelta(days=n * (7 if unit == "week" else 1) - 1)
        else:
            first = _months_back(today, n * (12 if unit == "year" else 1)) + dt.timedelta(days=1)
        return max(first, dt.date.min), today, m
    if m := _PART_OF_DAY_RE.search(text):
        day = today - dt.timedelta(days=2 if m[1] else 1 if m[2] else 0)
        # A night runs past midnight: what was said in its small hours is dated today.
        night = bool(m[2]) and m[2].lower().split()[-1] == "night"
        return day, today if night else day, m
    if m := _WEEKEND_RE.search(text):
        monday = today - dt.timedelta(days=today.weekday())
        saturday = monday + dt.timedelta(days=5 if m[1].lower() == "this" else -2)
        return saturday, saturday + dt.timedelta(days=1), m
    return None


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
