"""Time in questions: "last week", "in March 2024", "yesterday", "this day last year",
"since the move" turned into a date range, deterministically.

``dateparser`` finds and reads the expression (never the chat model); this module turns
its point in time and period (day, week, month, year) into a closed range of days and
handles the words around it: ``since``/``after``/``from`` X (X to today), ``before``/
``until`` X, ``between`` X ``and`` Y. A ``since`` followed by words that are no date
("since the move") is returned as an *event* for the caller to date from the notes, and
so is a ``since`` followed by a clause in the past ("since I ordered the new chain",
"since we moved": the clause's words, its subject left out). Only in the past: "since I
have rye flour" and "since we're out of eggs" give a reason, not a time.

Only expressions holding a time word (a month or weekday name, yesterday/today, a
relative unit with last/this/next/ago, an ISO date, or a year after "in", "since"...)
count: dateparser reads numbers and words such as "may" or "second" as dates, which a
question about 75% hydration or 2000 grams of flour must not become.

Questions in Japanese and Chinese are read the same way by :mod:`.when_cjk`; the range
itself, and what both share, is :mod:`.day_range`'s. Days dateparser does not read (the
fixed holidays, "on the 5th", "Monday or Tuesday", "Friday night" through its small
hours) are :mod:`.when_days`'.
"""

from __future__ import annotations

import datetime as dt
import re

from ..errors import BadRequest
from ..notes import cjk
from . import clock
from .day_range import (
    POSSESSIVE, WEEKDAYS, DateRange, bound_range, date_parser, day_or_span, latest_weekday, parser_settings, period_bounds,
    year_ago,
)  # fmt: skip
from .rolling import rolling_span, whole_span
from .when_cjk import parse_cjk, read_cjk
from .when_days import day_of_month, holiday, through_the_night, two_weekdays

_MONTHS = "january february march april may june july august september october november december".split()
_DAYS = WEEKDAYS
_SHORT = r"(?:jan|feb|(?-i:Mar)|apr|jun|jul|aug|sept?|oct|nov|dec)"
_TIME_WORD_RE = re.compile(
    r"\b(?:yesterday|today|tonight|ago|fortnight|"
    r"(?:last|this|next|past|previous)\s+(?:day|week|month|year|weekend|" + "|".join(_DAYS + _MONTHS) + r")|"
    + "|".join(m for m in _MONTHS if m != "may") + "|" + "|".join(_DAYS) + r"|"
    r"may\s+\d+|\d\S*\s+may\b|(?:in|of|last|this|since|until|before|after)\s+may\b|"
    # A month's short name beside a day, or a year after a preposition: "Dec 5", "5 Sept",
    # "in Oct 2025" (not "jan 2000 grams"; "mar" only as "Mar": it is a verb too).
    rf"{_SHORT}\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\d{{1,2}}(?:st|nd|rd|th)?\s+{_SHORT}\b|\d{{1,2}}(?:st|nd|rd|th)\s+of\s+{_SHORT}\b|(?:in|of|since|from|until|before|after|by)\s+{_SHORT}\s+(?:19|20)\d{{2}}|"
    # A bare year only after a preposition: "2000 grams of flour" names no time.
    r"\d{4}-\d{2}(?:-\d{2})?|(?:in|of|during|since|from|until|before|after|by)\s+(?:19|20)\d{2})\b",
    re.IGNORECASE,
)
# A weekday named alone, perhaps a part of it: the latest such day (:func:`.day_range.latest_weekday`).
_WEEKDAY_RE = re.compile(rf"(?:on\s+)?(?:{'|'.join(_DAYS)})(?:\s+(?:morning|afternoon|evening|night))?", re.I)
_THIS_DAY_RE = re.compile(r"\b(?:on\s+)?(?:this|that|the same)\s+day\s+(?:last|a)\s+year\b|\ba\s+year\s+ago\s+today\b", re.I)
# A month of a year named relative to this one ("in March last year", "December of this
# year"): dateparser reads the month and the year apart, and the month alone is its latest.
# Without "in", "may" and "march" only capitalised ("what may this year bring").
_BARE_MONTHS = "|".join(m for m in _MONTHS if m not in ("may", "march")) + "|(?-i:March|May)|" + _SHORT
_MONTH_OF_YEAR_RE = re.compile(
    rf"\b(?:(?:in|during)\s+({'|'.join(_MONTHS)}|{_SHORT})|({_BARE_MONTHS}))\.?(?:\s+of)?\s+(last|previous|this|next)\s+year\b",
    re.I,
)
_YEAR_OFFSETS = {"last": -1, "previous": -1, "this": 0, "next": 1}
# The calendar period before the last one: "the week before last" (no range "before" it;
# not "the week before last Christmas").
_BEFORE_LAST_RE = re.compile(r"\b(?:the\s+)?(week|month|year)\s+before\s+last(?:\s+(?:week|month|year)\b|(?!\s*\w))", re.I)
_BETWEEN_RE = re.compile(r"\b(?:between\s+(.+?)\s+and|from\s+(.+?)\s+(?:to|until|till))\s+(.+?)(?:[?.!,;]|$)", re.I)
_ISO_LIKE_RE = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}$")
_SINCE_RE = re.compile(r"\b(since|after|from|before|until|till)\s+(.+?)(?:[?.!,;]|$)", re.I)
_EVENT_RE = re.compile(r"^(?:the|my|our|his|her|their)\s+[\w' -]+$", re.I)
# A clause after "since": a pronoun, perhaps an adverb, then a verb in the simple past (one
# in -ed but not -eed: "need", "feed"; or an irregular one). Its words after the pronoun
# are the event. No past that is its present too (put, set, read, quit): "since I put salt
# in" may be a reason.
_IRREGULAR_PAST = (
    "began became bought brought built came caught chose did drove ate fell felt flew found forgot "
    "gave got had heard held kept knew left lent lost made met paid ran rode said sat "
    "saw sent sold spent spoke stood stole swam took taught told threw thought went woke won wore wrote"
)
_CLAUSE_RE = re.compile(
    r"^(?:i|we|you|he|she|they)\s+(?:(?:first|last|finally|just|actually)\s+)?"
    rf"((?:(?![a-z]*eed\b)[a-z]+ed|{'|'.join(_IRREGULAR_PAST.split())})\b[\w' -]*)$",
    re.I,
)


def read_expression(text: str, now: dt.datetime) -> tuple[dt.date, dt.date] | None:
    """The days a whole date expression (``last week``, ``2024-03``) asked at ``now``
    covers, or None."""
    text = text.strip()
    if cjk.has_cjk(text):
        return read_cjk(text, now)
    today = now.date()
    if found := holiday(text, today, whole=True) or day_of_month(text, today, whole=True):
        return found.since, found.until
    # A whole expression that is a month alone is one ("since May"), which in a sentence
    # _TIME_WORD_RE leaves to its context ("may" is a verb too).
    if not text or not (_TIME_WORD_RE.search(text) or text.lower() in _MONTHS):
        return None
    if _THIS_DAY_RE.search(text):
        day = year_ago(today)
        return day, day
    if m := _MONTH_OF_YEAR_RE.fullmatch(text):
        return _month_of_year(m, today)
    data = date_parser(today).get_date_data(text)
    if data.date_obj is None:
        return None
    period = data.period or "day"
    if re.fullmatch(r"(?:in\s+)?(?:19|20)\d{2}", text, re.I):
        period = "year"
    return period_bounds(data.date_obj.date(), period)


def parse_when(text: str, now: dt.date | dt.datetime | None = None) -> DateRange | None:
    """The date range a question asked at ``now`` (the clock's when None; a date alone is
    that day at noon, :func:`.clock.moment`) speaks of, or None when it names no time."""
    now = clock.moment(now)
    today = now.date()
    if cjk.has_cjk(text):
        if found := parse_cjk(text, now):
            return found
        text = cjk.set_apart(text)  # English time words in it: "last weekに"
    if found := day_or_span(text, today, _THIS_DAY_RE, _BETWEEN_RE, lambda words: _read_alone(words, now)):
        return found
    if found := two_weekdays(text, lambda words: read_expression(words, now), today):  # "on Monday or Tuesday"
        return found
    if span := rolling_span(text, now):  # "in the past 3 days", "last weekend", "3 hours ago"
        return DateRange(*span)
    if m := _BEFORE_LAST_RE.search(text):
        return DateRange(*_before_last(m[1].lower(), today), m[0])
    m = _SINCE_RE.search(text)
    if m:
        word, rest = m[1].lower(), m[2].strip()
        days, rest, event = _longest_prefix(rest, now)
        expression = f"{m[1]} {rest}"
        if days:
            return DateRange(*bound_range(word, *days, today, event=event), expression)
        if word == "since" and _EVENT_RE.match(rest):
            return DateRange(None, today, expression, event=rest)
        if word == "since" and (clause := _CLAUSE_RE.match(rest)):
            return DateRange(None, today, expression, event=clause[1])
    return _search(text, now)


def _read_alone(text: str, now: dt.datetime) -> tuple[dt.date, dt.date] | None:
    """The days ``text``, a whole expression standing alone (an end of "between X and Y",
    a ``since``/``until`` parameter), covers asked at ``now``: by the clock when it is a
    span, a part of a day or hours ago (:func:`.rolling.whole_span`: "3 hours ago" at
    02:00 is yesterday evening), else by :func:`read_expression`."""
    return whole_span(text, now) or read_expression(text, now)


def _longest_prefix(text: str, now: dt.datetime) -> tuple[tuple[dt.date, dt.date] | None, str, bool]:
    """The days of the longest run of leading words of ``text`` that reads as a date
    ("2024-05-01 what did I cook" -> 2024-05-01), else None and ``text``; and whether
    it names an event of that time ("Monday's meeting": read as Monday)."""
    words = text.split()
    for n in range(min(len(words), 6), 0, -1):
        phrase = " ".join(words[:n])
        event = phrase.endswith(POSSESSIVE)
        days = read_expression(phrase[:-2] if event else phrase, now)
        if days:
            return days, phrase, event
    return None, text, False


def _month_of_year(m: re.Match, today: dt.date) -> tuple[dt.date, dt.date]:
    """The days of the month a :data:`_MONTH_OF_YEAR_RE` match names."""
    named = (m[1] or m[2]).lower()[:3]
    month = next(i for i, name in enumerate(_MONTHS, 1) if name.startswith(named))
    return period_bounds(dt.date(today.year + _YEAR_OFFSETS[m[3].lower()], month, 1), "month")


def _before_last(unit: str, today: dt.date) -> tuple[dt.date, dt.date]:
    """The days of the calendar ``unit`` (week, month, year) two before this one."""
    if unit == "week":
        return period_bounds(today - dt.timedelta(days=14), "week")
    if unit == "year":
        return period_bounds(today.replace(year=today.year - 2, month=1, day=1), "year")
    last = today.replace(day=1) - dt.timedelta(days=1)
    return period_bounds(last.replace(day=1) - dt.timedelta(days=1), "month")


def _search(text: str, now: dt.datetime) -> DateRange | None:
    if found := holiday(text, now.date()) or day_of_month(text, now.date()):
        return found
    if m := _MONTH_OF_YEAR_RE.search(text):
        return DateRange(*_month_of_year(m, now.date()), m[0])
    if not _TIME_WORD_RE.search(text):
        return None
    from dateparser.search import search_dates

    found = search_dates(text, languages=["en"], settings=parser_settings(now.date())) or []
    for expression, _ in found:
        if expression.strip().lower() == "may":  # the verb ("what may I do this year"): "in May" is the month
            continue
        expression = _with_its_year(text, expression)
        days = read_expression(expression, now)
        if days:
            if _WEEKDAY_RE.fullmatch(expression.strip()):
                days = latest_weekday(days, now.date())
            return through_the_night(DateRange(days[0], days[1], expression.strip()), now.date())
    return None


def _with_its_year(text: str, expression: str) -> str:
    """``expression`` with the year that follows it in ``text`` when it names none: the
    search reads "the first week of March 2024" as "March" and "2024" apart."""
    if re.search(r"\d{4}", expression):
        return expression
    m = re.search(re.escape(expression) + r"\s+(?:19|20)\d{2}\b", text)
    return m[0] if m else expression


def without_expression(text: str, found: DateRange | None) -> str:
    """``text`` with the date expression taken out (what is left to search for)."""
    if found is None or not found.expression:
        return text
    return re.sub(re.escape(found.expression), " ", text, count=1, flags=re.I).strip()


def explicit_range(
    since: str | None, until: str | None, now: dt.date | dt.datetime | None = None
) -> DateRange | None:
    """A range from the ``since``/``until`` parameters (ISO dates or expressions such as
    ``last week``, read at ``now`` as :func:`parse_when` reads them: since takes its first
    day, until its last). BadRequest if unreadable."""
    if not since and not until:
        return None
    now = clock.moment(now)
    bounds = []
    for name, value, end in (("since", since, 0), ("until", until, 1)):
        if not value:
            bounds.append(None)
            continue
        try:
            days = (dt.date.fromisoformat(value),) * 2
        except ValueError:
            # 2024-13-01 is no date; dateparser would read it as 13 January.
            days = None if _ISO_LIKE_RE.match(value.strip()) else _read_alone(value, now)
        if not days:
            raise BadRequest(f"{name}: cannot read {value!r} as a date (use YYYY-MM-DD or e.g. 'last week')")
        bounds.append(days[end])
    if bounds[0] and bounds[1] and bounds[0] > bounds[1]:
        raise BadRequest("since must not be after until")
    return DateRange(bounds[0], bounds[1], " ".join(f"{n} {v}" for n, v in (("since", since), ("until", until)) if v))
