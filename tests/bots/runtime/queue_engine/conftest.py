"""Fixtures of the queue-engine tests: a migrated PostgreSQL database, saq's settings over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bots.settings import Settings
from tests.support.postgres import PostgresServer


@pytest.fixture
def database(postgres_server: PostgresServer) -> str:
    """A fresh migrated database of the session's PostgreSQL (skipped without its binaries)."""
    return postgres_server.migrated_database()


@pytest.fixture
def saq_settings(database: str, tmp_path: Path) -> Settings:
    """saq on that database, with short leases, heartbeats and sweeps (seconds, not minutes)."""
    return Settings(
        data_dir=tmp_path,
        database_url=database,
        queue={"engine": "saq", "sweep_seconds": 1, "relay_seconds": 0.1},
        jobs={
            "lease_seconds": 2,
            "heartbeat_seconds": 0.5,
            "poll_seconds": 0.05,
            "backoff_initial": 0.5,
            "backoff_max": 1,
            "shutdown_timeout": 1,
        },
    )
