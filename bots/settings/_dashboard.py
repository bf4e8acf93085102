"""Settings of the web dashboard and of who may use the API (FACTBOT_DASHBOARD__...)."""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr


class DashboardSettings(BaseModel):
    """Sign-in, sessions, API keys and what is public."""

    enabled: bool = Field(default=True, description="serve the dashboard under / beside the API")
    secret_key: SecretStr | None = Field(
        default=None,
        description=(
            "signs session cookies and CSRF tokens; unset: a random key is made once and kept "
            "in the database (sessions then survive restarts of one database)"
        ),
    )
    api_keys: tuple[SecretStr, ...] = Field(
        default=(),
        description=(
            'keys that may call the API\'s write endpoints (JSON list, e.g. ["k1","k2"]), sent '
            "as `Authorization: Bearer KEY` or `X-API-Key: KEY`"
        ),
    )
    public_checks: bool = Field(
        default=False,
        description=(
            "let anyone read checks (GET /api/checks/..., the report pages) without signing in"
        ),
    )
    session_hours: float = Field(default=12.0, gt=0, le=24 * 30, description="session lifetime")
    signin_per_minute: float = Field(
        default=5.0, gt=0, le=600, description="sign-in attempts per address (and per name)"
    )
    signin_burst: int = Field(default=5, ge=1, le=100, description="attempts allowed at once")
