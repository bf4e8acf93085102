"""Bolt's installation and OAuth-state store interfaces over factbot's database.

`storage.slack_installs` keeps plain JSON rows; this module turns them into slack_sdk's
`Installation` / `Bot` objects and back, so Bolt's OAuth flow (multi-workspace mode) saves
installs in factbot's database and the sender finds a workspace's bot token by team id.
The repository is synchronous; its calls run in a thread (`asyncio.to_thread`), off the event
loop, since the sender asks for a bot token on every event. Tokens are stored as Slack gives
them and never logged.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from datetime import timedelta
from typing import Any

from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

from storage.slack_installs import SlackInstallRepo

log = logging.getLogger(__name__)
STATE_TTL = timedelta(minutes=10)


def _json_ready(data: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in data.items()}


class SlackInstallationStore(AsyncInstallationStore):
    """Installations of factbot in Slack workspaces, in factbot's database."""

    def __init__(self, repo: SlackInstallRepo) -> None:
        self.repo = repo

    @property
    def logger(self) -> logging.Logger:
        """Return the store's logger."""
        return log

    async def async_save(self, installation: Installation) -> None:
        """Store an installation: the workspace's row and the installing user's row."""
        data = _json_ready(installation.to_dict_for_copying())
        data["custom_values"] = installation.custom_values
        keys = {"enterprise_id": installation.enterprise_id, "team_id": installation.team_id}
        await asyncio.to_thread(
            self.repo.save, **keys, user_id=None, data=data
        )  # the workspace's latest install
        if installation.user_id:
            await asyncio.to_thread(self.repo.save, **keys, user_id=installation.user_id, data=data)
        log.info(
            "slack workspace installed",
            extra={"team_id": installation.team_id, "enterprise_id": installation.enterprise_id},
        )

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        """Return the installation for the ids (the workspace's latest when no user)."""
        team = None if is_enterprise_install else team_id
        data = await asyncio.to_thread(
            self.repo.find, enterprise_id=enterprise_id, team_id=team, user_id=user_id or ""
        )
        return None if data is None else Installation(**data)

    async def async_find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        """Return the bot installed in the workspace, or None."""
        found = await self.async_find_installation(
            enterprise_id=enterprise_id,
            team_id=team_id,
            is_enterprise_install=is_enterprise_install,
        )
        if found is None or not found.bot_token:
            return None
        return found.to_bot()

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        """Forget the workspace's installations (the bot token lives in them)."""
        await asyncio.to_thread(self.repo.delete, enterprise_id=enterprise_id, team_id=team_id)

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        """Forget the installations matching the ids."""
        await asyncio.to_thread(
            self.repo.delete, enterprise_id=enterprise_id, team_id=team_id, user_id=user_id
        )

    async def bot_token(self, team_id: str) -> str | None:
        """Return the bot token of a workspace, or None when factbot is not installed there."""
        bot = await self.async_find_bot(enterprise_id=None, team_id=team_id)
        return None if bot is None else bot.bot_token


class SlackStateStore(AsyncOAuthStateStore):
    """OAuth state values in factbot's database: issued by the install page, used once."""

    def __init__(self, repo: SlackInstallRepo, *, ttl: timedelta = STATE_TTL) -> None:
        self.repo = repo
        self.ttl = ttl

    @property
    def logger(self) -> logging.Logger:
        """Return the store's logger."""
        return log

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        """Return a new state value, remembered until it expires."""
        state = secrets.token_urlsafe(24)
        await asyncio.to_thread(self.repo.issue_state, state, ttl=self.ttl)
        return state

    async def async_consume(self, state: str) -> bool:
        """Return whether state is one issued and not yet used or expired."""
        return await asyncio.to_thread(self.repo.consume_state, state)
