"""Settings of the proactive monitor (`bots.runtime.monitor`): ``FACTBOT_MONITOR__*``.

The monitor reads the platforms' candidate sources on a schedule, scores each post it finds,
checks the best ones within budgets of checks and money, and routes each result by the
posting policy. What the sources read (watched channels, queries) are the platforms' own
settings; the channel lists for Slack and Discord are here, since the monitor is their only
reader. See docs/monitor.md.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator


class MonitorSettings(BaseModel):
    """The proactive monitor: schedule, score, budgets and posting policy."""

    enabled: bool = Field(
        default=False, description="run the monitor (`factbot monitor`, `factbot serve --monitor`)"
    )
    interval_seconds: float = Field(
        default=300.0, ge=10, description="how often each source is scanned"
    )
    misfire_grace_seconds: float = Field(
        default=120.0,
        gt=0,
        description="a scan that could not start on time still starts this late; later, it is "
        "skipped (runs missed meanwhile are coalesced into one)",
    )
    lease_seconds: float = Field(
        default=60.0,
        ge=5,
        description="the scheduler lease: a standby process takes over this long after the "
        "active one stopped renewing it (renewed every third of it)",
    )
    batch_size: int = Field(
        default=100, ge=1, le=1000, description="posts read from one source per scan"
    )
    threshold: float = Field(
        default=0.45,
        ge=0,
        le=1,
        description="check-worthiness score (0-1) at or above which a candidate is checked",
    )
    topics: list[str] = Field(
        default_factory=list,
        description="topic words (case-insensitive; a hashtag or a word of the post matches): a "
        "candidate on one of them scores higher",
    )
    reach_scale: int = Field(
        default=100_000,
        ge=1,
        description="followers at which the reach part of the score is full (log-scaled)",
    )
    engagement_scale: int = Field(
        default=1_000,
        ge=1,
        description="likes + reposts + replies at which the engagement part is full (log-scaled)",
    )
    checks_per_hour: int = Field(
        default=20, ge=0, description="checks the monitor may start per hour (0: none)"
    )
    checks_per_day: int = Field(
        default=200, ge=0, description="checks the monitor may start per UTC day (0: none)"
    )
    usd_per_day: float = Field(
        default=2.0,
        ge=0,
        description="money the monitor's checks may cost per UTC day: finished checks count "
        "at their recorded cost, running ones at usd_per_check",
    )
    usd_per_check: float = Field(
        default=0.01, ge=0, description="the estimated cost of one check, until it is recorded"
    )
    auto_reply: list[str] = Field(
        default_factory=list,
        description="where the monitor may reply on its own (`platform` or "
        "`platform:channel_id`, e.g. `slack:C0123`); everywhere else results go to review",
    )
    author_max_per_day: int = Field(
        default=1,
        ge=0,
        description="answers (replies, notes, review proposals) to one author per 24 hours",
    )
    slack_channels: list[str] = Field(
        default_factory=list,
        description="Slack channels watched as sources (`channel_id` or `team_id:channel_id`; "
        "the bot must be a member and have channels:history)",
    )
    discord_channels: list[str] = Field(
        default_factory=list,
        description="Discord channels watched as sources (channel ids; needs the "
        "message-content intent and Read Message History)",
    )

    @field_validator("auto_reply")
    @classmethod
    def _auto_reply_names_a_platform(cls, value: list[str]) -> list[str]:
        for entry in value:
            if not entry.split(":", 1)[0]:
                raise ValueError(
                    f"{entry!r} names no platform: write `slack`, `mastodon` or "
                    "`slack:C0123` (platform, optionally `:channel_id`)"
                )
        return value

    def auto_reply_allowed(self, platform: str, channel_id: str) -> bool:
        """Return whether the operator let the monitor reply on its own in this channel."""
        return platform in self.auto_reply or f"{platform}:{channel_id}" in self.auto_reply
