"""`factbot db status` and `factbot db migrate` on both engines."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bots.cli.main import main
from tests.support.postgres import PostgresServer


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_status_shows_pending_migrations_until_migrate_applies_them(
    tmp_path: Path, engine: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path))
    if engine == "postgres":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        monkeypatch.setenv("FACTBOT_DATABASE_URL", server.fresh_database())
    else:
        monkeypatch.delenv("FACTBOT_DATABASE_URL", raising=False)
    runner = CliRunner()
    before = runner.invoke(main, ["db", "status"], catch_exceptions=False)
    assert before.exit_code == 0, before.output
    assert f"engine: {'postgresql' if engine == 'postgres' else 'sqlite'}" in before.output
    assert "applied: 0" in before.output and "factbot db migrate" in before.output
    migrated = runner.invoke(main, ["db", "migrate"], catch_exceptions=False)
    assert migrated.exit_code == 0, migrated.output
    assert "applied now: " in migrated.output and "nothing" not in migrated.output
    again = runner.invoke(main, ["db", "migrate"], catch_exceptions=False)
    assert "nothing (up to date)" in again.output
    after = runner.invoke(main, ["db", "status"], catch_exceptions=False)
    assert "pending: none" in after.output
    assert "password" not in after.output


def test_status_says_why_it_cannot_reach_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("FACTBOT_DATABASE_URL", "postgresql://factbot@127.0.0.1:1/none")
    result = CliRunner().invoke(main, ["db", "status"])
    assert result.exit_code == 1
    assert "cannot read the database" in result.output
