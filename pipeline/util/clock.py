"""Time as a dependency: caches, leases and back-off read a `Clock`, so tests move time by hand.

`SYSTEM` is the real clock. Code that expires something (a cache entry, a job lease, a robots.txt
answer) takes a `clock` keyword defaulting to it; tests pass a clock they advance instead of
sleeping until a TTL runs out.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    """Wall-clock time (timezone-aware, UTC) and a monotonic counter in seconds."""

    def now(self) -> datetime:
        """Return the current time in UTC."""
        ...

    def monotonic(self) -> float:
        """Return seconds from an arbitrary start; never goes backwards."""
        ...


class SystemClock:
    """The machine's clock."""

    def now(self) -> datetime:
        """Return the current time in UTC."""
        return datetime.now(UTC)

    def monotonic(self) -> float:
        """Return time.monotonic()."""
        return time.monotonic()


SYSTEM: Clock = SystemClock()
