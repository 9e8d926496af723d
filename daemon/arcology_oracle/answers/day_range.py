"""A range of days, and the pieces every reading of a time in a question shares: the
first and last day of a period, dateparser set to read relative to a day, a day moved
within the calendar, and the two forms that need no preposition ("this day last year",
"between X and Y") whatever the language.

A date alone stands for that day at noon: dateparser counts relative words ("2 days ago")
from it, so a cached parser serves every question of the day.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

_YEAR_RE = re.compile(r"\b\d{4}\b")
WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
# After a time, the mark of an event in it: "last night's dinner", "Monday’s meeting".
POSSESSIVE = ("'s", "\u2019s")


@dataclass(frozen=True)
class DateRange:
    """Days ``since``..``until`` (inclusive; either may be open), the words they came
    from, and for an undated ``since the move`` the ``event`` to date from the notes."""

    since: dt.date | None
    until: dt.date | None
    expression: str
    event: str | None = None

    def as_dict(self) -> dict:
        return {
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            "expression": self.expression,
        }

    def bounds(self) -> tuple[str, str]:
        """ISO strings for SQL, open ends made wide."""
        return (self.since or dt.date.min).isoformat(), (self.until or dt.date.max).isoformat()

    def contains(self, day: str | None) -> bool:
        since, until = self.bounds()
        return day is not None and since <= day[:10] <= until


@lru_cache(maxsize=4)
def date_parser(today: dt.date, language: str = "en"):
    """dateparser's reader for ``language``, counting from ``today`` at noon."""
    # Imported on first use: dateparser takes about a second to load its language data.
    from dateparser.date import DateDataParser

    return DateDataParser(languages=[language], settings=parser_settings(today))


def parser_settings(today: dt.date) -> dict:
    """dateparser's settings: relative words from ``today`` at noon, into the past."""
    return {"RELATIVE_BASE": dt.datetime.combine(today, dt.time(12)), "PREFER_DATES_FROM": "past"}


def period_bounds(day: dt.date, period: str) -> tuple[dt.date, dt.date]:
    """The first and last day of the ``period`` (day/week/month/year) holding ``day``."""
    if period == "week":
        start = day - dt.timedelta(days=day.weekday())
        return start, start + dt.timedelta(days=6)
    if period == "month":
        start = day.replace(day=1)
        following = (start + dt.timedelta(days=32)).replace(day=1)
        return start, following - dt.timedelta(days=1)
    if period == "year":
        return day.replace(month=1, day=1), day.replace(month=12, day=31)
    return day, day


def weekend(today: dt.date, which: str = "") -> tuple[dt.date, dt.date]:
    """The Saturday and Sunday of the weekend ``which`` names, asked on ``today`` (weeks
    start on Monday): ``this`` this week's, ``last`` the week before's, ``next`` the week
    after's; a weekend named alone ("over the weekend", 週末, 周末: ``""``) the latest one
    begun by ``today``, this week's from its Saturday on, else last week's."""
    weeks = {"this": 0, "last": -1, "next": 1}.get(which, 0 if today.weekday() >= 5 else -1)
    saturday = today - dt.timedelta(days=today.weekday() - 5 - 7 * weeks)
    return saturday, saturday + dt.timedelta(days=1)


def latest_weekday(days: tuple[dt.date, dt.date], today: dt.date) -> tuple[dt.date, dt.date]:
    """The ``days`` dateparser read for a weekday named alone ("on Sunday", "Sunday
    evening", 日曜日, 星期天), made the latest such day up to ``today``: asked on a Sunday,
    "what did I write on Sunday" is today. A person asking on a Sunday evening about
    "Sunday" means the day they are in (they would say "last Sunday" for the one before);
    dateparser reads it so by default (``PREFER_DATES_FROM`` ``current_period``), but
    :func:`parser_settings`' ``past`` makes it strictly past, a week back. "last Sunday"
    stays a week back, and after since/before/until the weekday is read as dateparser does
    ("since Sunday" asked on one is the week)."""
    if days[0] == days[1] == today - dt.timedelta(days=7):
        return today, today
    return days


def year_ago(today: dt.date) -> dt.date:
    try:
        return today.replace(year=today.year - 1)
    except ValueError:  # 29 February
        return today.replace(year=today.year - 1, day=28)


def day_or_span(
    text: str, today: dt.date, this_day: re.Pattern, between: re.Pattern,
    read: Callable[[str], tuple[dt.date, dt.date] | None],
) -> DateRange | None:
    """A day a year ago (``this_day``: "this day last year") or the span from the first
    day of one expression to the last of another (``between``, its two groups read by
    ``read``), or None."""
    if m := this_day.search(text):
        day = year_ago(today)
        return DateRange(day, day, m[0])
    if m := between.search(text):
        one, other = m[1] or m[2], m[m.lastindex]
        first, second = read(one), read(other)
        if first and second and first[0] > second[1] and not _YEAR_RE.search(one) and (year := _YEAR_RE.search(other)):
            first = read(f"{one} {year[0]}") or first  # "between March and May 2024": May's year
        if first and second:
            return DateRange(min(first[0], second[0]), max(first[1], second[1]), m[0].rstrip("?.!,; "))
    return None


def shift(day: dt.date, days: int) -> dt.date:
    """``day`` moved by ``days``, kept within the calendar (the day before 0001-01-01 is it)."""
    try:
        return day + dt.timedelta(days=days)
    except OverflowError:
        return dt.date.min if days < 0 else dt.date.max


def bound_range(
    word: str, first: dt.date, last: dt.date, today: dt.date, *, event: bool = False, part: bool = False
) -> tuple[dt.date | None, dt.date | None]:
    """The range ``word`` (since, from, after, before, until or till) makes of a time of
    the days ``first``..``last``: since it, to today; until its end. After and before
    leave its days out when it is whole days ("after last week": from the Monday after
    it), keep the day it ends (after) or begins (before) when it is part of a day
    (``part``: what came after this morning or before last night is partly on its day),
    and keep all its days when the bound is an event in it (``event``: "after last
    night's dinner" begins with last night, "before Monday's meeting" ends with Monday:
    when in that time the event was is unknown)."""
    if word in ("since", "from"):
        return first, today
    if word in ("until", "till"):
        return None, last
    if word == "after":
        return (first if event else last if part else shift(last, 1)), today
    return None, (last if event else first if part else shift(first, -1))
