"""Credibility ranking: drop evidence from sources that may not be cited, then order by
priority tier and relevance (MUSE's order) and keep the best few per claim.

Failure policy: never raises; a document whose domain cannot be rated is treated as unrated.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Protocol

from pipeline.evidence.retrieval import Candidate
from pipeline.records.domain import Evidence, SourceRating, Tier, new_id


class Rater(Protocol):
    """Rates publishers; implemented by `pipeline.credibility.policy.SourcePolicy`."""

    def rate(self, url_or_domain: str) -> SourceRating:
        """Return the rating that applies to a URL or domain."""
        ...

    def citable(self, rating: SourceRating, *, web: bool = False) -> bool:
        """Return whether evidence from this rating may be cited (web: found by web search)."""
        ...


async def rank_evidence(
    candidates: list[Candidate], *, rater: Rater, max_per_claim: int = 5
) -> list[Evidence]:
    """Return citable evidence ordered by tier then relevance, at most max_per_claim a claim.

    The ratings are stored rows: they are read in a worker thread, off the event loop.
    """
    ratings = await asyncio.to_thread(lambda: [rater.rate(c.document.url) for c in candidates])
    by_claim: dict[str, list[tuple[Tier, Candidate]]] = defaultdict(list)
    for cand, rating in zip(candidates, ratings, strict=True):
        if not rater.citable(rating):
            continue
        by_claim[cand.claim_id].append((rating.tier, cand))
    evidence: list[Evidence] = []
    for claim_id, items in by_claim.items():
        items.sort(key=lambda item: (item[0].rank, -item[1].cosine))
        for tier, cand in items[:max_per_claim]:
            evidence.append(
                Evidence(
                    id=new_id(),
                    claim_id=claim_id,
                    passage=cand.passage,
                    document=cand.document,
                    relevance=round(cand.cosine, 4),
                    tier=tier,
                )
            )
    return evidence
