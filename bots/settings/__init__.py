"""Settings: environment variables prefixed ``FACTBOT_`` (or a ``.env`` file), built once.

Groups are nested with a double underscore, e.g. ``FACTBOT_RETRIEVAL__RELEVANCE_THRESHOLD``.
Each group is defined in a private module of this package (`_engine`, `_platforms`, one per
further service part); `Settings` gathers them and this module exports every group, so code
outside imports `bots.settings` only.
`load_settings` turns validation failures into a `ConfigError` that says how to fix them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bots.settings._bluesky import BlueskySettings
from bots.settings._dashboard import DashboardSettings
from bots.settings._engine import (
    EmbeddingSettings,
    FetchSettings,
    GraphSettings,
    ImageSettings,
    JobSettings,
    LanguageIdSettings,
    ModelSettings,
    ReferenceSettings,
    RetrievalSettings,
    ReuseSettings,
    SearchSettings,
    ServerSettings,
    StageModelSettings,
    VerifierSettings,
)
from bots.settings._faces import FaceSettings
from bots.settings._factchecks import FactCheckSettings
from bots.settings._image_index import ImageIndexSettings
from bots.settings._mastodon import MastodonSettings
from bots.settings._metrics import MetricsSettings
from bots.settings._monitor import MonitorSettings
from bots.settings._platforms import (
    BudgetSettings,
    DiscordSettings,
    GuardSettings,
    PrivacySettings,
    ReplySettings,
    SlackSettings,
)
from bots.settings._queue import QueueSettings
from bots.settings._reverse_image import ReverseImageSettings
from bots.settings._review import ReviewSettings
from bots.settings._x import XSettings
from pipeline.embedding.calibration import CALIBRATIONS
from pipeline.errors import ConfigError
from pipeline.util.i18n import DEFAULT_LANGUAGES, Catalogues

__all__ = [
    "BlueskySettings",
    "BudgetSettings",
    "DashboardSettings",
    "DiscordSettings",
    "EmbeddingSettings",
    "FaceSettings",
    "FetchSettings",
    "GraphSettings",
    "GuardSettings",
    "ImageSettings",
    "JobSettings",
    "LanguageIdSettings",
    "MastodonSettings",
    "MetricsSettings",
    "ModelSettings",
    "MonitorSettings",
    "PrivacySettings",
    "QueueSettings",
    "ReferenceSettings",
    "ReplySettings",
    "RetrievalSettings",
    "ReuseSettings",
    "ReverseImageSettings",
    "ReviewSettings",
    "SearchSettings",
    "ServerSettings",
    "Settings",
    "SlackSettings",
    "StageModelSettings",
    "VerifierSettings",
    "XSettings",
    "load_settings",
]


def _checkout_models_dir() -> Path | None:
    """Return the source checkout's `.models/` when factbot runs from one, else None.

    `make model` pulls the local model there and `make run` points at it; `factbot` run from the
    checkout's activated venv (an editable install: this file lies in the checkout) must find
    the same folder, not `<data_dir>/models`, or its checks silently go without the model.
    """
    root = Path(__file__).resolve().parents[2]
    if (root / "Makefile").is_file() and (root / "pyproject.toml").is_file():
        return root / ".models"
    return None


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "factbot"


class Settings(BaseSettings):
    """Every setting of factbot."""

    model_config = SettingsConfigDict(
        env_prefix="FACTBOT_",
        env_file=".env",
        env_nested_delimiter="__",
        extra="ignore",
    )

    data_dir: Path = Field(
        default_factory=_default_data_dir,
        description="folder of the database (factbot.db: checks, index, sources, jobs); "
        "default: $XDG_DATA_HOME/factbot, or ~/.local/share/factbot",
    )
    database_url: SecretStr | None = Field(
        default=None,
        description=(
            "postgresql://user:password@host:port/db: the shared tables (posts, checks, jobs, "
            "replies, review, monitor, users, caches) live there and any number of `serve` and "
            "`worker` processes on any machines share them; unset: one SQLite file in data_dir"
        ),
    )
    storage_threads: int = Field(
        default=4,
        ge=1,
        le=64,
        description=(
            "threads that run database statements off the event loop, each with a connection "
            "of its own: the most connections one process opens to PostgreSQL; SQLite takes "
            "one writer at a time, so more rarely helps there"
        ),
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO",
        description="one line a record on stderr, fields as key=value; libraries that log "
        "tokens or message text stay at WARNING, and secrets are masked (bots/logs.py)",
    )
    max_post_chars: int = Field(
        default=100_000, ge=100, description="longer texts are refused; fetched pages are cut to it"
    )
    max_claims: int = Field(default=5, ge=1, le=20, description="claims checked per post")
    cpu_threads: int | None = Field(
        default=None,
        ge=1,
        le=64,
        description=(
            "threads for CPU-bound work kept off the event loop (page extraction, embedding, "
            "clustering); unset: one per CPU this process may use"
        ),
    )
    languages: str = Field(
        default=",".join(DEFAULT_LANGUAGES),
        description=(
            "the reply catalogues in use, comma-separated (pipeline/locales): a reply is in the "
            "post's language where one is listed (zh-Hans and zh-Hant read zh), else in English "
            "with a one-line notice"
        ),
    )
    server: ServerSettings = ServerSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    factchecks: FactCheckSettings = FactCheckSettings()
    graph: GraphSettings = GraphSettings()
    fetch: FetchSettings = FetchSettings()
    images: ImageSettings = ImageSettings()
    faces: FaceSettings = FaceSettings()
    image_index: ImageIndexSettings = ImageIndexSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    search: SearchSettings = SearchSettings()
    reverse_image: ReverseImageSettings = ReverseImageSettings()
    model: ModelSettings = ModelSettings()
    verifier: VerifierSettings = VerifierSettings()
    language_id: LanguageIdSettings = LanguageIdSettings()
    references: ReferenceSettings = ReferenceSettings()
    jobs: JobSettings = JobSettings()
    queue: QueueSettings = QueueSettings()
    reuse: ReuseSettings = ReuseSettings()
    discord: DiscordSettings = DiscordSettings()
    slack: SlackSettings = SlackSettings()
    x: XSettings = XSettings()
    bluesky: BlueskySettings = BlueskySettings()
    mastodon: MastodonSettings = MastodonSettings()
    guards: GuardSettings = GuardSettings()
    budgets: BudgetSettings = BudgetSettings()
    privacy: PrivacySettings = PrivacySettings()
    replies: ReplySettings = ReplySettings()
    monitor: MonitorSettings = MonitorSettings()
    review: ReviewSettings = ReviewSettings()
    dashboard: DashboardSettings = DashboardSettings()
    metrics: MetricsSettings = MetricsSettings()

    @field_validator("languages")
    @classmethod
    def _catalogues_exist(cls, value: str) -> str:
        codes = [code.strip() for code in value.split(",") if code.strip()]
        try:
            Catalogues(codes)
        except ValueError as exc:
            raise ValueError(f"FACTBOT_LANGUAGES: {exc}") from None
        return ",".join(codes)

    def reply_catalogues(self) -> Catalogues:
        """Return the reply catalogues `languages` names."""
        return Catalogues(self.languages.split(","))

    @model_validator(mode="after")
    def _embedder_thresholds(self) -> Settings:
        """Give each cosine threshold the chosen embedder's value unless it was set.

        The defaults were fitted on all-MiniLM-L6-v2; multilingual-e5's cosines sit on another
        scale (pipeline.embedding.calibration holds its measured values).
        """
        calibration = CALIBRATIONS.get(self.embedding.backend)
        if calibration is None:
            return self
        updates = (
            ("retrieval", "relevance_threshold", calibration.relevance),
            ("retrieval", "review_match_threshold", calibration.review_match),
            ("verifier", "relevance", calibration.verifier_relevance),
            ("reuse", "near_duplicate_threshold", calibration.near_duplicate),
            ("graph", "enabled", calibration.graph),
        )
        for name, field, value in updates:
            group = getattr(self, name)
            if field not in group.model_fields_set:
                # A copy: the group may be the class-level default instance.
                setattr(self, name, group.model_copy(update={field: value}))
        return self

    @model_validator(mode="after")
    def _providers_have_keys(self) -> Settings:
        s = self.search
        needs = {
            "searxng": ("searxng_url", s.searxng_url),
            "brave": ("brave_api_key", s.brave_api_key),
            "serper": ("serper_api_key", s.serper_api_key),
            "tavily": ("tavily_api_key", s.tavily_api_key),
            "factcheck": ("factcheck_api_key", s.factcheck_api_key),
        }
        if self.model.mode == "endpoint" and not self.model.base_url:
            raise ValueError(
                "FACTBOT_MODEL__MODE is 'endpoint' but FACTBOT_MODEL__BASE_URL is not set: set "
                "it to an OpenAI-compatible URL, or use FACTBOT_MODEL__MODE=auto"
            )
        for provider in s.providers if s.enabled else ():
            if provider in needs and needs[provider][1] is None:
                field = needs[provider][0]
                raise ValueError(
                    f"search provider {provider!r} is enabled but FACTBOT_SEARCH__{field.upper()} "
                    f"is not set: set it, or remove {provider!r} from FACTBOT_SEARCH__PROVIDERS"
                )
        return self

    @model_validator(mode="after")
    def _slack_secrets(self) -> Settings:
        # Checked here, not in SlackSettings: a group's error would echo its input (the tokens).
        problem = self.slack.problem() or self.x.problem()
        if problem:
            raise ValueError(problem)
        return self

    @model_validator(mode="after")
    def _review_platform_is_on(self) -> Settings:
        platform = self.review.platform
        if platform is not None and not getattr(self, platform).configured:
            needs = {"slack": "FACTBOT_SLACK__BOT_TOKEN", "discord": "FACTBOT_DISCORD__TOKEN"}
            raise ValueError(
                f"FACTBOT_REVIEW__PLATFORM is {platform!r} but {platform.capitalize()} is not "
                f"configured: set {needs[platform]} (see docs/platforms/{platform}.md)"
                ", or unset FACTBOT_REVIEW__PLATFORM to keep the review queue for the dashboard"
            )
        return self

    @model_validator(mode="after")
    def _fediverse_secrets(self) -> Settings:
        # As for Slack: checked here so the error never echoes the group's input (the secrets).
        for problem in (self.bluesky.problem(), self.mastodon.problem()):
            if problem:
                raise ValueError(problem)
        return self

    @model_validator(mode="after")
    def _queue_has_a_backend(self) -> Settings:
        if self.queue.engine == "saq" and self.queue_url is None:
            raise ValueError(
                "FACTBOT_QUEUE__ENGINE is 'saq' but it has no backend: set FACTBOT_DATABASE_URL "
                "(saq keeps its tables in the same PostgreSQL) or FACTBOT_QUEUE__URL "
                "(postgresql://…)"
            )
        url = self.queue.url.get_secret_value() if self.queue.url is not None else None
        if url is not None and not url.startswith(("postgresql://", "postgres://")):
            # Only PostgreSQL is installed and tested (saq[postgres]); the scheme alone is
            # named: the URL may hold a password.
            scheme = url.split("://", 1)[0] if "://" in url else "no scheme"
            raise ValueError(
                f"FACTBOT_QUEUE__URL must be a postgresql://… URL (it is {scheme}://…): saq "
                "runs on PostgreSQL here (its Redis backend is neither installed nor tested); "
                "unset it to keep saq's tables in FACTBOT_DATABASE_URL's database"
            )
        return self

    @property
    def queue_url(self) -> str | None:
        """Return saq's backend URL: FACTBOT_QUEUE__URL, else the database URL."""
        chosen = self.queue.url or self.database_url
        return chosen.get_secret_value() if chosen is not None else None

    @property
    def models_dir(self) -> Path:
        """Return the folder of local models: the configured one, else the checkout's
        `.models/` (what `make` uses), else `<data_dir>/models` (an installed package)."""
        return self.model.models_dir or _checkout_models_dir() or self.data_dir / "models"

    @property
    def database_path(self) -> Path:
        """Return the SQLite database file."""
        return self.data_dir / "factbot.db"


def load_settings() -> Settings:
    """Build settings from the environment; raise ConfigError saying how to fix a bad value."""
    try:
        return Settings()
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            if not err["loc"]:  # a rule across several settings: its message names them
                problems.append(f"  {err['msg'].removeprefix('Value error, ')}")
                continue
            path = "__".join(str(p) for p in err["loc"]).upper()
            secret = any(word in path for word in ("KEY", "TOKEN", "SECRET", "PASSWORD"))
            shown = "" if secret else f" (got {err.get('input')!r})"
            problems.append(f"  FACTBOT_{path}: {err['msg']}{shown}")
        raise ConfigError(
            "invalid settings:\n"
            + "\n".join(problems)
            + "\nFix the environment variable (or the .env file) and try again; "
            "see docs/reference/settings.md."
        ) from exc
