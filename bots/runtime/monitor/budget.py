"""The monitor's budgets: checks per hour and per UTC day, money per UTC day.

Money counts every check the monitor started today: at its recorded cost once its route job
has read it from the finished check (the sum of its model usage), at `usd_per_check` (the
estimate) while it runs. A check starts only if the day's money plus one more estimate stays
within `usd_per_day`. The caller holds the write lock (`storage.tx.immediate`) from this
decision to the candidate's insert, so two scans never both take the last slot.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bots.settings import MonitorSettings
from storage.monitor import MonitorRepo


@dataclass(frozen=True)
class Spend:
    """Where the budgets stand now."""

    checks_hour: int
    checks_day: int
    usd_day: float  # recorded costs plus estimates of the checks still running

    def refusal(self, settings: MonitorSettings) -> str | None:
        """Return which budget one more check would break, or None when it fits."""
        if self.checks_hour + 1 > settings.checks_per_hour:
            return "checks per hour"
        if self.checks_day + 1 > settings.checks_per_day:
            return "checks per day"
        if self.usd_day + settings.usd_per_check > settings.usd_per_day + 1e-9:
            return "money per day"
        return None


def day_start(now: datetime) -> datetime:
    """Return the start of now's UTC day."""
    now = now.astimezone(UTC)
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def spend(repo: MonitorRepo, settings: MonitorSettings, now: datetime) -> Spend:
    """Return the checks and money the monitor has used in this hour and this UTC day."""
    today = day_start(now)
    return Spend(
        checks_hour=repo.checks_started(now - timedelta(hours=1)),
        checks_day=repo.checks_started(today),
        usd_day=repo.spent(today, estimate=settings.usd_per_check),
    )
