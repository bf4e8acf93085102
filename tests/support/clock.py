"""A clock that tests move by hand, so TTLs and leases expire without sleeping."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class FakeClock:
    """Starts at `start` (default 2026-01-01 UTC); `advance` moves both readings together."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._mono = 1000.0

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    def advance(self, seconds: float) -> None:
        """Move time forward by seconds."""
        self._now += timedelta(seconds=seconds)
        self._mono += seconds
