"""Every storage test runs on both engines: SQLite (the default) and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pipeline.clock import SYSTEM, Clock
from storage import Store


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str | None:
    """None for SQLite alone; else a fresh, migrated PostgreSQL database of the session server."""
    if request.param == "sqlite":
        return None
    server = request.getfixturevalue("postgres_server")
    return str(server.migrated_database())


@pytest.fixture
def open_store(database_url: str | None) -> Callable[..., Store]:
    """Open a store on this test's engine (path: the node's own SQLite file)."""

    def open_(path: Path | str, *, clock: Clock = SYSTEM) -> Store:
        return Store.open(path, clock=clock, database_url=database_url)

    return open_


@pytest.fixture
def store(tmp_path: Path, open_store: Callable[..., Store]) -> Iterator[Store]:
    """A fresh store on this test's engine."""
    with open_store(tmp_path / "factbot.db") as opened:
        yield opened
