"""Discord settings: a bad application id says how to fix it; the token turns the bot on."""

from __future__ import annotations

import pytest

from bots.runtime.platform.contract import configured
from bots.settings import load_settings
from pipeline.errors import ConfigError


def test_a_bad_application_id_says_where_to_find_the_right_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FACTBOT_DISCORD__APPLICATION_ID", "my-bot")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    message = str(caught.value)
    assert "FACTBOT_DISCORD__APPLICATION_ID: " in message
    assert "General Information > Application ID" in message and "'my-bot'" in message


def test_the_token_turns_the_bot_on_and_is_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "discord" not in configured(load_settings())
    monkeypatch.setenv("FACTBOT_DISCORD__TOKEN", "secret-token")
    settings = load_settings()
    assert "discord" in configured(settings)
    assert "secret-token" not in repr(settings.discord)
