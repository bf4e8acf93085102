"""The order of the stages: the only module that knows it.

post -> claims -> queries -> [web search -> fetch -> index] -> retrieval -> relevance
     -> credibility ranking -> [reachability] -> judgement -> correction
     -> Check (with the time each stage took)

The bracketed stages run when their dependencies are given (live web search, reference checks).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from pipeline.claims import extract_claims
from pipeline.embedder import Embedder
from pipeline.fetch import Fetcher
from pipeline.ingest import Ingester
from pipeline.judgement import Judge
from pipeline.queries import build_queries
from pipeline.ranking import Rater, rank_evidence
from pipeline.reachability import keep_reachable
from pipeline.records import Check, Post, StageTiming, new_id, utcnow
from pipeline.relevance import filter_relevant
from pipeline.retrieval import retrieve
from pipeline.web import WebDeps, gather_web_evidence
from pipeline.writer import write_correction
from storage.index import DocumentIndex
from storage.webcache import WebCache

T = TypeVar("T")


@dataclass(frozen=True)
class CheckConfig:
    """Tunable knobs of one check."""

    max_claims: int = 5
    candidates: int = 40
    relevance_threshold: float = 0.60
    max_evidence: int = 5
    undated: str = "include"
    max_chars: int = 2000


@dataclass(frozen=True)
class ReferenceDeps:
    """What the reachability check of cited references needs."""

    fetcher: Fetcher
    cache: WebCache
    ttl: timedelta


@dataclass(frozen=True)
class CheckDeps:
    """What the stages need, built once by the composition root."""

    index: DocumentIndex
    embedder: Embedder
    rater: Rater
    judge: Judge
    web: WebDeps | None = None  # live web search; None keeps to the local index
    references: ReferenceDeps | None = None  # reachability check; None skips it


async def run_check(
    post: Post, *, deps: CheckDeps, config: CheckConfig, before: datetime | None = None
) -> Check:
    """Check one post end to end and return the (unsaved) Check.

    Evidence is bounded to documents published before `before`, or before the post itself when
    its time is known (MUSE): a post is judged with what could be known when it was written.
    """
    before = before or post.created_at
    timings: list[StageTiming] = []

    async def timed(stage: str, work: Awaitable[T]) -> T:
        start = time.perf_counter()
        result = await work
        timings.append(StageTiming(stage=stage, seconds=round(time.perf_counter() - start, 4)))
        return result

    claims = await timed("claims", extract_claims(post, max_claims=config.max_claims))
    queries = await timed("queries", build_queries(claims))
    if deps.web is not None:
        web = deps.web
        with web.search.check_budget():
            await timed(
                "web",
                gather_web_evidence(
                    queries,
                    search=web.search,
                    fetcher=web.fetcher,
                    rater=deps.rater,
                    ingester=Ingester(deps.index, deps.embedder),
                    before=before,
                    pages_per_claim=web.pages_per_claim,
                    fact_check_sites=web.fact_check_sites,
                    limit=web.results_per_provider,
                ),
            )
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
    if deps.references is not None:
        refs = deps.references
        evidence = await timed(
            "reachability",
            keep_reachable(evidence, fetcher=refs.fetcher, cache=refs.cache, ttl=refs.ttl),
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
