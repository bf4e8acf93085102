"""Settings of the Bluesky bot (bots.platforms.bluesky): the account, polling, thread length,
and the places the proactive monitor reads (search queries, watched accounts, hashtags).

Bluesky limits `createSession` to 30 log-ins per 5 minutes per account, so the password is used
only when no stored session can be resumed; use an app password (Settings > Privacy and
security > App passwords), never the account's own password.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr, field_validator


class BlueskySettings(BaseModel):
    """The Bluesky bot; on when a handle and an app password are set."""

    handle: str | None = Field(
        default=None, description="the bot account's handle, e.g. factbot.bsky.social"
    )
    app_password: SecretStr | None = Field(
        default=None,
        description="an app password of the account (Settings > Privacy and security > App "
        "passwords); used only when no stored session can be resumed",
    )
    service_url: str = Field(
        default="https://bsky.social",
        description="the account's PDS or entryway (a stand-in in tests); /xrpc is appended",
    )
    poll_seconds: float = Field(
        default=15.0, gt=0, le=3600, description="seconds between notification polls"
    )
    max_posts: int = Field(
        default=4, ge=1, le=9, description="most posts in one reply thread (300 graphemes each)"
    )
    label_bot: bool = Field(
        default=True,
        description="mark the account as automated (the `bot` self-label on its profile) at start",
    )
    search_queries: list[str] = Field(
        default_factory=list, description="monitor: searchPosts queries read for candidate posts"
    )
    watched_accounts: list[str] = Field(
        default_factory=list, description="monitor: handles or DIDs whose posts are read"
    )
    hashtags: list[str] = Field(
        default_factory=list, description="monitor: hashtags (without #) searched for posts"
    )

    @field_validator("handle")
    @classmethod
    def _handle_has_no_at(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip().removeprefix("@")
        if "." not in value and not value.startswith("did:"):
            raise ValueError(
                "must be a full handle such as factbot.bsky.social (or the account's DID)"
            )
        return value

    @property
    def configured(self) -> bool:
        """Return whether the bot can start."""
        return self.handle is not None and self.app_password is not None

    def problem(self) -> str | None:
        """Return what is missing for the bot to start, saying how to fix it, or None."""
        if self.handle is not None and self.app_password is None:
            return (
                "FACTBOT_BLUESKY__HANDLE is set but FACTBOT_BLUESKY__APP_PASSWORD is not: create "
                "an app password in Bluesky (Settings > Privacy and security > App passwords)"
            )
        if self.app_password is not None and self.handle is None:
            return (
                "FACTBOT_BLUESKY__APP_PASSWORD is set but FACTBOT_BLUESKY__HANDLE is not: set it "
                "to the bot account's handle, e.g. factbot.bsky.social"
            )
        return None
