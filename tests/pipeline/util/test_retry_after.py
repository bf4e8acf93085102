"""The one Retry-After reader: seconds, HTTP-dates, milliseconds and rate-limit resets."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from pipeline.util.retry_after import (
    parse_duration,
    parse_milliseconds,
    parse_retry_after,
    retry_after,
)

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("3", 3.0), ("1.5", 1.5), (" 7 ", 7.0), ("0", 0.0), ("120", 120.0)],
)
def test_delay_seconds(value: str, seconds: float) -> None:
    assert parse_retry_after(value) == seconds


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("Fri, 01 May 2026 12:00:30 GMT", 30.0),  # IMF-fixdate, the preferred form
        ("Friday, 01-May-26 12:01:00 GMT", 60.0),  # RFC 850, obsolete but still to be read
        ("Fri May  1 12:00:05 2026", 5.0),  # asctime, no zone: GMT
        ("Fri, 01 May 2026 11:00:00 GMT", 0.0),  # in the past: go now
    ],
)
def test_http_dates(value: str, seconds: float) -> None:
    assert parse_retry_after(value, now=NOW) == seconds


@pytest.mark.parametrize(
    "value", [None, "", "  ", "-1", "-0.5", "soon", "1e3", "inf", "nan", "3 s", "0x10", "1,5"]
)
def test_negative_or_garbage_is_no_answer(value: str | None) -> None:
    assert parse_retry_after(value, now=NOW) is None


def test_milliseconds() -> None:
    assert parse_milliseconds("1500") == 1.5
    assert parse_milliseconds("250.5") == pytest.approx(0.2505)
    assert parse_milliseconds("-1") is None and parse_milliseconds("soon") is None
    assert parse_milliseconds(None) is None


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("20ms", 0.02), ("1.5s", 1.5), ("6m0s", 360.0), ("1h2m3s", 3723.0), ("2m", 120.0)],
)
def test_durations(value: str, seconds: float) -> None:
    assert parse_duration(value) == pytest.approx(seconds)


@pytest.mark.parametrize("value", [None, "", "5", "s", "-1s", "1d", "1s garbage"])
def test_bad_durations(value: str | None) -> None:
    assert parse_duration(value) is None


def test_milliseconds_win_over_seconds_and_names_are_case_insensitive() -> None:
    headers = httpx.Headers({"Retry-After": "9", "Retry-After-Ms": "1500"})
    assert retry_after(headers) == 1.5
    assert retry_after({"RETRY-AFTER": "2"}) == 2.0
    # an unreadable millisecond value falls back to the next form
    assert retry_after({"retry-after-ms": "soon", "retry-after": "4"}) == 4.0


def test_a_date_is_read_against_now() -> None:
    assert retry_after({"retry-after": "Fri, 01 May 2026 12:00:10 GMT"}, now=NOW) == 10.0


def test_rate_limit_resets_are_the_last_resort() -> None:
    both = {"x-ratelimit-reset-requests": "6m0s", "x-ratelimit-reset-tokens": "20ms"}
    assert retry_after(both) == 360.0  # no word on which ran out: wait for both
    tokens_out = {
        **both,
        "x-ratelimit-remaining-tokens": "0",
        "x-ratelimit-remaining-requests": "9",
    }
    assert retry_after(tokens_out) == pytest.approx(0.02)
    assert retry_after({**both, "retry-after": "1"}) == 1.0
    # Brave's "X-RateLimit-Reset: 1, 1419704" (per-second, per-month) names no single wait
    assert retry_after({"x-ratelimit-reset": "1, 1419704"}) is None


def test_no_header_is_no_answer() -> None:
    assert retry_after({}) is None
    assert retry_after({"retry-after": "later"}) is None
