"""Slack installations and OAuth states round-trip through factbot's database."""

from __future__ import annotations

from datetime import timedelta

from slack_sdk.oauth.installation_store import Installation

from bots.platforms.slack._installs import SlackInstallationStore, SlackStateStore
from storage import Store
from storage.slack_installs import SlackInstallRepo
from tests.support.clock import FakeClock


def _installation(team: str, token: str, user: str = "U1") -> Installation:
    return Installation(
        app_id="A1",
        team_id=team,
        team_name=f"Team {team}",
        bot_token=token,
        bot_id=f"B{team}",
        bot_user_id=f"UB{team}",
        bot_scopes="app_mentions:read,chat:write",
        user_id=user,
        installed_at=1_700_000_000.0,
    )


async def test_installations_are_found_by_team_and_user_and_deleted(store: Store) -> None:
    installs = SlackInstallationStore(SlackInstallRepo(store.db))
    await installs.async_save(_installation("T1", "xoxb-1"))
    await installs.async_save(_installation("T2", "xoxb-2", user="U7"))
    found = await installs.async_find_installation(enterprise_id=None, team_id="T2")
    assert found is not None and found.bot_token == "xoxb-2" and found.user_id == "U7"
    assert found.bot_scopes == ["app_mentions:read", "chat:write"]
    by_user = await installs.async_find_installation(enterprise_id=None, team_id="T2", user_id="U7")
    assert by_user is not None and by_user.team_name == "Team T2"
    bot = await installs.async_find_bot(enterprise_id=None, team_id="T1")
    assert bot is not None and bot.bot_token == "xoxb-1" and bot.bot_user_id == "UBT1"
    assert await installs.bot_token("T9") is None
    # A reinstall replaces the token.
    await installs.async_save(_installation("T1", "xoxb-1b"))
    assert await installs.bot_token("T1") == "xoxb-1b"
    await installs.async_delete_all(enterprise_id=None, team_id="T1")
    assert await installs.bot_token("T1") is None
    assert await installs.bot_token("T2") == "xoxb-2"


async def test_a_state_is_consumed_once_and_expires(store: Store) -> None:
    clock = FakeClock()
    states = SlackStateStore(SlackInstallRepo(store.db, clock=clock), ttl=timedelta(minutes=10))
    first, second = await states.async_issue(), await states.async_issue()
    assert first != second
    assert await states.async_consume(first)
    assert not await states.async_consume(first)
    assert not await states.async_consume("never-issued")
    clock.advance(601)
    assert not await states.async_consume(second)
