"""Time in questions: "last week", "in March 2024", "yesterday", "this day last year",
"since the move" turned into a date range, deterministically.

``dateparser`` finds and reads the expression (never the chat model); this module turns
its point in time and period (day, week, month, year) into a closed range of days and
handles the words around it: ``since``/``after``/``from`` X (X to today), ``before``/
``until`` X, ``between`` X ``and`` Y. A ``since`` followed by words that are no date
("since the move") is returned as an *event* for the caller to date from the notes.

Only expressions holding a time word (a month or weekday name, yesterday/today, a
relative unit with last/this/next/ago, an ISO date, or a year after "in", "since"...)
count: dateparser reads numbers and words such as "may" or "second" as dates, which a
question about 75% hydration or 2000 grams of flour must not become.

Questions in Japanese and Chinese are read the same way (:func:`_parse_cjk`): dateparser
reads both, and their time words (先週, 昨日, 3日前, 2024年3月, 月曜日; 上周, 昨天, 3天前,
星期一) are found by their own pattern, with the particles that bound a range after them
(から, まで, 以来, より前; 以来, 以后, 之前, 从X到Y) where English puts its prepositions
before.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from ..errors import BadRequest
from ..notes import cjk
from .rolling import rolling_span, whole_span

_MONTHS = "january february march april may june july august september october november december".split()
_DAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
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
_THIS_DAY_RE = re.compile(r"\b(?:on\s+)?(?:this|that|the same)\s+day\s+(?:last|a)\s+year\b|\ba\s+year\s+ago\s+today\b", re.I)
_BETWEEN_RE = re.compile(r"\b(?:between\s+(.+?)\s+and|from\s+(.+?)\s+(?:to|until|till))\s+(.+?)(?:[?.!,;]|$)", re.I)
_ISO_LIKE_RE = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}$")
_YEAR_RE = re.compile(r"\b\d{4}\b")
_SINCE_RE = re.compile(r"\b(since|after|from|before|until|till)\s+(.+?)(?:[?.!,;]|$)", re.I)
_EVENT_RE = re.compile(r"^(?:the|my|our|his|her|their)\s+[\w' -]+$", re.I)
# Japanese and Chinese time words. Dates in digits (2024-05-01, 2024年3月5日, 3月, 2024年) are
# counted here, not by dateparser, which reads 12月1日 as January 2012 and 2024年 as the
# year 2; a bare year only before a particle ("2000年問題" is a name, not a time), a
# month not after another number or 年 ("令和6年3月", "24年3月": eras and short years
# are not read). Kanji numerals up to 99 count in "N日前" ("三日前", "二十年前", "两周前").
_CJK_PARTICLE = r"(?=に|の|は|も|から|まで|以|より|之|到|的|、|，|。|？|\?|！|!|\s|$)"
_CJK_DATE = (
    r"(?<!\d)(?:\d{4}-\d{2}(?:-\d{2})?|\d{4}年\d{1,2}月(?!曜)(?:\d{1,2}日)?|(?<!年)\d{1,2}月(?!曜)(?:\d{1,2}日)?"
    rf"|\d{{4}}年{_CJK_PARTICLE})"
)
_NUMERALS = "一二三四五六七八九十两"
_CJK_TIME = (
    rf"(?:{_CJK_DATE}|(?:(?<!\d)\d{{1,3}}|(?<![{_NUMERALS}数几百千])[{_NUMERALS}]{{1,3}})"
    r"(?:日|週間|か月|ヶ月|カ月|ヵ月|年|天|周|个月)前"
    r"|一昨日|昨日|今日|今朝|今夜|今晩|昨夜|昨晩|先々週|先週|今週|来週|先々月|先月|今月|来月|一昨年|去年|昨年|今年|来年"
    r"|[月火水木金土日]曜日?)"
)
# Chinese words, looked for only in a question with no kana (a Japanese one reads 日本周辺
# and 説明年度 as no time), and not inside the compounds that hold them (日本周边, 地下,
# 说明年度, 每周一次).
_ZH_TIME = (
    r"(?:前天(?!候)|昨天|今天|昨晚|今晚|上周|(?<!日)本周|这周|(?<!地)下周|上星期|这星期|下星期|上个月|这个月|(?<!日)本月|下个月"
    r"|(?<![说説文])明年(?!度|表)|星期[一二三四五六日天]|(?<![每一两二三四五六七八九十几])周[一二三四五六日](?!次))"
)
_ANY_TIME_RE = re.compile(f"{_CJK_TIME}|{_ZH_TIME}")
_CJK_THIS_DAY_RE = re.compile(r"(?:去年|昨年|一年前|1年前)の今日|去年的今天")


@lru_cache(maxsize=2)
def _patterns(chinese: bool) -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """``(time words, between, bounds)`` for a question in Chinese or in Japanese:
    XからYまで or 从X到Y; X with the particles after it that make it a range's start
    (since), end (until) or the day after its end (before)."""
    time = f"(?:{_CJK_TIME}|{_ZH_TIME})" if chinese else _CJK_TIME
    between = f"从?({time})到({time})" if chinese else f"({time})から({time})まで"
    bounds = "以来|以后|之后|以前|之前|到" if chinese else "以来|以降|以後|から|まで|以前|より前"
    return re.compile(time), re.compile(between), re.compile(f"({time})({bounds})")


# Before X (the day before it starts) and until X (its last day); the rest mean since X.
_CJK_BEFORE = {False: ("より前",), True: ("以前", "之前")}
_CJK_UNTIL = {False: ("まで", "以前"), True: ("到",)}
_CJK_DIGITS_RE = re.compile(
    r"(?P<y>\d{4})-(?P<m>\d{2})(?:-(?P<d>\d{2}))?|(?P<y2>\d{4})年(?:(?P<m2>\d{1,2})月(?:(?P<d2>\d{1,2})日)?)?"
    r"|(?P<m3>\d{1,2})月(?:(?P<d3>\d{1,2})日)?"
)
# Words dateparser does not read, as one it does.
_CJK_SAME = {"今朝": "今日", "昨夜": "昨日", "昨晩": "昨日", "今晚": "今天", "今夜": "今日", "今晩": "今日", "这周": "本周", "这个月": "本月", "上星期": "上周",
             "这星期": "本周", "下星期": "下周"}  # fmt: skip
_KANJI_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九")}
_KANJI_NUMBER_RE = re.compile(f"[{_NUMERALS}]+")
# 三, 十五, 二十, 九十九; 两 (2 in Chinese) alone.
_KANJI_NUMERAL_RE = re.compile("(?=.)(?:([一二三四五六七八九])?(十))?([一二三四五六七八九])?|(两)")


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
def _parser(today: dt.date, language: str = "en"):
    # Imported on first use: dateparser takes about a second to load its language data.
    from dateparser.date import DateDataParser

    return DateDataParser(languages=[language], settings=_settings(today))


def _settings(today: dt.date) -> dict:
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


def read_expression(text: str, today: dt.date) -> tuple[dt.date, dt.date] | None:
    """The days a whole date expression (``last week``, ``2024-03``) covers, or None."""
    text = text.strip()
    if cjk.has_cjk(text):
        return _read_cjk(text, today)
    # A whole expression that is a month alone is one ("since May"), which in a sentence
    # _TIME_WORD_RE leaves to its context ("may" is a verb too).
    if not text or not (_TIME_WORD_RE.search(text) or text.lower() in _MONTHS):
        return None
    if _THIS_DAY_RE.search(text):
        day = _year_ago(today)
        return day, day
    data = _parser(today).get_date_data(text)
    if data.date_obj is None:
        return None
    period = data.period or "day"
    if re.fullmatch(r"(?:in\s+)?(?:19|20)\d{2}", text, re.I):
        period = "year"
    return period_bounds(data.date_obj.date(), period)


def _year_ago(today: dt.date) -> dt.date:
    try:
        return today.replace(year=today.year - 1)
    except ValueError:  # 29 February
        return today.replace(year=today.year - 1, day=28)


def parse_when(text: str, today: dt.date | None = None) -> DateRange | None:
    """The date range a question speaks of, or None when it names no time."""
    today = today or dt.date.today()
    if cjk.has_cjk(text):
        if found := _parse_cjk(text, today):
            return found
        text = cjk.set_apart(text)  # English time words in it: "last weekに"
    if found := _day_or_span(text, today, _THIS_DAY_RE, _BETWEEN_RE, read_expression):
        return found
    if span := rolling_span(text, today):  # "in the past 3 days", "last weekend"
        return DateRange(*span)
    m = _SINCE_RE.search(text)
    if m:
        word, rest = m[1].lower(), m[2].strip()
        days, rest = _longest_prefix(rest, today)
        expression = f"{m[1]} {rest}"
        if days and word in ("since", "from"):
            return DateRange(days[0], today, expression)
        if days and word == "after":
            return DateRange(_shift(days[1], 1), today, expression)
        if days and word in ("before",):
            return DateRange(None, _shift(days[0], -1), expression)
        if days and word in ("until", "till"):
            return DateRange(None, days[1], expression)
        if not days and word == "since" and _EVENT_RE.match(rest):
            return DateRange(None, today, expression, event=rest)
    return _search(text, today)


def _day_or_span(
    text: str, today: dt.date, this_day: re.Pattern, between: re.Pattern,
    read: Callable[[str, dt.date], tuple[dt.date, dt.date] | None],
) -> DateRange | None:
    """A day a year ago (``this_day``: "this day last year") or the span from the first
    day of one expression to the last of another (``between``, its two groups read by
    ``read``), or None."""
    if m := this_day.search(text):
        day = _year_ago(today)
        return DateRange(day, day, m[0])
    if m := between.search(text):
        one, other = m[1] or m[2], m[m.lastindex]
        first, second = read(one, today), read(other, today)
        if first and second and first[0] > second[1] and not _YEAR_RE.search(one) and (year := _YEAR_RE.search(other)):
            first = read(f"{one} {year[0]}", today) or first  # "between March and May 2024": May's year
        if first and second:
            return DateRange(min(first[0], second[0]), max(first[1], second[1]), m[0].rstrip("?.!,; "))
    return None


def _shift(day: dt.date, days: int) -> dt.date:
    """``day`` moved by ``days``, kept within the calendar (the day before 0001-01-01 is it)."""
    try:
        return day + dt.timedelta(days=days)
    except OverflowError:
        return dt.date.min if days < 0 else dt.date.max


def _longest_prefix(text: str, today: dt.date) -> tuple[tuple[dt.date, dt.date] | None, str]:
    """The days of the longest run of leading words of ``text`` that reads as a date
    ("2024-05-01 what did I cook" -> 2024-05-01), else None and ``text``."""
    words = text.split()
    for n in range(min(len(words), 6), 0, -1):
        days = read_expression(" ".join(words[:n]), today)
        if days:
            return days, " ".join(words[:n])
    return None, text


def _search(text: str, today: dt.date) -> DateRange | None:
    if not _TIME_WORD_RE.search(text):
        return None
    from dateparser.search import search_dates

    found = search_dates(text, languages=["en"], settings=_settings(today)) or []
    for expression, _ in found:
        days = read_expression(expression, today)
        if days:
            return DateRange(days[0], days[1], expression.strip())
    return None


def _parse_cjk(text: str, today: dt.date) -> DateRange | None:
    """:func:`parse_when` for a question in Japanese or, with no kana, Chinese:
    "去年の今日"/"去年的今天", "XからYまで"/"从X到Y", X with a particle after it that makes
    it a range's start, end or the day after its end (:func:`_patterns`; 以前 is until X's
    end in Japanese, before X in Chinese), else the first time word."""
    chinese = not cjk.has_kana(text)
    time, between, bounds = _patterns(chinese)
    if found := _day_or_span(text, today, _CJK_THIS_DAY_RE, between, _read_cjk):
        return found
    for m in bounds.finditer(text):
        days = _read_cjk(m[1], today)
        if days is None:
            continue
        if m[2] in _CJK_BEFORE[chinese]:
            return DateRange(None, _shift(days[0], -1), m[0])
        if m[2] in _CJK_UNTIL[chinese]:
            return DateRange(None, days[1], m[0])
        return DateRange(days[0], today, m[0])
    for m in time.finditer(text):
        days = _read_cjk(m[0], today)
        if days:
            return DateRange(days[0], days[1], m[0])
    return None


def _read_cjk(text: str, today: dt.date) -> tuple[dt.date, dt.date] | None:
    """:func:`read_expression` for one Japanese or Chinese time expression: dates in digits
    counted here (:func:`_cjk_digits`), the words for times relative to today read by
    dateparser (Japanese, else Chinese), and what it does not read (一昨年, 先々月) counted
    here."""
    if not _ANY_TIME_RE.fullmatch(text):
        return None
    if text[0].isdigit() and not text.endswith("前"):
        return _cjk_digits(text, today)
    if text in ("昨夜", "昨晩", "昨晚"):  # last night, and its small hours past midnight (dated today)
        return today - dt.timedelta(days=1), today
    if text == "一昨年":
        return period_bounds(today.replace(month=1, day=1, year=today.year - 2), "year")
    if text == "先々月":
        first = today.replace(day=1)
        return period_bounds((first - dt.timedelta(days=1)).replace(day=1) - dt.timedelta(days=1), "month")
    text = _KANJI_NUMBER_RE.sub(_kanji_number, text) if text.endswith("前") else _CJK_SAME.get(text, text)
    data = _parser(today, "ja").get_date_data(text)
    if data.date_obj is None:  # Chinese (昨天, 上周), which shares the dates in digits
        data = _parser(today, "zh").get_date_data(text)
    if data.date_obj is None:
        return None
    return period_bounds(data.date_obj.date(), data.period or "day")


def _kanji_number(m: re.Match) -> str:
    """A kanji numeral up to 九十九 in digits (三: 3, 十五: 15, 二十: 20); another run of
    them (三三, 十十) as it is, which then reads as no time."""
    n = _KANJI_NUMERAL_RE.fullmatch(m[0])
    if n is None:
        return m[0]
    if n[4]:
        return "2"
    tens = (_KANJI_DIGITS[n[1]] if n[1] else 1) if n[2] else 0
    return str(10 * tens + (_KANJI_DIGITS[n[3]] if n[3] else 0))


def _cjk_digits(text: str, today: dt.date) -> tuple[dt.date, dt.date] | None:
    """The days of 2024-05-01, 2024-05, 2024年3月5日, 2024年3月, 2024年, 3月5日 or 3月
    (without a year: the latest on or before ``today``, as English "in March" is); None
    for a day that does not exist."""
    m = _CJK_DIGITS_RE.fullmatch(text)
    if m is None:
        return None
    found = (m["y"] or m["y2"], m["m"] or m["m2"] or m["m3"], m["d"] or m["d2"] or m["d3"])
    year, month, day = (int(g) if g else None for g in found)
    try:
        if year is None:
            latest = today.year if (month, day or 1) <= (today.month, today.day) else today.year - 1
            if day is None:
                return period_bounds(dt.date(latest, month, 1), "month")
            return period_bounds(_latest_day(month, day, today), "day")
        if month is None:
            return period_bounds(dt.date(year, 1, 1), "year")
        return period_bounds(dt.date(year, month, day or 1), "month" if day is None else "day")
    except ValueError:  # no such day (13月, 2月30日, 0000年)
        return None


def _latest_day(month: int, day: int, today: dt.date) -> dt.date:
    """The last ``month``/``day`` on or before ``today`` (2月29日: the last leap year's)."""
    for year in range(today.year, today.year - 8, -1):
        try:
            found = dt.date(year, month, day)
        except ValueError:
            continue
        if found <= today:
            return found
    raise ValueError(f"no {month}/{day}")


def without_expression(text: str, found: DateRange | None) -> str:
    """``text`` with the date expression taken out (what is left to search for)."""
    if found is None or not found.expression:
        return text
    return re.sub(re.escape(found.expression), " ", text, count=1, flags=re.I).strip()


def explicit_range(since: str | None, until: str | None, today: dt.date | None = None) -> DateRange | None:
    """A range from the ``since``/``until`` parameters (ISO dates or expressions such as
    ``last week``: since takes its first day, until its last). BadRequest if unreadable."""
    if not since and not until:
        return None
    today = today or dt.date.today()
    bounds = []
    for name, value, end in (("since", since, 0), ("until", until, 1)):
        if not value:
            bounds.append(None)
            continue
        try:
            days = (dt.date.fromisoformat(value),) * 2
        except ValueError:
            # 2024-13-01 is no date; dateparser would read it as 13 January.
            days = None if _ISO_LIKE_RE.match(value.strip()) else read_expression(value, today) or whole_span(value, today)
        if not days:
            raise BadRequest(f"{name}: cannot read {value!r} as a date (use YYYY-MM-DD or e.g. 'last week')")
        bounds.append(days[end])
    if bounds[0] and bounds[1] and bounds[0] > bounds[1]:
        raise BadRequest("since must not be after until")
    return DateRange(bounds[0], bounds[1], " ".join(f"{n} {v}" for n, v in (("since", since), ("until", until)) if v))
