"""`factbot users`: add (password asked twice or read from stdin), list, disable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bots.cli.main import main
from storage import Store


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str, input: str | None = None) -> Result:
        return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)

    return invoke


def test_users_add_list_disable(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    added = run(
        "users", "add", "alice", "--role", "admin", input="a long password\na long password\n"
    )
    assert added.exit_code == 0 and "alice (admin)" in added.output
    piped = run(
        "users", "add", "bob", "--role", "viewer", "--password-stdin", input="bob's password\n"
    )
    assert piped.exit_code == 0
    listed = run("users", "list")
    assert "alice" in listed.output and "viewer" in listed.output and "2 users" in listed.output
    again = run("users", "add", "bob", "--role", "admin", "--password-stdin", input="whatever123\n")
    assert again.exit_code == 2 and "exists" in again.output
    short = run("users", "add", "carol", "--role", "viewer", "--password-stdin", input="short\n")
    assert short.exit_code == 2 and "at least 10" in short.output
    assert run("users", "disable", "bob").exit_code == 0
    assert run("users", "disable", "nobody").exit_code == 1
    with Store.open(tmp_path / "data" / "factbot.db") as store:
        assert store.users.verify("alice", "a long password") is not None
        assert store.users.verify("alice", "a wrong password") is None
        assert store.users.verify("bob", "bob's password") is None  # disabled
        stored = store.db.execute("SELECT password_hash FROM users WHERE name = 'alice'").fetchone()
        assert stored[0].startswith("$argon2id$") and "a long password" not in stored[0]


def test_dashboard_bench_prints_its_figures(run) -> None:  # type: ignore[no-untyped-def]
    result = run("bench", "dashboard", "--checks", "300", "--requests", "3")
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout[result.stdout.index("{") :])
    assert figures["checks"] == 300
    for page in ("list", "list_verdict", "list_search", "list_deep_page", "check"):
        assert figures[page]["p95_ms"] >= figures[page]["p50_ms"] > 0
        assert figures[page]["html_bytes"] > 1000
