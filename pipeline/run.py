"""The order of the stages: the only module that knows it.

post -> claims -> queries -> retrieval -> relevance -> credibility ranking
     -> judgement -> correction -> Check (with the time each stage took)
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from pipeline.claims import extract_claims
from pipeline.embedder import Embedder
from pipeline.judgement import Judge
from pipeline.queries import build_queries
from pipeline.ranking import Rater, rank_evidence
from pipeline.records import Check, Post, StageTiming, new_id, utcnow
from pipeline.relevance import filter_relevant
from pipeline.retrieval import retrieve
from pipeline.writer import write_correction
from storage.index import DocumentIndex

T = TypeVar("T")


@dataclass(frozen=True)
class CheckConfig:
    """Tunable knobs of one check."""

    max_claims: int = 5
    candidates: int = 40
    relevance_threshold: float = 0.60
    max_evidence: int = 5
    undated: str = "exclude"
    max_chars: int = 2000


@dataclass(frozen=True)
class CheckDeps:
    """What the stages need, built once by the composition root."""

    index: DocumentIndex
    embedder: Embedder
    rater: Rater
    judge: Judge


async def run_check(
    post: Post, *, deps: CheckDeps, config: CheckConfig, before: datetime | None = None
) -> Check:
    """Check one post end to end and return the (unsaved) Check."""
    timings: list[StageTiming] = []

    async def timed(stage: str, work: Awaitable[T]) -> T:
        start = time.perf_counter()
        result = await work
        timings.append(StageTiming(stage=stage, seconds=round(time.perf_counter() - start, 4)))
        return result

    claims = await timed("claims", extract_claims(post, max_claims=config.max_claims))
    queries = await timed("queries", build_queries(claims))
    candidates = await timed(
        "retrieval",
        retrieve(
            queries,
            index=deps.index,
            embedder=deps.embedder,
            limit=config.candidates,
            before=before,
            undated=config.undated,
        ),
    )
    relevant = await timed(
        "relevance",
        filter_relevant(
            candidates,
            min_score=config.relevance_threshold,
            # A post is not evidence about itself.
            exclude_urls=frozenset(filter(None, (post.url, *post.links))),
        ),
    )
    evidence = await timed(
        "ranking", rank_evidence(relevant, rater=deps.rater, max_per_claim=config.max_evidence)
    )
    verdict, evidence_with_stance = await timed("judgement", deps.judge.judge(claims, evidence))
    correction = await timed(
        "correction",
        write_correction(claims, verdict, evidence_with_stance, max_chars=config.max_chars),
    )
    return Check(
        id=new_id(),
        post=post,
        claims=tuple(claims),
        evidence=evidence_with_stance,
        verdict=verdict,
        correction=correction,
        timings=tuple(timings),
        judge=deps.judge.name,
        created_at=utcnow(),
        before=before,
    )
