"""Times a question counts by the clock, not the calendar: "3 hours ago", "30分前", "in
the last 2 hours", and the evening or night still running ("tonight" asked at 00:30).

Headings are dated by day, so each comes out as the days it touches. A question is read
at ``now``, the moment it is asked; a date alone stands for that day at noon, the moment
dateparser counts from (:mod:`.day_range`), as before the time of day was known.

- *N hours (minutes) ago* is the moment that long before now, widened by a quarter of
  the span either way and by an hour at least (people round: "three hours ago" is two to
  four hours ago, "12 hours ago" nine to fifteen), never past now.
- *The night*: until :data:`NIGHT_ENDS` (05:00) the evening and night still running
  began the day before, so "tonight" and "this evening" (今夜, 今晩, 今晚) asked then are
  yesterday and today (what was said past midnight is dated today); "last night" asked
  then may be that night or the one before it, and takes in both. From 05:00 on, the
  night is today's and last night began yesterday evening, as by the calendar.
- *This morning*, *this afternoon* asked before 05:00 are yesterday's: the day still
  running is the one begun before the person last slept ("what did I write this
  morning?" at 00:10 means some fifteen hours ago, not a morning that has not come).
"""

from __future__ import annotations

import datetime as dt

from .day_range import date_parser

NIGHT_ENDS = dt.time(5)
_NOON = dt.time(12)


def moment(now: dt.date | dt.datetime | None) -> dt.datetime:
    """The moment a question is asked: ``now``, the clock's when None, a date's noon."""
    if now is None:
        return dt.datetime.now()
    return now if isinstance(now, dt.datetime) else dt.datetime.combine(now, _NOON)


def evening_day(now: dt.datetime) -> dt.date:
    """The day whose evening the evening or night running at ``now`` began on, and whose
    morning is "this morning": today, or yesterday before :data:`NIGHT_ENDS`."""
    return now.date() - dt.timedelta(days=1 if now.time() < NIGHT_ENDS else 0)


def night(now: dt.datetime, *, last: bool = False) -> tuple[dt.date, dt.date]:
    """The days of tonight (the evening and night running at ``now`` or to come) or, with
    ``last``, of last night (the one before it), each through today: a night runs past
    midnight, and what was said in its small hours is dated today."""
    return evening_day(now) - dt.timedelta(days=1 if last else 0), now.date()


def since_hours(span: dt.timedelta, now: dt.datetime) -> dt.date:
    """The day of the moment ``span`` before ``now`` ("the last 3 hours" begins on it)."""
    try:
        return (now - span).date()
    except OverflowError:
        return dt.date.min


def ago(expression: str, now: dt.datetime, language: str = "en") -> tuple[dt.date, dt.date] | None:
    """The days of the window around the moment ``expression`` ("3 hours ago", "2 hours
    and 30 minutes ago", "3時間前", "30分钟前": numbers in digits) names, dateparser
    reading how long ago it is; None when it reads none."""
    noon = dt.datetime.combine(now.date(), _NOON)
    found = date_parser(now.date(), language).get_date_data(expression).date_obj
    if found is None:
        return None
    span = noon - found
    width = max(span / 4, dt.timedelta(hours=1))
    return since_hours(span + width, now), since_hours(max(span - width, dt.timedelta(0)), now)
