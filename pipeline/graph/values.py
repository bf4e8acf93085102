"""Dates and numbers read into comparable values, and when two of them cannot both be true.

Dates form a hierarchy: a year holds its months, a month its days; every date is read as the
interval it names (`DateSpan`: "2012" is 2012-01-01..2012-12-31, "March 2012" that month, "3 March
2012" one day, "2019-2021" or "the 1990s" a range). Relative dates ("yesterday", "last week",
"last Tuesday", "two years ago", "this month") are resolved against a reference time, the post's
own when it is known. Two dates conflict when their intervals are disjoint: "2012" and "March
2012" agree, "2012" and "2024" do not.

Numbers carry their unit (the noun they count, or a unit word) and scale ("5k", "3.5 million",
"two dozen"); hedges widen them ("about", "more than", "at least", "under"). Two numbers conflict
when their units agree (or one has none) and their ranges are far apart: 5,000 vs 50 people.

Failure policy: never raises; text that is not a date or a number reads as None.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

MONTHS = {name.lower(): n for n, name in enumerate(calendar.month_name) if name}
MONTHS |= {name.lower(): n for n, name in enumerate(calendar.month_abbr) if name}
MONTHS["sept"] = 9
WEEKDAYS = {name.lower(): n for n, name in enumerate(calendar.day_name)}
_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "hundred": 100, "dozen": 12, "several": 3,
}  # fmt: skip
_SCALE = {
    "k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9,
    "billion": 1e9, "trillion": 1e12, "tn": 1e12, "hundred": 100, "dozen": 12, "lakh": 1e5,
    "crore": 1e7,
}  # fmt: skip
_UNIT_WORDS = {
    "%": "percent", "percent": "percent", "per cent": "percent", "$": "usd", "usd": "usd",
    "dollars": "usd", "dollar": "usd", "€": "eur", "euros": "eur", "euro": "eur", "£": "gbp",
    "pounds": "gbp", "km": "km", "kilometres": "km", "kilometers": "km", "miles": "mile",
    "mile": "mile", "kg": "kg", "kilograms": "kg", "tonnes": "tonne", "tons": "tonne",
    "degrees": "degree", "°c": "degree", "°f": "fahrenheit", "years": "year", "year": "year",
    "days": "day", "hours": "hour", "metres": "m", "meters": "m",
}  # fmt: skip
_NUMBER = re.compile(r"(\d+(?:[.,]\d+)*)")
_DECADE = re.compile(r"\b(1[5-9]|20)(\d)0s\b")
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_SLASHED = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
_AGO = re.compile(r"\b(\w+)\s+(day|week|month|year)s?\s+ago\b")
_RELATIVE = re.compile(r"\b(last|this|next|past)\s+(day|week|month|year|weekend)\b")
_REL_WEEKDAY = re.compile(r"\b(last|this|next|on)?\s*(" + "|".join(WEEKDAYS) + r")\b")
_LOWER = re.compile(r"\b(?:more than|over|at least|above|exceeding|upwards of)\b")
_UPPER = re.compile(r"\b(?:less than|fewer than|under|at most|below|up to|nearly|almost)\b")
_ABOUT = re.compile(r"\b(?:about|around|roughly|approximately|some|nearly|almost|estimated|~)\b")


@dataclass(frozen=True)
class DateSpan:
    """The interval a date names, and how fine it is ("year", "month", "day", "range")."""

    start: date
    end: date
    grain: str

    def conflicts(self, other: DateSpan) -> bool:
        """Return whether no day lies in both intervals."""
        return self.end < other.start or other.end < self.start

    def __str__(self) -> str:
        if self.grain == "year":
            return str(self.start.year)
        if self.grain == "month":
            return f"{calendar.month_name[self.start.month]} {self.start.year}"
        if self.grain == "day":
            return self.start.isoformat()
        return f"{self.start.isoformat()}..{self.end.isoformat()}"


@dataclass(frozen=True)
class Quantity:
    """A number with its unit, as the range of values its wording allows."""

    low: float
    high: float
    unit: str  # normalised unit or counted noun lemma; "" when none

    def conflicts(self, other: Quantity, *, tolerance: float = 0.1) -> bool:
        """Return whether the units agree and the ranges lie apart by more than tolerance."""
        if self.unit and other.unit and self.unit != other.unit:
            return False
        low, high = max(self.low, other.low), min(self.high, other.high)
        if low <= high:
            return False
        return (low - high) > tolerance * max(abs(low), abs(high), 1e-9)


def _month_span(year: int, month: int) -> DateSpan:
    last = calendar.monthrange(year, month)[1]
    return DateSpan(date(year, month, 1), date(year, month, last), "month")


def _day(value: date) -> DateSpan:
    return DateSpan(value, value, "day")


def parse_date(text: str, reference: datetime | None = None) -> DateSpan | None:
    """Return the interval a date expression names; relative ones need a reference time."""
    low = " ".join(text.lower().replace(",", " ").split())
    if m := _ISO.search(low):
        return _safe(lambda: _day(date(int(m[1]), int(m[2]), int(m[3]))))
    if m := _SLASHED.search(low):  # day/month/year is ambiguous: take the month as a range
        return _safe(lambda: DateSpan(date(int(m[3]), 1, 1), date(int(m[3]), 12, 31), "year"))
    if m := _DECADE.search(low):
        first = int(m[1] + m[2] + "0")
        return DateSpan(date(first, 1, 1), date(first + 9, 12, 31), "range")
    years = [int(y) for y in _YEAR.findall(low)]
    month = next((MONTHS[w] for w in re.findall(r"[a-z]+", low) if w in MONTHS), None)
    if month == 5 and "may" in low.split() and not years:  # "may" is also a verb
        month = None
    if years:
        if len(years) >= 2 and years[1] > years[0]:
            return DateSpan(date(years[0], 1, 1), date(years[1], 12, 31), "range")
        year = years[0]
        if month is None:
            return DateSpan(date(year, 1, 1), date(year, 12, 31), "year")
        day = _day_of_month(low, year)
        if day is not None:
            return _safe(lambda: _day(date(year, month, day)))
        return _month_span(year, month)
    if reference is None:
        return None
    return _relative(low, reference.date(), month)


def _day_of_month(text: str, year: int) -> int | None:
    for number in re.findall(r"\b(\d{1,2})(?:st|nd|rd|th)?\b", text):
        if 1 <= int(number) <= 31 and int(number) != year:
            return int(number)
    return None


def _relative(low: str, today: date, month: int | None) -> DateSpan | None:
    if low in ("today", "tonight", "this morning", "this evening"):
        return _day(today)
    if low in ("yesterday", "last night"):
        return _day(today - timedelta(days=1))
    if low == "tomorrow":
        return _day(today + timedelta(days=1))
    if m := _AGO.search(low):
        count = _WORDS.get(m[1]) or (int(m[1]) if m[1].isdigit() else None)
        if count is None:
            return None
        days = {"day": 1, "week": 7, "month": 30, "year": 365}[m[2]] * count
        when = today - timedelta(days=days)
        slack = max(1, days // 10)  # "two years ago" is loose
        return DateSpan(when - timedelta(days=slack), when + timedelta(days=slack), "range")
    if m := _RELATIVE.search(low):
        shift = {"last": -1, "past": -1, "this": 0, "next": 1}[m[1]]
        unit = m[2]
        if unit == "year":
            year = today.year + shift
            return DateSpan(date(year, 1, 1), date(year, 12, 31), "year")
        if unit == "month":
            first = (today.replace(day=1) + timedelta(days=32 * shift)).replace(day=1)
            if shift < 0:
                first = (today.replace(day=1) - timedelta(days=1)).replace(day=1)
            return _month_span(first.year, first.month)
        if unit in ("week", "weekend"):
            monday = today - timedelta(days=today.weekday()) + timedelta(weeks=shift)
            return DateSpan(monday, monday + timedelta(days=6), "range")
        return _day(today + timedelta(days=shift))
    if m := _REL_WEEKDAY.search(low):
        target = WEEKDAYS[m[2]]
        back = (today.weekday() - target) % 7 or (7 if m[1] == "last" else 0)
        if m[1] == "next":
            return _day(today + timedelta(days=(target - today.weekday()) % 7 or 7))
        return _day(today - timedelta(days=back))
    if month is not None:  # "in March": the last March up to the reference
        year = today.year if month <= today.month else today.year - 1
        return _month_span(year, month)
    return None


def _safe(make: object) -> DateSpan | None:
    try:
        return make()  # type: ignore[operator, no-any-return]
    except ValueError:
        return None


def parse_quantity(text: str, unit: str = "") -> Quantity | None:
    """Return a number expression as a range with its unit; unit is the counted noun if any."""
    low = " ".join(text.lower().split())
    value: float | None = None
    m = _NUMBER.search(low)
    if m:
        digits = m[1]
        digits = digits.replace(",", "")  # thousands; a decimal comma is rare in English news
        try:
            value = float(digits)
        except ValueError:
            return None
        tail = low[m.end() :].strip()
    else:
        words = re.findall(r"[a-z]+", low)
        numbers = [w for w in words if w in _WORDS]
        if not numbers:
            return None
        value, tail = float(_WORDS[numbers[0]]), " ".join(words[words.index(numbers[0]) + 1 :])
    scale_word = re.match(r"([a-z]+)", tail)
    if scale_word and scale_word[1] in _SCALE:
        value *= _SCALE[scale_word[1]]
    elif m and re.match(r"[kmb]n?\b", tail):
        value *= _SCALE[re.match(r"([kmb]n?)", tail)[1]]  # type: ignore[index]
    found = next((u for word, u in _UNIT_WORDS.items() if word in low), "")
    unit = found or unit.lower()
    low_value, high_value = value, value
    if _LOWER.search(low):
        high_value = value * 1.5 if value else 1.0
    elif _UPPER.search(low):
        low_value = value * 0.5
    if _ABOUT.search(low):
        low_value, high_value = min(low_value, value * 0.8), max(high_value, value * 1.2)
    return Quantity(low_value, high_value, unit)
