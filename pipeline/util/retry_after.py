"""How long a busy server asks us to wait: the one reader of Retry-After and its cousins.

Forms read, in this order of trust (the first a response carries wins):

    retry-after-ms: 1500              milliseconds (OpenAI and compatible servers)
    Retry-After: 3  /  Retry-After: 1.5   delay-seconds (RFC 9110 10.2.3; fractions tolerated)
    Retry-After: Wed, 21 Oct 2026 07:28:00 GMT   an HTTP-date; one in the past means 0
    x-ratelimit-reset-requests: 6m0s  when the exhausted limit resets (OpenAI's durations:
    x-ratelimit-reset-tokens: 20ms    "20ms", "1.5s", "6m0s", "1h2m3s")

Negative, infinite or unreadable values are no answer (None): the caller falls back to its own
backoff.
"""

from __future__ import annotations

import email.utils
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime

_SECONDS = re.compile(r"\d+(?:\.\d+)?")
_DURATION = re.compile(r"(?:\d+(?:\.\d+)?(?:ms|h|m|s))+")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
_RESET_KINDS = ("requests", "tokens")


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Return the seconds a Retry-After value asks to wait (delay-seconds or an HTTP-date)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if _SECONDS.fullmatch(text):
        return _finite(float(text))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT, whether or not they say so
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def parse_milliseconds(value: str | None) -> float | None:
    """Return the seconds a millisecond header (retry-after-ms: 1500) asks to wait."""
    if value is None or not _SECONDS.fullmatch(value.strip()):
        return None
    return _finite(float(value.strip()) / 1000.0)


def parse_duration(value: str | None) -> float | None:
    """Return the seconds of a duration such as "6m0s", "1.5s" or "20ms"."""
    text = (value or "").strip()
    if not _DURATION.fullmatch(text):
        return None
    total = sum(float(n) * _UNIT[unit] for n, unit in _DURATION_PART.findall(text))
    return _finite(total)


def retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Return the wait a response's headers ask for, in seconds, or None when they name none."""
    lowered = {name.lower(): value for name, value in headers.items()}
    millis = parse_milliseconds(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis
    seconds = parse_retry_after(lowered.get("retry-after"), now=now)
    if seconds is not None:
        return seconds
    resets = {
        kind: parse_duration(lowered.get(f"x-ratelimit-reset-{kind}")) for kind in _RESET_KINDS
    }
    known = {kind: wait for kind, wait in resets.items() if wait is not None}
    # the limit that ran out is the one to wait for; when none says so, waiting for every
    # reset is the only wait sure to be enough
    spent = [
        wait for kind, wait in known.items() if lowered.get(f"x-ratelimit-remaining-{kind}") == "0"
    ]
    waits = spent or list(known.values())
    return max(waits) if waits else None


def _finite(seconds: float) -> float | None:
    return seconds if math.isfinite(seconds) and seconds >= 0 else None
