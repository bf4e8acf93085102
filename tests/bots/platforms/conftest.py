"""The deployments a platform's end-to-end tests run in.

`deployment` gives the settings groups of one: SQLite (nothing to add), PostgreSQL with
factbot's own queue, or the scaled-out mode, PostgreSQL with the saq queue engine (the API's
process runs the relay and a saq worker). In the saq mode the fixture checks afterwards that
every attempt of every job ran on a saq worker, so a test cannot pass on the builtin queue.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bots.settings.queue import QueueSettings
from storage import Store


@pytest.fixture(params=["sqlite", "postgres", "postgres+saq"])
def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The settings groups of one deployment (module doc)."""
    if request.param == "sqlite":
        yield {}
        return
    url = request.getfixturevalue("postgres_server").migrated_database()
    groups: dict[str, Any] = {"database_url": url}
    if request.param == "postgres+saq":
        groups["queue"] = QueueSettings(engine="saq", relay_seconds=0.05)
    yield groups
    if "queue" in groups:
        with Store.open(tmp_path / "check-runners.db", database_url=url) as store:
            runners = [
                str(e.detail.get("worker"))
                for job in store.jobs.list(limit=1000)
                for e in store.jobs.events(job.id)
                if e.status == "running"
            ]
        assert all("/saq" in r for r in runners), f"attempts outside saq: {runners}"
