"""Time in questions in Japanese and Chinese, read as :mod:`.when` reads English:
dateparser reads both, and their time words (先週, 昨日, 3日前, 2024年3月, 月曜日; 上周,
昨天, 3天前, 星期一) are found by their own pattern; a weekend (先週末, 週末; 上周末, 周末)
and a weekday of a named week (先週の日曜日, 上周日), which dateparser reads as the whole
week, are counted here, with the particles that bound a range
after them (から, まで, 以来, より前; 以来, 以后, 之前, 从X到Y) where English puts its
prepositions before.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache

from ..notes import cjk
from . import clock
from .day_range import DateRange, bound_range, date_parser, day_or_span, latest_weekday, period_bounds, weekend

# Japanese and Chinese time words. Dates in digits (2024-05-01, 2024年3月5日, 3月, 2024年, and
# 去年の3月: a month of a year named relative to this one, :data:`_RELATIVE_YEARS`) are
# counted here, not by dateparser, which reads 12月1日 as January 2012 and 2024年 as the
# year 2; a bare year only before a particle ("2000年問題" is a name, not a time), a
# month not after another number or 年 ("令和6年3月", "24年3月": eras and short years
# are not read). Kanji numerals count in a month and its day (三月, 十二月二十五日) and, up to
# 99, in "N日前" ("三日前", "二十年前", "两周前",
# "三時間前"); minutes only in digits ("30分前": 十分 is "enough", "very").
_CJK_PARTICLE = r"(?=に|の|は|も|から|まで|以|より|之|到|的|、|，|。|？|\?|！|!|\s|$)"
_NUMERALS = "一二三四五六七八九十两"
# A month and perhaps its day, in digits or in kanji numerals (3月, 三月, 十二月五日).
_MONTH = r"(?:\d{1,2}|十[一二]?|[一二三四五六七八九])月(?!曜)(?:(?:\d{1,2}|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])日)?"
_CJK_DATE = (
    rf"(?<![\d{_NUMERALS}])(?:(?:一昨年|去年|昨年|今年|来年)[の的]?{_MONTH}|\d{{4}}-\d{{2}}(?:-\d{{2}})?|\d{{4}}年{_MONTH}|(?<!年){_MONTH}"
    rf"|\d{{4}}年{_CJK_PARTICLE})"
)
# The kanji numerals of a month and its day, read as digits (:func:`_kanji_number`).
_KANJI_MONTH_RE = re.compile(f"[{_NUMERALS}]+(?=月)|(?<=月)[{_NUMERALS}]+(?=日)")
# A number of units ago, with a half after the number (1時間半前, 一个半小时前, 一年半前) or
# alone (半時間前, 半个小时前, 半年前), and Chinese's measure word (3个小时前, 两个星期前).
_CJK_TIME = (
    rf"(?:{_CJK_DATE}|(?:(?<!\d)\d{{1,3}}|(?<![{_NUMERALS}数几百千])[{_NUMERALS}]{{1,3}})"
    r"(?:日|週間|時間半?|か月|ヶ月|カ月|ヵ月|年半?|天|周|个?半?小时|个?半?钟头|个?星期|个半?月)前"
    rf"|(?<![{_NUMERALS}\d大多])半(?:時間|日|年|天|个?小时|个?钟头|个?月)前|(?<!\d)\d{{1,3}}分钟?前"
    r"|(?:先週|今週|来週)の?[月火水木金土日]曜日?"
    r"|先週末|今週末|来週末|(?<!毎)週末" + _CJK_PARTICLE +
    r"|一昨日|昨日|今日|今朝|今夜|今晩|昨夜|昨晩|先々週|先週|今週|来週|先々月|先月|今月|来月|一昨年|去年|昨年|今年|来年"
    r"|[月火水木金土日]曜日?)"
)
# Chinese words, looked for only in a question with no kana (a Japanese one reads 日本周辺
# and 説明年度 as no time), and not inside the compounds that hold them (日本周边, 地下,
# 说明年度, 每周一次).
_ZH_TIME = (
    r"(?:(?:上|这|本|下)个?(?:周|星期)[一二三四五六日天]|(?:上个?|这个?|本|下个?|(?<!每))周末|前天(?!候)|昨天|今天|昨晚|今晚|上周|(?<!日)本周|这周|(?<!地)下周|上星期|这星期|下星期|上个月|这个月|(?<!日)本月|下个月"
    r"|(?<![说説文])明年(?!度|表)|星期[一二三四五六日天]|(?<![每一两二三四五六七八九十几])周[一二三四五六日](?!次))"
)
# The weekends (:func:`.day_range.weekend`): last week's, this week's, next week's, or
# named alone, the latest.
_WEEKENDS = {
    "先週末": "last", "今週末": "this", "来週末": "next", "週末": "", "上周末": "last", "上个周末": "last",
    "这周末": "this", "这个周末": "this", "本周末": "this", "下周末": "next", "下个周末": "next", "周末": "",
}  # fmt: skip
# A weekday of last, this or next week (先週の日曜日, 上周日, 下星期一), which dateparser
# reads as the whole week or not at all: the week, then the day.
_WEEK_DAY_RE = re.compile("(先週|今週|来週)の?([月火水木金土日])曜日?|(上|这|本|下)个?(?:周|星期)([一二三四五六日天])")
_WEEKS = {"先週": -1, "上": -1, "来週": 1, "下": 1}
_DAY_INDEX = {c: i for i, c in enumerate("月火水木金土日")} | {c: i for i, c in enumerate("一二三四五六日")} | {"天": 6}
# A weekday named alone (月曜日, 日曜, 星期天, 周日): the latest such day (:func:`.day_range.latest_weekday`).
_WEEKDAY_RE = re.compile("[月火水木金土日]曜日?|星期[一二三四五六日天]|周[一二三四五六日]")
_ANY_TIME_RE = re.compile(f"{_CJK_TIME}|{_ZH_TIME}")
_CJK_DATE_RE = re.compile(_CJK_DATE)
# A year named relative to this one before a month in digits (去年の3月, 去年3月, 今年的5月).
_RELATIVE_YEAR_RE = re.compile(r"(一昨年|去年|昨年|今年|来年)[の的]?(?=\d|十|[一二三四五六七八九]月)")
_RELATIVE_YEARS = {"一昨年": -2, "去年": -1, "昨年": -1, "今年": 0, "来年": 1}
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
_CJK_SAME = {"今朝": "今日", "这周": "本周", "这个月": "本月", "上星期": "上周", "这星期": "本周", "下星期": "下周"}
# Tonight (False) and last night (True), read by the clock (:func:`.clock.night`).
_NIGHT = {"今夜": False, "今晩": False, "今晚": False, "昨夜": True, "昨晩": True, "昨晚": True}
_CLOCK_RE = re.compile("(?:時間|小时|分钟|分)前$")
# A half or a measure word, for :func:`_in_whole_units` (numbers already in digits).
_UNITS_RE = re.compile("(?P<n>\\d*)(?P<measure>个?)(?P<half>半?)个?(?P<unit>時間|日|年|天|小时|钟头|星期|月)(?P<half2>半?)前")
# Each unit's half in a unit dateparser counts whole: (how many of those make one, the
# words for N of them ago).
_HALVES = {
    "時間": (60, "{}分前"), "小时": (60, "{}分钟前"), "钟头": (60, "{}分钟前"),
    "日": (24, "{}時間前"), "天": (24, "{}小时前"), "年": (12, "{}か月前"), "月": (30, "{}日前"),
}  # fmt: skip
_WHOLE = {"钟头": "{}小时前", "星期": "{}週間前", "小时": "{}小时前"}
_KANJI_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九")}
_KANJI_NUMBER_RE = re.compile(f"[{_NUMERALS}]+")
# 三, 十五, 二十, 九十九; 两 (2 in Chinese) alone.
_KANJI_NUMERAL_RE = re.compile("(?=.)(?:([一二三四五六七八九])?(十))?([一二三四五六七八九])?|(两)")


def parse_cjk(text: str, now: dt.datetime) -> DateRange | None:
    """:func:`.when.parse_when` for a question in Japanese or, with no kana, Chinese:
    "去年の今日"/"去年的今天", "XからYまで"/"从X到Y", X with a particle after it that makes
    it a range's start, end or the day after its end (:func:`_patterns`; 以前 is until X's
    end in Japanese, before X in Chinese; a part of a day keeps its day, as in English:
    :func:`.day_range.bound_range`), else the first time word. Asked at ``now``."""
    chinese = not cjk.has_kana(text)
    time, between, bounds = _patterns(chinese)
    if found := day_or_span(text, now.date(), _CJK_THIS_DAY_RE, between, lambda words: read_cjk(words, now)):
        return found
    for m in bounds.finditer(text):
        days = read_cjk(m[1], now)
        if days is None:
            continue
        word = "before" if m[2] in _CJK_BEFORE[chinese] else "until" if m[2] in _CJK_UNTIL[chinese] else "since"
        part = m[1] in _NIGHT or m[1] == "今朝" or _CLOCK_RE.search(_in_whole_units(m[1])) is not None
        return DateRange(*bound_range(word, *days, now.date(), part=part), m[0])
    for m in time.finditer(text):
        days = read_cjk(m[0], now)
        if days:
            if _WEEKDAY_RE.fullmatch(m[0]):
                days = latest_weekday(days, now.date())
            return DateRange(days[0], days[1], m[0])
    return None


def read_cjk(text: str, now: dt.datetime) -> tuple[dt.date, dt.date] | None:
    """:func:`.when.read_expression` for one Japanese or Chinese time expression: dates in digits
    counted here (:func:`_cjk_digits`), the words for times relative to today read by
    dateparser (Japanese, else Chinese), and what it does not read (一昨年, 先々月) counted
    here; by the clock at ``now`` (:mod:`.clock`), tonight and last night (今夜, 昨夜...)
    and hours or minutes ago (3時間前, 30分钟前)."""
    if not _ANY_TIME_RE.fullmatch(text):
        return None
    today = now.date()
    if m := _RELATIVE_YEAR_RE.match(text):
        text = f"{today.year + _RELATIVE_YEARS[m[1]]}年{text[m.end():]}"
    if _CJK_DATE_RE.fullmatch(text):  # 三月, 十二月五日: in digits
        text = _KANJI_MONTH_RE.sub(_kanji_number, text)
    if text[0].isdigit() and not text.endswith("前"):
        return _cjk_digits(text, today)
    if text in _NIGHT:
        return clock.night(now, last=_NIGHT[text])
    if m := _WEEK_DAY_RE.fullmatch(text):
        day = today + dt.timedelta(days=7 * _WEEKS.get(m[1] or m[3], 0) + _DAY_INDEX[m[2] or m[4]] - today.weekday())
        return day, day
    if text in _WEEKENDS:
        return weekend(today, _WEEKENDS[text])
    if text[-1] == "曜":  # 日曜, as dateparser reads 日曜日
        text += "日"
    if text == "一昨年":
        return period_bounds(today.replace(month=1, day=1, year=today.year - 2), "year")
    if text == "先々月":
        first = today.replace(day=1)
        return period_bounds((first - dt.timedelta(days=1)).replace(day=1) - dt.timedelta(days=1), "month")
    text = _in_whole_units(_KANJI_NUMBER_RE.sub(_kanji_number, text)) if text.endswith("前") else _CJK_SAME.get(text, text)
    if _CLOCK_RE.search(text):
        return clock.ago(text, now, "ja") or clock.ago(text, now, "zh")
    data = date_parser(today, "ja").get_date_data(text)
    if data.date_obj is None:  # Chinese (昨天, 上周), which shares the dates in digits
        data = date_parser(today, "zh").get_date_data(text)
    if data.date_obj is None:
        return None
    return period_bounds(data.date_obj.date(), data.period or "day")


def _in_whole_units(text: str) -> str:
    """A time ago (its numbers in digits) with a half or a measure word in words
    dateparser reads: 1時間半前 as 90分前, 半小时前 as 30分钟前, 一年半前 as 18か月前,
    3个小时前 as 3小时前, 两个星期前 as 2週間前; any other as it is."""
    m = _UNITS_RE.fullmatch(text)
    if m is None or not (m["half"] or m["half2"] or m["measure"] or m["unit"] in ("钟头", "星期")):
        return text
    unit, whole = m["unit"], int(m["n"] or 0)
    if m["half"] or m["half2"]:
        if unit not in _HALVES:
            return text
        parts, words = _HALVES[unit]
        return words.format(whole * parts + parts // 2)
    return _WHOLE.get(unit, "{}" + m["measure"] + unit + "前").format(whole)


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
