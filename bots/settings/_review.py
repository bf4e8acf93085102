"""Settings of the human review queue (bots.runtime.review.proposals).

Where proposals are shown, who may decide them, and how long they stay open. The queue itself
works without a review channel (the dashboard shows it); these settings add the Slack or Discord
channel.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator


class ReviewSettings(BaseModel):
    """The review channel and its reviewers."""

    platform: Literal["slack", "discord"] | None = Field(
        default=None,
        description="where proposed corrections are posted for review (unset: the dashboard only)",
    )
    channel_id: str | None = Field(
        default=None,
        description="the review channel's id (Slack: C…, from the channel's details; Discord: "
        "right-click the channel > Copy Channel ID)",
    )
    workspace_id: str = Field(
        default="",
        description="the Slack team id (T…) or Discord server id of the review channel (Slack "
        "with OAuth installs needs it to pick the workspace's token)",
    )
    reviewers: list[str] = Field(
        default_factory=list,
        description="user ids allowed to approve, edit or reject (Slack U… ids; Discord user ids)",
    )
    reviewer_roles: list[str] = Field(
        default_factory=list, description="Discord role ids whose members may decide"
    )
    expire_hours: float = Field(
        default=24.0,
        ge=0,
        description="hours a proposal stays open; older ones can no longer be approved (0: never)",
    )

    @field_validator("reviewers", "reviewer_roles")
    @classmethod
    def _ids(cls, values: list[str]) -> list[str]:
        cleaned = [v.strip() for v in values if v.strip()]
        for value in cleaned:
            if not value.replace("_", "").isalnum():
                raise ValueError(f"{value!r} is not a user or role id (letters and digits only)")
        return cleaned

    @model_validator(mode="after")
    def _complete(self) -> ReviewSettings:
        if self.platform is None:
            return self
        if not self.channel_id:
            raise ValueError(
                f"FACTBOT_REVIEW__PLATFORM is {self.platform!r} but FACTBOT_REVIEW__CHANNEL_ID is "
                "not set: set it to the id of the channel where reviewers see proposals"
            )
        if not self.reviewers and not self.reviewer_roles:
            raise ValueError(
                "FACTBOT_REVIEW__PLATFORM is set but nobody may decide: set "
                'FACTBOT_REVIEW__REVIEWERS (a JSON list of user ids, e.g. ["U012AB3CD"]) or, on '
                "Discord, FACTBOT_REVIEW__REVIEWER_ROLES"
            )
        return self

    @property
    def configured(self) -> bool:
        """Return whether proposals are posted to a review channel."""
        return self.platform is not None and bool(self.channel_id)
