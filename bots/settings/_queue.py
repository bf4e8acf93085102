"""Settings of the queue engine that runs jobs (FACTBOT_QUEUE__...).

`builtin` is factbot's own queue: workers claim rows of the jobs table (SQLite or PostgreSQL).
`saq` hands the runnable rows to saq (its PostgreSQL backend), whose workers run them;
the jobs table stays the system of record (docs/operations/scaling.md).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr


class QueueSettings(BaseModel):
    """Which engine runs jobs, and how saq is reached and kept."""

    engine: Literal["builtin", "saq"] = Field(
        default="builtin",
        description=(
            "builtin: workers claim rows of factbot's jobs table; saq: a relay in `factbot "
            "serve` (or `factbot relay`) hands runnable jobs to saq and `factbot worker` runs "
            "saq workers (scaled-out mode, docs/operations/scaling.md)"
        ),
    )
    url: SecretStr | None = Field(
        default=None,
        description=(
            "saq's backend, a postgresql://… URL (Redis is not supported); unset: "
            "FACTBOT_DATABASE_URL (saq's tables beside factbot's)"
        ),
    )
    name: str = Field(
        default="factbot", min_length=1, max_length=60, description="saq's queue name"
    )
    relay_seconds: float = Field(
        default=0.5, gt=0, le=60.0, description="how often the relay looks for jobs to hand on"
    )
    relay_batch: int = Field(
        default=500, ge=1, le=10_000, description="most jobs the relay hands on at one look"
    )
    redispatch_seconds: float = Field(
        default=60.0,
        ge=1.0,
        description=(
            "a job still queued this long after the relay handed it on is handed on again "
            "(saq ignores it while it holds the job: its key is the job id)"
        ),
    )
    sweep_seconds: int = Field(
        default=30,
        ge=1,
        le=3600,
        description=(
            "how often saq looks for jobs whose worker stopped heartbeating (for "
            "FACTBOT_JOBS__LEASE_SECONDS) and runs them again"
        ),
    )
    retries: int = Field(
        default=10,
        ge=1,
        le=100,
        description=(
            "saq's runs of one hand-over (a dead worker, a database outage); factbot's "
            "FACTBOT_JOBS__MAX_ATTEMPTS still bounds the attempts at the work"
        ),
    )
