"""Slack installations and OAuth states (multi-workspace mode), kept in factbot's database.

Each workspace that installs factbot through Slack's OAuth flow leaves one row: the
installation as Slack gave it (JSON, bot token included, because the bot cannot post without
it), keyed the way Bolt looks installations up: enterprise, team and installing user ("" when
absent). Nothing here knows Slack's library; `bots.platforms.slack` translates to it. Tokens
are stored, never logged.

OAuth state values are issued when the install page is shown and consumed once when Slack
redirects back; an expired or unknown state is refused (it is what stops forged redirects).
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from sqlite_utils import Database

from pipeline.util.clock import SYSTEM, Clock
from storage.codec import dt_out
from storage.tx import immediate


class SlackInstallRepo:
    """Save, find and delete Slack installations; issue and consume OAuth states."""

    def __init__(self, db: Database, *, clock: Clock = SYSTEM) -> None:
        self.db = db
        self.clock = clock

    def save(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None, data: Any
    ) -> None:
        """Store an installation (replacing the one with the same keys)."""
        now = dt_out(self.clock.now())
        with immediate(self.db):
            self.db.execute(
                "INSERT INTO slack_installations (enterprise_id, team_id, user_id, data, "
                "installed_at) VALUES (?,?,?,?,?) ON CONFLICT(enterprise_id, team_id, user_id) "
                "DO UPDATE SET data = excluded.data, installed_at = excluded.installed_at",
                [enterprise_id or "", team_id or "", user_id or "", json.dumps(data), now],
            )

    def find(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> Any | None:
        """Return the installation data for the keys (the latest of a team when no user)."""
        sql = "SELECT data FROM slack_installations WHERE enterprise_id = ? AND team_id = ?"
        args = [enterprise_id or "", team_id or ""]
        if user_id is not None:
            sql += " AND user_id = ?"
            args.append(user_id)
        row = self.db.execute(sql + " ORDER BY installed_at DESC LIMIT 1", args).fetchone()
        return None if row is None else json.loads(row[0])

    def delete(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> int:
        """Delete the installations matching the keys (all of a team when no user); count them."""
        sql = "DELETE FROM slack_installations WHERE enterprise_id = ? AND team_id = ?"
        args = [enterprise_id or "", team_id or ""]
        if user_id is not None:
            sql += " AND user_id = ?"
            args.append(user_id)
        with immediate(self.db):
            return int(self.db.execute(sql, args).rowcount)

    def issue_state(self, state: str, *, ttl: timedelta) -> None:
        """Remember an OAuth state value until ttl from now."""
        expires = dt_out(self.clock.now() + ttl)
        with immediate(self.db):
            self.db.execute(
                "INSERT INTO slack_oauth_states (state, expires_at) VALUES (?,?)", [state, expires]
            )

    def consume_state(self, state: str) -> bool:
        """Return whether state was issued and has not expired; it can be consumed only once."""
        now = self.clock.now()
        with immediate(self.db):
            self.db.execute("DELETE FROM slack_oauth_states WHERE expires_at < ?", [dt_out(now)])
            deleted = self.db.execute("DELETE FROM slack_oauth_states WHERE state = ?", [state])
            return int(deleted.rowcount) == 1
