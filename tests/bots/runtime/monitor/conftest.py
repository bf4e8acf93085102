"""Shared set-up of the monitor tests: an App over the small corpus with monitor settings."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from apscheduler.triggers.date import DateTrigger

from bots.app.root import App
from bots.runtime.monitor.scheduler import MonitorScheduler
from bots.settings import JobSettings, MonitorSettings, Settings
from pipeline.evidence.ingest import Ingester
from tests.conftest import FIXTURES, fresh_database
from tests.support.clock import FakeClock
from tests.support.jobs import drain

CLAIM = "5G networks spread the coronavirus."


def at_now(source: str) -> DateTrigger:
    """Return a trigger that fires once, now (tests never wait for real intervals)."""
    return DateTrigger(run_date=datetime.now(UTC))


@pytest.fixture
def clock() -> FakeClock:
    """A clock the test moves by hand (leases, slots, budgets)."""
    return FakeClock(datetime(2026, 3, 2, 12, 0, tzinfo=UTC))


@pytest.fixture
def monitor_app(
    tmp_path: Path,
    migrated_database: Path,
    embedder: Any,
    clock: FakeClock,
    deployment: dict[str, Any],
) -> Iterator[Callable[..., App]]:
    """Return a maker of an App with monitor settings (and platform settings) given, in each
    deployment (SQLite; PostgreSQL; PostgreSQL with the saq queue engine)."""
    made: list[App] = []

    def make(monitor: MonitorSettings, **groups: Any) -> App:
        jobs = JobSettings(
            poll_seconds=0.02, heartbeat_seconds=5.0, backoff_initial=0, backoff_max=0
        )
        folder = tmp_path / f"d{len(made)}"
        fresh_database(migrated_database, folder / "factbot.db")
        settings = Settings(data_dir=folder, jobs=jobs, monitor=monitor, **deployment, **groups)
        app = App(settings, embedder=embedder, clock=clock)
        made.append(app)
        return app

    yield make
    for app in made:
        app.close()


async def ingest(app: App) -> None:
    """Index the small corpus (PolitiFact on 5G, Reuters on hydroxychloroquine, ...)."""
    await Ingester(app.store.documents, app.embedder).ingest([str(FIXTURES / "corpus.jsonl")])


def scheduler_for(app: App, holder: str) -> MonitorScheduler:
    """Return a scheduler over app's sources whose jobs fire once, now."""
    return MonitorScheduler(
        app.store,
        app.settings.monitor,
        sorted(app.monitor_sources),
        holder=holder,
        clock=app.clock,
        trigger=at_now,
    )


async def work_until_idle(app: App, seconds: float = 60.0) -> None:
    """Run a worker pool (checks, replies, the monitor's jobs) until no job is left."""
    await drain(app, concurrency=2, seconds=seconds)
