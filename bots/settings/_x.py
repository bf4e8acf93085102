"""Settings of the X adapter (bots.platforms.x) and its Community Notes writer.

X is on when a user token is set: OAuth 1.0a (all four of consumer key/secret and access
token/secret) or an OAuth 2.0 user access token. Prices are settings because X bills every
post read and written (pay-per-use); links per reply are too (a post with a URL costs most).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator

_OAUTH1 = ("consumer_key", "consumer_secret", "access_token", "access_token_secret")


class XSettings(BaseModel):
    """The X bot: mentions answered as threads, watched sources, Community Notes."""

    consumer_key: SecretStr | None = Field(
        default=None, description="OAuth 1.0a API key (developer portal > your app > Keys)"
    )
    consumer_secret: SecretStr | None = Field(default=None, description="OAuth 1.0a API secret")
    access_token: SecretStr | None = Field(
        default=None, description="OAuth 1.0a access token of the bot account (Read and write)"
    )
    access_token_secret: SecretStr | None = Field(
        default=None, description="OAuth 1.0a access token secret of the bot account"
    )
    bearer_token: SecretStr | None = Field(
        default=None,
        description="an OAuth 2.0 user access token (tweet.read tweet.write users.read), used "
        "when the OAuth 1.0a keys are unset",
    )
    user_id: str | None = Field(
        default=None, description="the bot account's numeric id (unset: read with GET /2/users/me)"
    )
    api_base: str = Field(
        default="https://api.twitter.com",
        description="API base URL (scheme, host, port, optional path prefix); requests go "
        "there with its Host, and OAuth 1.0a signs the URL sent",
    )
    poll_seconds: float = Field(default=60.0, gt=0, description="seconds between mention polls")
    mentions_per_poll: int = Field(
        default=20, ge=5, le=100, description="mentions read per poll (each read is billed)"
    )
    post_chars: int = Field(
        default=280, ge=20, le=25_000, description="characters per post, URLs counted as 23"
    )
    max_posts: int = Field(default=3, ge=1, le=9, description="posts in one reply thread")
    max_links: int = Field(
        default=2,
        ge=1,
        le=10,
        description="reference URLs in one reply (a post with a URL costs more)",
    )
    price_read: float = Field(default=0.005, ge=0, description="US$ per post read")
    price_post: float = Field(default=0.015, ge=0, description="US$ per post created")
    price_post_url: float = Field(default=0.20, ge=0, description="US$ per post with a URL")
    watch_queries: list[str] = Field(
        default_factory=list, description="recent-search queries the monitor reads (JSON list)"
    )
    watch_accounts: list[str] = Field(
        default_factory=list, description="numeric ids of accounts whose posts the monitor reads"
    )
    watch_hashtags: list[str] = Field(
        default_factory=list, description="hashtags (without #) the monitor reads"
    )
    notes_enabled: bool = Field(
        default=False, description="write Community Notes (AI Note Writer API; sign up first)"
    )
    notes_test_mode: bool = Field(
        default=True, description="submit notes with test_mode=true (until X admits the writer)"
    )
    notes_feed_size: Literal["small", "large", "xl", "xxl"] = Field(
        default="small", description="size of the eligible-posts feed read for notes"
    )
    notes_feed_lang: str | None = Field(
        default=None,
        description="language of that feed (ISO 639-1, or 'all'); unset: each language "
        "FACTBOT_LANGUAGES serves, in turn, one a read",
    )
    notes_min_sources: int = Field(
        default=1, ge=1, le=5, description="retrieved source URLs a note must cite"
    )
    notes_status_seconds: float = Field(
        default=21_600,
        ge=300,
        description="how often the monitor's schedule refreshes written notes' rating status "
        "(at least 300 seconds: notes_written counts in X's 90 requests / 15 minutes)",
    )

    @field_validator("user_id")
    @classmethod
    def _numeric_user_id(cls, value: str | None) -> str | None:
        if value is not None and not value.isdigit():
            raise ValueError(
                "must be the bot account's numeric id (GET /2/users/me answers it), or unset"
            )
        return value

    @field_validator("watch_accounts")
    @classmethod
    def _numeric_accounts(cls, value: list[str]) -> list[str]:
        bad = [v for v in value if not v.isdigit()]
        if bad:
            raise ValueError(
                f"watched accounts are numeric user ids (look them up once with GET "
                f"/2/users/by/username/NAME), not {bad[:3]}"
            )
        return value

    @property
    def oauth1(self) -> bool:
        """Return whether requests are signed with OAuth 1.0a user keys."""
        return all(getattr(self, name) is not None for name in _OAUTH1)

    @property
    def configured(self) -> bool:
        """Return whether the bot can start."""
        return self.oauth1 or self.bearer_token is not None

    def problem(self) -> str | None:
        """Return what is missing, saying how to fix it, or None."""
        given = [name for name in _OAUTH1 if getattr(self, name) is not None]
        if given and len(given) < len(_OAUTH1):
            missing = ", ".join(f"FACTBOT_X__{n.upper()}" for n in _OAUTH1 if n not in given)
            return (
                f"X OAuth 1.0a is half set: {missing} missing; copy them from the developer "
                "portal (your app > Keys and tokens; generate the access token with Read and "
                "write), or unset the others and use FACTBOT_X__BEARER_TOKEN (OAuth 2.0)"
            )
        return None
