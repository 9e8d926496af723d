"""Days a question names by the calendar that dateparser does not read, or reads as
one day where a person means two: the fixed holidays, a day of the month alone, two
weekdays together, and a weekday's night.

- *Holidays* with a fixed date: Christmas (Day), Christmas Eve, New Year's Eve, New
  Year's Day; Christmas alone as a time is said ("at", "on", "over", "during", "last",
  "this" Christmas, or with a year), not "the Christmas tree" nor "a gift for
  Christmas". Named alone ("at Christmas", "last Christmas") the latest on or before
  today ("last" before today); with a year ("Christmas 2024") that year's; "this
  Christmas" this year's. Holidays that move (Easter, Thanksgiving) are not read: no
  holiday library is a dependency.
- *A day of the month alone* ("on the 5th", "what did I write the 21st?"): this month's
  when it has come, else the latest month's that has that day ("the 31st" on 10 December
  is 31 October). Only with its ordinal suffix and where nothing it counts follows ("the
  5th time", "the 3rd chapter" and "the 5th of March" are no such day).
- *Two weekdays* ("on Monday or Tuesday", "from last Tuesday and Wednesday"): the first as
  :mod:`.when` reads it alone, the second the first such day after it, as they are said;
  both a week back when the second has not come yet. The range runs from the one to the
  other, the days between included ("Monday and Thursday": a range has no gaps).
- *A weekday's night* ("last Friday night", "Friday night"): that day and the next, as
  "last night" is, for a night runs past midnight and what was written in its small hours
  is dated the day after (never past today).
"""

from __future__ import annotations

import datetime as dt
import re

from .day_range import WEEKDAYS as _DAYS
from .day_range import DateRange, latest_weekday, shift

_HOLIDAY_RE = re.compile(
    r"\b(?:(at|on|over|during)\s+)?(?:(last|this)\s+)?((?:christmas|x-?mas)(?:\s+(?:eve|day))?|new\s+year(?:'s|\u2019s|s)?\s+(?:eve|day))"
    r"(?:\s+((?:19|20)\d{2}))?\b",
    re.I,
)
_NTH_RE = re.compile(
    r"\b(?:on\s+)?the\s+([1-9]|[12]\d|3[01])(?:st|nd|rd|th)\b"
    r"(?=\s*(?:[?.!,;]|$)|\s+(?:and|or|at|when|while|before|after|in\s+the\s+(?:morning|afternoon|evening))\b)",
    re.I,
)
_TWO_DAYS_RE = re.compile(
    rf"\b(?:(?:on|from)\s+)?((?:(?:last|this|past|previous)\s+)?({'|'.join(_DAYS)}))\s+(?:and|or|&)\s+(?:on\s+)?"
    rf"({'|'.join(_DAYS)})\b",
    re.I,
)


def holiday(text: str, today: dt.date, *, whole: bool = False) -> DateRange | None:
    """The day of the fixed holiday ``text`` names (the whole of it with ``whole``), or None."""
    # In a sentence, Christmas alone is a day only as a time is said: "at Christmas", "last
    # Christmas", "Christmas 2024"; "the Christmas tree", "a gift for Christmas" are none.
    matches = [_HOLIDAY_RE.fullmatch(text.strip())] if whole else _HOLIDAY_RE.finditer(text)
    m = next((m for m in matches if m and (whole or m[1] or m[2] or m[4] or m[3].lower().endswith(("eve", "day")))), None)
    if m is None:
        return None
    name = m[3].lower()
    month, day = {(True, True): (12, 31), (True, False): (1, 1), (False, True): (12, 24), (False, False): (12, 25)}[
        (name.startswith("new"), name.endswith("eve"))
    ]
    if m[4]:
        found = dt.date(int(m[4]), month, day)
    elif (m[2] or "").lower() == "this":
        found = dt.date(today.year, month, day)
    else:
        latest = today if (m[2] or "").lower() != "last" else shift(today, -1)
        found = dt.date(latest.year, month, day)
        if found > latest:
            found = found.replace(year=found.year - 1)
    return DateRange(found, found, m[0].strip())


def day_of_month(text: str, today: dt.date, *, whole: bool = False) -> DateRange | None:
    """The latest day of the month ``text`` names by its ordinal alone ("on the 5th"), or None."""
    m = (_NTH_RE.fullmatch if whole else _NTH_RE.search)(text.strip())
    if m is None:
        return None
    n, month = int(m[1]), today.replace(day=1)
    for _ in range(3):  # no month lacks a day two months running
        if n <= _month_length(month) and (found := month.replace(day=n)) <= today:
            return DateRange(found, found, m[0].strip())
        month = shift(month, -1).replace(day=1)
    return None


def two_weekdays(text: str, read, today: dt.date) -> DateRange | None:
    """The days from one weekday to the other of two named together ("Monday or Tuesday"),
    the first read by ``read`` (a phrase to its days), or None."""
    m = _TWO_DAYS_RE.search(text)
    if m is None or (days := read(m[1])) is None:
        return None
    if m[1].lower() == m[2].lower():  # named alone: the latest, today included
        days = latest_weekday(days, today)
    first = days[0]
    second = first + dt.timedelta(days=(_DAYS.index(m[3].lower()) - first.weekday()) % 7)
    if second > today:
        first, second = first - dt.timedelta(days=7), second - dt.timedelta(days=7)
    return DateRange(first, second, m[0].strip())


def through_the_night(found: DateRange, today: dt.date) -> DateRange:
    """``found``, a day named with its night ("Friday night"), with the small hours of the
    day after it (never past ``today``); any other range as it is."""
    if found.since is None or found.since != found.until or not found.expression.lower().endswith("night"):
        return found
    until = shift(found.since, 1) if found.since < today else found.since
    return DateRange(found.since, until, found.expression, found.event)


def _month_length(first: dt.date) -> int:
    return (shift(first.replace(day=28), 4).replace(day=1) - dt.timedelta(days=1)).day
