"""Time phrases a person uses that were not read, or read wrongly: months in kanji
numerals (三月, 十二月五日), a day of the month alone ("on the 5th"), a weekday's night
past midnight ("last Friday night"), the morning before 05:00, the fixed holidays
(Christmas, New Year's Eve and Day) and two days named together ("Monday or Tuesday")."""

from __future__ import annotations

import datetime as dt

import pytest

from arcology_oracle.answers.when import parse_when

FRIDAY = dt.datetime(2026, 12, 11, 15)  # a Friday afternoon


def days(question: str, now: dt.datetime) -> tuple[str | None, str | None]:
    found = parse_when(question, now)
    assert found is not None, question
    return found.as_dict()["since"], found.as_dict()["until"]


@pytest.mark.parametrize(
    ("question", "since", "until"),
    [
        ("三月に何をした？", "2026-03-01", "2026-03-31"),
        ("十二月のメモ", "2026-12-01", "2026-12-31"),
        ("十二月二十五日は何をした", "2025-12-25", "2025-12-25"),  # the latest, not yet this year's
        ("去年の三月は何をした？", "2025-03-01", "2025-03-31"),
        ("一月から三月まで", "2026-01-01", "2026-03-31"),
        ("三月我做了什么", "2026-03-01", "2026-03-31"),
        ("2024年十月", "2024-10-01", "2024-10-31"),
    ],
)
def test_months_in_kanji_numerals(question, since, until):
    assert days(question, FRIDAY) == (since, until)


@pytest.mark.parametrize("question", ["十三月", "三日前に"])
def test_kanji_numerals_that_are_no_month_stay_as_they_were(question):
    found = parse_when(question, FRIDAY)
    assert found is None or found.expression == "三日前", found
