"""Settings of the Mastodon bot (bots.platforms.mastodon): the instance and token, polling, the
visibility of public replies, thread length, and the monitor's hashtags, accounts and trends.

The token is an application's access token (Preferences > Development > New application) with
the scopes `read:notifications read:statuses read:accounts write:statuses`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator


class MastodonSettings(BaseModel):
    """The Mastodon bot; on when an instance URL and an access token are set."""

    api_base_url: str | None = Field(
        default=None, description="the bot account's instance, e.g. https://mastodon.social"
    )
    access_token: SecretStr | None = Field(
        default=None,
        description="the application's access token (Preferences > Development > your app)",
    )
    poll_seconds: float = Field(
        default=15.0, gt=0, le=3600, description="seconds between notification polls"
    )
    public_replies: Literal["public", "unlisted"] = Field(
        default="public",
        description="visibility of a reply to a public post (unlisted keeps it off public "
        "timelines); replies to unlisted, followers-only or direct posts keep theirs",
    )
    max_posts: int = Field(default=3, ge=1, le=9, description="most posts in one reply thread")
    max_characters: int | None = Field(
        default=None,
        ge=100,
        description="characters per post (unset: read from the instance, 500 if it says nothing)",
    )
    request_timeout: float = Field(
        default=30.0, gt=0, le=300, description="seconds one API request may take"
    )
    hashtags: list[str] = Field(
        default_factory=list, description="monitor: hashtag timelines read (without #)"
    )
    watched_accounts: list[str] = Field(
        default_factory=list,
        description="monitor: accounts (user@instance) whose statuses are read",
    )
    trending: bool = Field(
        default=False, description="monitor: read the instance's trending statuses"
    )

    @field_validator("api_base_url")
    @classmethod
    def _is_a_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.startswith(("https://", "http://")):
            raise ValueError("must be the instance's URL, e.g. https://mastodon.social")
        return value.rstrip("/")

    @property
    def configured(self) -> bool:
        """Return whether the bot can start."""
        return self.api_base_url is not None and self.access_token is not None

    def problem(self) -> str | None:
        """Return what is missing for the bot to start, saying how to fix it, or None."""
        if self.api_base_url is not None and self.access_token is None:
            return (
                "FACTBOT_MASTODON__API_BASE_URL is set but FACTBOT_MASTODON__ACCESS_TOKEN is not: "
                "create an application (Preferences > Development > New application) with the "
                "scopes read:notifications read:statuses read:accounts write:statuses and copy "
                "its access token"
            )
        if self.access_token is not None and self.api_base_url is None:
            return (
                "FACTBOT_MASTODON__ACCESS_TOKEN is set but FACTBOT_MASTODON__API_BASE_URL is not: "
                "set it to the bot account's instance, e.g. https://mastodon.social"
            )
        return None
