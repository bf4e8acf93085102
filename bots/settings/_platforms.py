"""Settings of the platform bots and of what guards them: Discord, Slack, guards, budgets,
privacy, replies. Each further platform or service part has its own module beside this one."""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr, field_validator


class DiscordSettings(BaseModel):
    """The Discord bot (bots.platforms.discord); on when a token is set."""

    token: SecretStr | None = Field(
        default=None, description="the bot token (Developer Portal > your app > Bot > Reset Token)"
    )
    application_id: str | None = Field(
        default=None,
        description="the application id (General Information); read from the API when unset",
    )
    message_content: bool = Field(
        default=False,
        description="ask for the privileged message-content intent (enable it in the portal "
        "first): mentions in a reply to a message then check the message replied to",
    )
    create_threads: bool = Field(
        default=True,
        description="answer in the message's thread (a new one when it has none) where allowed",
    )
    api_base: str = Field(
        default="https://discord.com/api/v10", description="REST base URL (a stand-in in tests)"
    )
    gateway_url: str | None = Field(
        default=None, description="gateway URL (unset: the one Discord gives; a stand-in in tests)"
    )
    max_image_bytes: int = Field(
        default=8_000_000,
        ge=1,
        description="largest image attachment read as part of a message; larger ones get a note",
    )
    guild_ready_timeout: float = Field(
        default=2.0, gt=0, le=60, description="seconds the gateway waits for guilds at start"
    )

    @field_validator("application_id")
    @classmethod
    def _application_id_is_a_snowflake(cls, value: str | None) -> str | None:
        if value is not None and not value.isdigit():
            raise ValueError(
                "must be the numeric application id (Developer Portal > your app > General "
                "Information > Application ID), or unset"
            )
        return value

    @property
    def configured(self) -> bool:
        """Return whether the bot can start."""
        return self.token is not None


class SlackSettings(BaseModel):
    """The Slack app (bots.platforms.slack); on when a bot token or OAuth client is set."""

    bot_token: SecretStr | None = Field(
        default=None, description="xoxb- token of a single-workspace install"
    )
    signing_secret: SecretStr | None = Field(
        default=None, description="Basic Information > App Credentials > Signing Secret"
    )
    app_token: SecretStr | None = Field(
        default=None, description="xapp- token with connections:write: turns on Socket Mode"
    )
    client_id: str | None = Field(default=None, description="OAuth client id (multi-workspace)")
    client_secret: SecretStr | None = Field(
        default=None, description="OAuth client secret (multi-workspace)"
    )
    events_path: str = Field(default="/slack/events", description="HTTP-mode events endpoint")
    install_path: str = Field(
        default="/slack/install", description="multi-workspace: the page that starts an install"
    )
    redirect_path: str = Field(
        default="/slack/oauth_redirect",
        description="multi-workspace: where Slack sends the installer back (OAuth redirect)",
    )
    redirect_uri: str | None = Field(
        default=None,
        description="multi-workspace: the public URL of redirect_path, as entered in the app's "
        "OAuth & Permissions > Redirect URLs (unset: the one configured there)",
    )
    api_base: str = Field(
        default="https://slack.com/api/", description="Web API base URL (a stand-in in tests)"
    )

    @property
    def configured(self) -> bool:
        """Return whether the app can start."""
        return self.bot_token is not None or self.client_id is not None

    def problem(self) -> str | None:
        """Return what is missing for the configured mode, saying how to fix it, or None."""
        if self.client_id is not None and self.client_secret is None:
            return (
                "FACTBOT_SLACK__CLIENT_ID is set but FACTBOT_SLACK__CLIENT_SECRET is not: copy it "
                "from your Slack app's Basic Information > App Credentials > Client Secret"
            )
        if self.configured and self.app_token is None and self.signing_secret is None:
            return (
                "Slack is configured for HTTP mode but FACTBOT_SLACK__SIGNING_SECRET is not set: "
                "copy it from your Slack app's Basic Information > App Credentials > Signing "
                "Secret (or set FACTBOT_SLACK__APP_TOKEN, an xapp- token, for Socket Mode)"
            )
        return None


class GuardSettings(BaseModel):
    """Who may ask for checks, where, how often (bots.runtime.platform.guards)."""

    user_burst: int = Field(default=3, ge=1, description="checks one user may ask for at once")
    user_per_hour: float = Field(default=20.0, gt=0, description="a user's refill rate")
    channel_burst: int = Field(default=10, ge=1, description="checks one channel may have at once")
    channel_per_hour: float = Field(default=60.0, gt=0, description="a channel's refill rate")
    workspace_burst: int = Field(
        default=30, ge=1, description="checks one server or workspace may have at once"
    )
    workspace_per_hour: float = Field(default=300.0, gt=0, description="its refill rate")
    allow_channels: list[str] = Field(
        default_factory=list,
        description="when set, only these channels (`platform:channel_id`) are answered",
    )
    deny_channels: list[str] = Field(
        default_factory=list, description="channels (`platform:channel_id`) never answered"
    )
    max_post_chars: int = Field(
        default=4000, ge=100, description="longest platform post factbot checks"
    )


class BudgetSettings(BaseModel):
    """What one server or workspace may spend (bots.runtime.platform.guards)."""

    checks_per_day: int = Field(
        default=200, ge=0, description="checks per server/workspace per UTC day (0: no limit)"
    )
    usd_per_month: float = Field(
        default=10.0, ge=0, description="model cost per server/workspace per month (0: no limit)"
    )


class PrivacySettings(BaseModel):
    """Platform user ids and post text (bots.runtime.platform.privacy)."""

    pseudonym_key: SecretStr | None = Field(
        default=None,
        description="HMAC key for stored user ids (unset: a random key kept in the database)",
    )
    keep_user_ids: bool = Field(
        default=False, description="store raw platform user ids instead of pseudonyms"
    )
    retention_days: float = Field(
        default=30.0,
        gt=0,
        description="delete the text and evidence of platform checks this long after them "
        "(the verdict and references stay)",
    )


class ReplySettings(BaseModel):
    """What platform replies carry besides the correction."""

    public_base_url: str | None = Field(
        default=None, description="factbot's public URL: replies link to the full report there"
    )
    cost_footer: bool = Field(default=False, description="end replies with what the check cost")
