"""Queue settings: saq's backend is PostgreSQL, and a wrong URL says what works."""

from __future__ import annotations

import pytest

from bots.settings import load_settings
from pipeline.errors import ConfigError


def test_a_redis_backend_is_refused_saying_what_works_and_never_echoing_the_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FACTBOT_DATABASE_URL", "postgresql://factbot@db.example/factbot")
    monkeypatch.setenv("FACTBOT_QUEUE__ENGINE", "saq")
    monkeypatch.setenv("FACTBOT_QUEUE__URL", "redis://:hunter2@cache.example:6379/0")
    with pytest.raises(ConfigError) as raised:
        load_settings()
    message = str(raised.value)
    assert "FACTBOT_QUEUE__URL must be a postgresql://… URL (it is redis://…)" in message
    assert "unset it" in message
    assert "hunter2" not in message and "cache.example" not in message


def test_a_postgresql_backend_or_none_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTBOT_DATABASE_URL", "postgresql://factbot@db.example/factbot")
    monkeypatch.setenv("FACTBOT_QUEUE__ENGINE", "saq")
    assert load_settings().queue_url == "postgresql://factbot@db.example/factbot"
    monkeypatch.setenv("FACTBOT_QUEUE__URL", "postgres://saq@queue.example/saq")
    assert load_settings().queue_url == "postgres://saq@queue.example/saq"
