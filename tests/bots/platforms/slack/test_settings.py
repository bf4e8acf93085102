"""Slack settings say exactly which secret is missing, and never echo a token."""

from __future__ import annotations

import pytest

from bots.settings import load_settings
from pipeline.errors import ConfigError


def test_http_mode_without_a_signing_secret_says_how_to_fix_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FACTBOT_SLACK__BOT_TOKEN", "xoxb-very-secret")
    with pytest.raises(ConfigError) as raised:
        load_settings()
    message = str(raised.value)
    assert "FACTBOT_SLACK__SIGNING_SECRET is not set" in message
    assert "Signing Secret" in message and "FACTBOT_SLACK__APP_TOKEN" in message
    assert "xoxb-very-secret" not in message


def test_an_oauth_client_needs_its_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTBOT_SLACK__CLIENT_ID", "1.2")
    monkeypatch.setenv("FACTBOT_SLACK__SIGNING_SECRET", "s")
    with pytest.raises(ConfigError, match="FACTBOT_SLACK__CLIENT_SECRET is not"):
        load_settings()


def test_socket_mode_needs_no_signing_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTBOT_SLACK__BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("FACTBOT_SLACK__APP_TOKEN", "xapp-1")
    settings = load_settings()
    assert settings.slack.configured and settings.slack.signing_secret is None
