"""A process that starts while PostgreSQL is down (a restart) does not die warming its caches."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from bots.app.root import App
from bots.settings import Settings
from storage.tx import DatabaseUnavailableError
from tests.support.postgres import PostgresServer


def test_start_rides_out_a_database_that_went_away(
    tmp_path: Path,
    embedder: Any,
    postgres_server: PostgresServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = postgres_server.migrated_database()
    app = App(Settings(data_dir=tmp_path / "data", database_url=SecretStr(url)), embedder=embedder)
    _ = app.store  # opened (and migrated) while the server runs
    postgres_server.stop()  # every connection is cut
    try:
        with caplog.at_level(logging.WARNING, logger="bots.app.root"):
            asyncio.run(app.start())  # the reuse index cannot load: said, not fatal
        assert "reuse index not warmed" in caplog.text
        with pytest.raises(DatabaseUnavailableError):
            app.store.jobs.counts()  # the database really was unreachable
    finally:
        postgres_server.start()
    assert isinstance(app.store.jobs.counts(), dict)  # and is used again once it is back
    app.close()
