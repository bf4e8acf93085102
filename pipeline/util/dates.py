"""Dates as the web writes them, read into aware UTC datetimes: one parser, on `dateparser`.

Pages, feeds, sitemaps, search providers and ingest records give dates in many shapes: ISO 8601
with or without an offset (none is read as UTC), RFC 822 (feeds), "Mar 3, 2024" (snippets),
"03-04-2024" (day first when written with dashes, as in Europe; "3/4/2024" stays month first)
and relative ages ("3 hours ago"). The rules that keep a date from being a guess:

- a date needs its day, month and year (dateparser's `STRICT_PARSING`): "March 3" is no date,
  because filling the year (or day) from today would invent one;
- relative ages are read only against a given `now`, and only in minutes, hours, days or weeks
  ("today", "yesterday", "just now" too): "N months/years ago" can be weeks off and would
  defeat the before-the-post filter they exist for.

ISO 8601 and RFC 822, nearly every feed and sitemap date, are read by the standard library
first: dateparser takes milliseconds a date, and a sitemap can list fifty thousand.
"""

from __future__ import annotations

import email.utils
import re
from datetime import UTC, datetime
from typing import Any

import dateparser

_RELATIVE = re.compile(
    r"^(?:(?:an?|\d+)\s+(?:second|minute|min|hour|day|week)s?\s+ago|just now|today|yesterday)$",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
_DAY_FIRST = re.compile(r"^\d{1,2}-\d{1,2}-\d{4}$")
_SETTINGS: dict[str, Any] = {
    "STRICT_PARSING": True,
    "TIMEZONE": "UTC",
    "TO_TIMEZONE": "UTC",
    "RETURN_AS_TIMEZONE_AWARE": True,
}


def to_utc(value: datetime) -> datetime:
    """Return value as an aware UTC datetime (naive values are taken to be UTC)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def parse_date(value: object, *, now: datetime | None = None) -> datetime | None:
    """Parse a written date to aware UTC, or None when absent, partial or not a date.

    Relative ages ("2 days ago") are read against `now` and only when it is given.
    """
    if not isinstance(value, str) or not value.strip():
        return None
    text = " ".join(value.split())
    standard = _standard(text)
    if standard is not None:
        return standard
    settings = dict(_SETTINGS)
    if _RELATIVE.match(text):
        if now is None:
            return None
        settings["RELATIVE_BASE"] = to_utc(now).replace(tzinfo=None)
    elif not _YEAR.search(text):
        return None  # no year: "3 months ago", "last week", "March 3" would all be guesses
    if _DAY_FIRST.match(text):
        settings["DATE_ORDER"] = "DMY"
    try:
        parsed = dateparser.parse(text, languages=["en"], settings=settings)
    except (ValueError, OverflowError):
        return None
    return None if parsed is None else to_utc(parsed)


def _standard(text: str) -> datetime | None:
    """Return an ISO 8601 or RFC 822 timestamp in UTC, or None when text is neither."""
    try:
        return to_utc(datetime.fromisoformat(text))
    except ValueError:
        pass
    try:
        return to_utc(email.utils.parsedate_to_datetime(text))
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
