"""The order of the stages: the only module that knows it.

post -> [images] -> claims -> queries -> [web search -> fetch -> index] -> retrieval -> relevance
     -> credibility ranking -> [reachability] -> judgement -> correction
     -> Check (with the time each stage took)

The bracketed stages run when their dependencies are given (images, live web search, reference
checks). The image stage's text (OCR) is read as part of the post, its descriptions go to the
claims model, the names it finds become query terms, and the correction's note says what was
found about the images and which could not be read.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from pipeline.claims.heuristic import extract_claims
from pipeline.claims.model import Decomposition, decompose_post
from pipeline.claims.queries import Query, build_queries
from pipeline.cpu import CpuPool
from pipeline.embedder import Embedder
from pipeline.evidence.ingest import Ingester
from pipeline.evidence.ranking import Rater, rank_evidence
from pipeline.evidence.reachability import keep_reachable
from pipeline.evidence.relevance import filter_relevant
from pipeline.evidence.retrieval import retrieve
from pipeline.evidence.web import WebDeps, gather_web_evidence
from pipeline.graph.verify import GraphVerifier
from pipeline.image.provenance import cite_findings, find_earlier
from pipeline.image.queries import image_aware, image_queries, with_image_text, with_terms
from pipeline.image.records import ImageReport
from pipeline.image.stage import ImageDeps, read_images
from pipeline.injection import PageScreen, screen_post
from pipeline.judge.model import ModelJudge
from pipeline.judge.narratives import cluster_narratives
from pipeline.judge.quotes import extract_quotes
from pipeline.judge.review import Judge, combine
from pipeline.judge.rules import enforce_rules
from pipeline.judge.tiered import missing_facets
from pipeline.llm.client import LLMClient
from pipeline.llm.usage import metering
from pipeline.ports import EvidenceIndex, ReachabilityCache
from pipeline.records import (
    Assessment,
    Check,
    Claim,
    ClaimGraph,
    Evidence,
    Label,
    ModelUsage,
    Narrative,
    Post,
    Quote,
    StageTiming,
    Tier,
    Verdict,
    new_id,
    utcnow,
)
from pipeline.reply.citations import enforce_citations
from pipeline.reply.writer import write_correction
from pipeline.search_status import SearchStatus
from pipeline.text import keywords
from pipeline.web.fetcher import Fetcher

log = logging.getLogger(__name__)
T = TypeVar("T")
# Told (stage, None) when a stage starts and (stage, seconds) when it ends; must not raise.
Progress = Callable[[str, float | None], None]


@dataclass(frozen=True)
class CheckConfig:
    """Tunable knobs of one check."""

    max_claims: int = 5
    candidates: int = 40
    relevance_threshold: float = 0.60
    max_evidence: int = 5
    undated: str = "include"


@dataclass(frozen=True)
class ReferenceDeps:
    """What the reachability check of cited references needs."""

    fetcher: Fetcher
    cache: ReachabilityCache
    ttl: timedelta


@dataclass(frozen=True)
class CheckDeps:
    """What the stages need, built once by the composition root."""

    index: EvidenceIndex
    embedder: Embedder
    rater: Rater
    judge: Judge
    web: WebDeps | None = None  # live web search; None keeps to the local index
    references: ReferenceDeps | None = None  # reachability check; None skips it
    cpu: CpuPool | None = None  # CPU-bound work; None: the event loop's default executor
    images: ImageDeps | None = None  # the image stage; None ignores a post's images
    graphs: GraphVerifier | None = None  # RAV's graph verification; None turns it off
    sources: SearchStatus | None = None  # what evidence sources the check starts with


@dataclass(frozen=True)
class ModelDeps:
    """The language-model path: its client and judge, and how far refinement may go."""

    llm: LLMClient
    judge: ModelJudge
    name: str = "model"
    docs_per_call: int = 4
    refine_rounds: int = 2


async def run_check(
    post: Post,
    *,
    deps: CheckDeps,
    config: CheckConfig,
    before: datetime | None = None,
    model: ModelDeps | None = None,
    progress: Progress | None = None,
) -> Check:
    """Check one post end to end and return the (unsaved) Check.

    `progress`, when given, is told when each stage starts and ends (with its seconds).

    Evidence is bounded to documents published before `before`, or before the post itself when
    its time is known (MUSE): a post is judged with what could be known when it was written.
    With `model`, claims, evidence quotes and the judgement come from the language model
    (falling back stage by stage to the no-model path when it fails).
    """
    before = before or post.created_at
    timings: list[StageTiming] = []
    # What models and the claim stage read: the post without its instruction-like sentences,
    # and only evidence from pages that carry none (such a page is never cited either).
    readable, post_injections = screen_post(post)
    pages = PageScreen()
    graphs: dict[str, ClaimGraph] = {}
    outcomes: list[tuple[str, bool, str, float]] = []  # each live search provider's answers
    # Relative dates in a claim ("last week") mean the week before the post was written.
    reference = post.created_at or before or utcnow()

    async def timed(stage: str, work: Awaitable[T]) -> T:
        if progress is not None:
            progress(stage, None)
        start = time.perf_counter()
        result = await work
        seconds = round(time.perf_counter() - start, 4)
        timings.append(StageTiming(stage=stage, seconds=seconds))
        if progress is not None:
            progress(stage, seconds)
        return result

    async def gather(claims: list[Claim], queries: list[Query], suffix: str = "") -> list[Evidence]:
        if deps.web is not None:
            web = deps.web
            with web.search.check_budget():
                searched = await timed(
                    "web" + suffix,
                    gather_web_evidence(
                        queries,
                        search=web.search,
                        fetcher=web.fetcher,
                        rater=deps.rater,
                        ingester=Ingester(deps.index, deps.embedder, cpu=deps.cpu),
                        before=before,
                        pages_per_claim=web.pages_per_claim,
                        fact_check_sites=web.fact_check_sites,
                        limit=web.results_per_provider,
                        cpu=deps.cpu,
                    ),
                )
            outcomes.extend(searched.outcomes())
        elif deps.sources is not None and deps.sources.blind:
            return []  # an empty index and no live search: nothing to retrieve, no model to load
        candidates = await timed(
            "retrieval" + suffix,
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
            "relevance" + suffix,
            filter_relevant(
                candidates,
                min_score=config.relevance_threshold,
                # A post is not evidence about itself.
                exclude_urls=frozenset(filter(None, (post.url, *post.links))),
            ),
        )
        relevant = pages.keep(relevant)
        evidence = await timed(
            "ranking" + suffix,
            rank_evidence(relevant, rater=deps.rater, max_per_claim=config.max_evidence),
        )
        if deps.references is not None:
            refs = deps.references
            evidence = await timed(
                "reachability" + suffix,
                keep_reachable(evidence, fetcher=refs.fetcher, cache=refs.cache, ttl=refs.ttl),
            )
        return evidence

    async def verify(claims: list[Claim], evidence: list[Evidence], suffix: str = "") -> None:
        if deps.graphs is not None and evidence:
            found = await timed(
                "graphs" + suffix,
                deps.graphs.verify_claims(claims, evidence, reference=reference, cpu=deps.cpu),
            )
            graphs.update({g.claim_id: g for g in found})

    usage: tuple[ModelUsage, ...] = ()
    quotes: list[Quote] = []
    images = ImageReport()
    if deps.images is not None and (post.image_refs or post.links or post.url):
        images = await timed("images", read_images(post, deps=deps.images, cpu=deps.cpu))
    # Text read in the images is post text, screened like the rest of it.
    read_post, image_injections = screen_post(with_image_text(readable, images))
    post_injections += image_injections
    if model is None:
        claims = await timed(
            "claims",
            image_aware(
                extract_claims(read_post, max_claims=config.max_claims, cpu=deps.cpu), images
            ),
        )
        queries = await timed("queries", build_queries(claims))
        queries = image_queries(claims, queries, images)
        evidence = await gather(claims, queries)
        await verify(claims, evidence)
        verdict, judged = await timed("judgement", deps.judge.judge(claims, evidence))
        evidence = list(judged)
        judge_name = deps.judge.name
    else:
        with metering() as meter:
            claims, evidence, verdict, quotes = await _model_path(
                read_post,
                model=model,
                deps=deps,
                config=config,
                gather=gather,
                timed=timed,
                images=images,
                verify=verify,
                graphs=graphs,
            )
        usage = tuple(
            ModelUsage(
                stage=stage,
                calls=u.calls,
                input_tokens=u.input_tokens,
                output_tokens=u.output_tokens,
                cost_usd=round(u.cost_usd, 6),
                seconds=round(u.seconds, 3),
                failures=u.failures,
            )
            for stage, u in meter.by_stage().items()
        )
        judge_name = model.name
    # Code has the last word on every path: explicit evidence outranks any judge's reading.
    claim_graphs = tuple(graphs[c.id] for c in claims if c.id in graphs)
    verdict = enforce_rules(verdict, evidence, quotes, claim_graphs)
    verdict, quotes = enforce_citations(verdict, evidence, quotes, lookup=deps.index.get)
    sources = deps.sources.after(outcomes) if deps.sources is not None else SearchStatus()
    correction = await timed(
        "correction",
        write_correction(
            claims,
            verdict,
            evidence,
            quotes=quotes,
            graphs=claim_graphs,
            sources=sources if deps.sources is not None else None,
        ),
    )
    if images.note:
        correction = replace(
            correction, note=" ".join(filter(None, (correction.note, images.note)))
        )
    index = deps.images.index if deps.images is not None else None
    if index is not None and images.descriptions and claims:
        findings = find_earlier(
            images, index=index, documents=deps.index, rater=deps.rater, when=before
        )
        correction, evidence = cite_findings(correction, evidence, findings, claim_id=claims[0].id)
    return Check(
        id=new_id(),
        post=post,
        claims=tuple(claims),
        evidence=tuple(evidence),
        verdict=verdict,
        correction=correction,
        timings=tuple(timings),
        judge=judge_name,
        created_at=utcnow(),
        before=before,
        usage=usage,
        injections=(*post_injections, *pages.injections),
        graphs=claim_graphs,
        search=sources,
    )


_FACET_HINTS = {
    "who": "who",
    "what": "what happened",
    "when": "date when",
    "where": "where location",
    "why": "why reason",
    "how": "how",
}


async def _model_path(
    post: Post,
    *,
    model: ModelDeps,
    deps: CheckDeps,
    config: CheckConfig,
    gather: Callable[[list[Claim], list[Query], str], Awaitable[list[Evidence]]],
    timed: Callable[[str, Awaitable[Any]], Awaitable[Any]],
    images: ImageReport,
    verify: Callable[[list[Claim], list[Evidence], str], Awaitable[None]],
    graphs: dict[str, ClaimGraph],
) -> tuple[list[Claim], list[Evidence], Verdict, list[Quote]]:
    """Claims -> evidence -> quotes -> graphs -> narratives -> judge, refined on what is missing.

    Refinement searches again for an unverifiable claim's missing 5W1H facts (CRAVE) and for
    the parts of its graph no evidence matched (RAV's feedback retrieval).
    """
    decomposition: Decomposition = await timed(
        "claims",
        image_aware(
            decompose_post(
                post,
                llm=model.llm,
                image_descriptions=[d.text for d in images.descriptions],
                max_claims=config.max_claims,
            ),
            images,
        ),
    )
    claims = list(decomposition.claims)
    # The claim itself is always searched too, so relevance is measured against its wording.
    queries = [*decomposition.queries, *await build_queries(claims)]
    queries = [with_terms(q, images.terms) for q in queries]
    evidence = await gather(claims, queries, "")
    quotes: list[Quote] = await timed("extraction", _extract(claims, evidence, model, config))
    await verify(claims, evidence, "")
    verdict, evidence, assessments = await timed(
        "judgement", _judge(claims, evidence, quotes, model, deps)
    )
    for round_no in range(1, model.refine_rounds + 1):
        missing = missing_facets(assessments)
        labels = {v.claim_id: v.label for v in verdict.claims}
        unmatched = {c: g.unmatched for c, g in graphs.items()}
        todo = [
            c
            for c in claims
            if (missing.get(c.id) or unmatched.get(c.id)) and labels.get(c.id) is Label.UNVERIFIABLE
        ]
        if not todo:
            break
        targeted = [
            Query(
                claim_id=c.id,
                text=" ".join(
                    [
                        c.text,
                        *(_FACET_HINTS[f] for f in missing.get(c.id, ())),
                        *unmatched.get(c.id, ())[:4],
                    ]
                ),
                terms=tuple(keywords(c.text, limit=20)),
            )
            for c in todo
        ]
        known = {(e.claim_id, e.passage.id) for e in evidence}
        fresh = [
            e
            for e in await gather(todo, targeted, f"#{round_no}")
            if (e.claim_id, e.passage.id) not in known
        ]
        if not fresh:
            break
        evidence = [*evidence, *fresh]
        quotes += await timed(f"extraction#{round_no}", _extract(todo, fresh, model, config))
        await verify(todo, evidence, f"#{round_no}")
        verdict, evidence, assessments = await timed(
            f"judgement#{round_no}", _judge(claims, evidence, quotes, model, deps)
        )
    return claims, evidence, verdict, quotes


async def _extract(
    claims: list[Claim], evidence: list[Evidence], model: ModelDeps, config: CheckConfig
) -> list[Quote]:
    """Quote refuting and context paragraphs for every claim, claims in parallel.

    A claim keeps at most `max_evidence` passages, so one batch holds them all: one call per
    claim keeps extraction to a single step on the critical path.
    """
    docs_per_call = max(model.docs_per_call, config.max_evidence)
    per_claim = await asyncio.gather(
        *(
            extract_quotes(
                claim,
                [e for e in evidence if e.claim_id == claim.id],
                llm=model.llm,
                docs_per_call=docs_per_call,
            )
            for claim in claims
            if any(e.claim_id == claim.id for e in evidence)
        )
    )
    return [quote for quotes in per_claim for quote in quotes]


async def _judge(
    claims: list[Claim],
    evidence: list[Evidence],
    quotes: list[Quote],
    model: ModelDeps,
    deps: CheckDeps,
) -> tuple[Verdict, list[Evidence], list[Assessment]]:
    """Cluster each claim's evidence into narratives and judge every claim in one call."""
    narratives: list[Narrative] = []
    for claim in claims:
        mine = [e for e in evidence if e.claim_id == claim.id]
        if mine:
            narratives += await cluster_narratives(
                claim.id, mine, embedder=deps.embedder, cpu=deps.cpu
            )
    verdict, judged, assessments = await model.judge.judge_with(
        claims, evidence, narratives=narratives, quotes=quotes
    )
    verdict = await _defer_to_fact_checks(claims, evidence, verdict, deps)
    return verdict, list(judged), assessments


async def _defer_to_fact_checks(
    claims: list[Claim], evidence: list[Evidence], verdict: Verdict, deps: CheckDeps
) -> Verdict:
    """Never let the model contradict a rated fact-checker's review of the same claim.

    The model reads pages that may carry injected instructions; a ClaimReview from a rated
    publisher that matches the claim (the no-model judge's strict test) outranks its reading.
    """
    reviewed, _ = await deps.judge.judge(claims, evidence)
    by_id = {e.id: e for e in evidence}
    decided = {
        cv.claim_id: cv
        for cv in reviewed.claims
        if cv.label is not Label.UNVERIFIABLE
        and any(
            by_id[i].tier in (Tier.HIGH, Tier.MEDIUM, Tier.LOW)
            for i in cv.evidence_ids
            if i in by_id
        )
    }
    claims_out = []
    for cv in verdict.claims:
        review = decided.get(cv.claim_id)
        if review is not None and review.label is not cv.label:
            log.warning(
                "model verdict overruled by a fact-check",
                extra={"claim": cv.claim_id, "model": cv.label.value, "review": review.label.value},
            )
            cv = review
        claims_out.append(cv)
    return Verdict(label=combine([cv.label for cv in claims_out]), claims=tuple(claims_out))
