"""The records of the fact-check index: one published review, one match of a claim to it.

A `FactCheck` is one schema.org ClaimReview as a publisher released it (a feed item, a page's
markup, a Google Fact Check Tools answer), keyed by its article URL. A `FactCheckMatch` is the
matcher's answer for one claim: the review, its scores, and whether the match decision accepted
it as the same claim.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pipeline.records.labels import Label

OUTDATED_AFTER = timedelta(days=3 * 365)  # a review older than this may no longer hold


def outdated(reviewed: datetime | None, reference: datetime) -> bool:
    """Return whether a review of that date may be outdated at reference (unknown: no)."""
    return reviewed is not None and reference - reviewed > OUTDATED_AFTER


@dataclass(frozen=True)
class FactCheck:
    """One published fact-check (a ClaimReview), as stored in the index."""

    url: str  # the fact-check article: the key
    claim_reviewed: str
    publisher: str  # the fact-checker's name ("PolitiFact")
    publisher_site: str | None = None  # its site's domain ("politifact.com")
    headline: str = ""
    claimant: str | None = None  # who made the claim
    claim_date: datetime | None = None  # when the claim was made
    review_date: datetime | None = None  # when it was checked
    language: str | None = None  # ISO 639-1 (or zh-Hans/zh-Hant), detected where absent
    rating: str | None = None  # the textual rating in the reviewer's own words
    label: Label | None = None  # the rating normalised; None: no rating, or one not understood
    license: str | None = None  # sdLicense, where the feed gives one

    @property
    def id(self) -> str:
        """Return the stable id of the review (from its URL)."""
        return hashlib.sha256(self.url.encode("utf-8")).hexdigest()[:32]  # document_id_for

    def matching_text(self) -> str:
        """Return the text the matcher indexes: the reviewed claim, then the headline."""
        if self.headline and self.headline.strip() != self.claim_reviewed.strip():
            return f"{self.claim_reviewed} {self.headline}".strip()
        return self.claim_reviewed


@dataclass(frozen=True)
class FactCheckMatch:
    """A review the matcher ranked for one claim, with its scores and the decision."""

    fact_check: FactCheck
    score: float  # the re-ranker's score, in [0, 1]
    lexical: float = 0.0  # the lexical (BM25) score, normalised to [0, 1] within the query
    semantic: float = 0.0  # the best embedding cosine
    accepted: bool = False  # the match decision: the same claim
    reasons: tuple[str, ...] = field(default_factory=tuple)  # why a match was refused


@dataclass(frozen=True)
class ClaimMatch:
    """The fact-check matched to one claim of a check, stored with the check."""

    claim_id: str
    match: FactCheckMatch
    via_post: bool = False  # matched on the whole (short) post rather than the claim's words
