"""Settings of the Prometheus endpoint `/metrics` (FACTBOT_METRICS__...)."""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr


class MetricsSettings(BaseModel):
    """Whether `/metrics` is served, and who may read it."""

    enabled: bool = Field(default=True, description="serve /metrics in Prometheus' text format")
    token: SecretStr | None = Field(
        default=None,
        description=(
            "a bearer token Prometheus sends (`Authorization: Bearer TOKEN`); when set it is "
            "required even in the open mode (a dashboard API key or a signed-in admin also may)"
        ),
    )
    public: bool = Field(
        default=False,
        description=(
            "let anyone who reaches the server read /metrics (for a port only the monitoring "
            "network reaches)"
        ),
    )
