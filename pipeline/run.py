"""The order of the stages: the only module that knows it.

post -> [images -> reverse image search] -> claims -> queries -> [web search -> fetch -> index]
     -> retrieval -> relevance -> credibility ranking -> [reachability] -> [graphs]
     -> [image provenance] -> judgement -> rules -> correction
     -> Check (with the time each stage took)

The bracketed stages run when their dependencies are given (images, reverse image search, live
web search, reference checks, graph verification). The image stage's text (OCR) is read as part
of the post, its descriptions go to the claims model, the names it finds become query terms, the
pages reverse image search finds carrying the same pictures are indexed as evidence, and the
correction's note says what was found about the images and which could not be read.

The parts live in `pipeline.checking`: the evidence-gathering steps and their clock (stages),
the model path's steps (steps) and refinement round (refinement), and the rules that have the
last word (finalise). What a check needs is defined there too and re-exported here.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from pipeline.checking.deps import CheckConfig, CheckDeps, ModelDeps, Progress, ReferenceDeps
from pipeline.checking.finalise import defer_to_fact_checks, finalise
from pipeline.checking.images import trace_images
from pipeline.checking.languages import decide_readable, identify_claims, identify_post
from pipeline.checking.published import from_fact_checks, match_claims, with_fact_checks
from pipeline.checking.refinement import refine
from pipeline.checking.stages import Stages
from pipeline.checking.steps import Judged, judge_claims, quote_all
from pipeline.claims.decompose import Decomposition, decompose_post
from pipeline.claims.heuristic import extract_claims
from pipeline.claims.queries import Query, build_queries
from pipeline.image.claim_terms import image_aware, image_queries, with_image_text, with_terms
from pipeline.image.reverse.trace import TraceReport, search_image_copies, with_reverse_image
from pipeline.image.stage import read_images
from pipeline.inputs.injection import screen_post
from pipeline.judge.claimreview import combine
from pipeline.llm.client import LLMClient
from pipeline.llm.usage import metering
from pipeline.records.domain import (
    Assessment,
    Basis,
    Check,
    Claim,
    Evidence,
    ModelUsage,
    Narrative,
    Post,
    Quote,
    Verdict,
    new_id,
    utcnow,
)
from pipeline.records.factchecks import ClaimMatch
from pipeline.records.image import ImageReport
from pipeline.verifier.verdict import Decided, settle

__all__ = [
    "CheckConfig",
    "CheckDeps",
    "ModelDeps",
    "Progress",
    "ReferenceDeps",
    "run_check",
]


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
    # Relative dates in a claim ("last week") mean the week before the post was written.
    reference = post.created_at or before or utcnow()
    stages = Stages(
        post, deps=deps, config=config, before=before, reference=reference, progress=progress
    )
    if deps.languages is not None:  # the platform's language field is a hint, no more
        post = await stages.timed("language", identify_post(post, deps.languages, cpu=deps.cpu))
    # What models and the claim stage read: the post without its instruction-like sentences,
    # and only evidence from pages that carry none (such a page is never cited either).
    readable, post_injections = screen_post(post)
    quotes: list[Quote] = []
    narratives: tuple[Narrative, ...] = ()
    assessments: tuple[Assessment, ...] = ()
    images = ImageReport()
    traced: TraceReport | None = None
    if deps.images is not None and (post.image_refs or post.links or post.url):
        images = await stages.timed("images", read_images(post, deps=deps.images, cpu=deps.cpu))
        fetcher, reverse = deps.images.fetcher, deps.images.reverse
        if reverse is not None and fetcher is not None and images.descriptions:
            # Where else the pictures appear: pages indexed as evidence, appearances kept for
            # provenance (`finalise` cites the earliest).
            traced = await stages.timed(
                "reverse images",
                search_image_copies(
                    images,
                    post=post,
                    reverse=reverse,
                    fetcher=fetcher,
                    images=deps.images.index,
                    documents=deps.index,
                    embedder=deps.embedder,
                    rater=deps.rater,
                    before=before,
                    limits=deps.images.limits,
                    cpu=deps.cpu,
                ),
            )
    # Text read in the images is post text, screened like the rest of it.
    read_post, image_injections = screen_post(with_image_text(readable, images))
    post_injections += image_injections
    with metering() as meter:
        if model is None:
            claims, evidence, verdict, quotes = await _plain_path(
                read_post, stages=stages, images=images
            )
            judge_name = deps.verifier.name if deps.verifier is not None else deps.judge.name
        else:
            claims, judged = await _model_path(read_post, model=model, stages=stages, images=images)
            if model.verifier is not None:
                judged = await stages.timed("verifier", _hybrid(claims, judged, model, deps))
            evidence, verdict, quotes = judged.evidence, judged.verdict, judged.quotes
            narratives, assessments = tuple(judged.narratives), tuple(judged.assessments)
            judge_name = model.name if model.verifier is None else f"hybrid:{model.name}"
    # what the model stages cost: the claims call alone on the verifier's path, when it has one
    usage = tuple(
        ModelUsage(
            stage=stage,
            calls=u.calls,
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            cost_usd=round(u.cost_usd, 6),
            seconds=round(u.seconds, 3),
            failures=u.failures,
            timeouts=u.timeouts,
            invalid=u.invalid,
            fallbacks=u.fallbacks,
        )
        for stage, u in meter.by_stage().items()
    )
    verdict, evidence, correction, claim_graphs = await finalise(
        claims, verdict, evidence, quotes, stages=stages, images=images, language=post.language
    )
    return Check(
        id=new_id(),
        post=post,
        claims=tuple(claims),
        evidence=tuple(evidence),
        verdict=verdict,
        correction=correction,
        timings=tuple(stages.timings),
        judge=judge_name,
        created_at=utcnow(),
        before=before,
        usage=usage,
        injections=(*post_injections, *stages.pages.injections),
        graphs=claim_graphs,
        search=with_reverse_image(stages.search_status(), traced),
        images=images,
        narratives=narratives,
        assessments=assessments,
        quotes=tuple(quotes),
        fact_checks=tuple(stages.matches),
    )


async def _plain_path(
    post: Post, *, stages: Stages, images: ImageReport
) -> tuple[list[Claim], list[Evidence], Verdict, list[Quote]]:
    """Claims -> queries -> evidence -> graphs -> the verifier (else the no-model judge).

    The claims come from the heuristic stage, or from one language-model call that also writes
    the queries when `deps.claims_llm` is set (it falls back to the heuristic stage itself);
    no model takes part in the decision.
    The verifier's quotes are the sentences its verdicts rest on; a fact-check that
    matches a claim still outranks it (`_reviews_first`, as the path without it always did).
    """
    deps, config = stages.deps, stages.config
    if deps.claims_llm is not None:  # the model splits the post; the verifier still decides
        claims, queries = await _model_claims(post, deps.claims_llm, stages=stages, images=images)
    else:
        claims = await stages.timed(
            "claims",
            image_aware(extract_claims(post, max_claims=config.max_claims, cpu=deps.cpu), images),
        )
        claims = await identify_claims(claims, post, deps.languages, cpu=deps.cpu)
        queries = await stages.timed("queries", build_queries(claims))
    matches = await _match_fact_checks(claims, post, stages)
    queries = image_queries(claims, queries, images)
    evidence = await stages.gather(claims, queries)
    await stages.verify(claims, evidence)
    evidence += await trace_images(claims, images, stages=stages)
    if deps.verifier is not None:
        # the stance model reads English only: it never decides a claim in another language
        decided = await stages.timed("judgement", decide_readable(deps.verifier, claims, evidence))
        judged, verdict, quotes = await _reviews_first(claims, evidence, decided, deps)
    else:
        verdict, stanced = await stages.timed("judgement", deps.judge.judge(claims, evidence))
        judged, quotes = list(stanced), []
    return claims, *_published_first(judged, verdict, matches, stages), quotes


async def _match_fact_checks(claims: list[Claim], post: Post, stages: Stages) -> list[ClaimMatch]:
    """Return each claim's best published fact-check (none without a fact-check index)."""
    matcher = stages.deps.factchecks
    if matcher is None or not claims:
        return []
    found = await stages.timed(
        "fact-checks", match_claims(claims, post, matcher, before=stages.before)
    )
    stages.matches = found
    return found


def _published_first(
    evidence: list[Evidence], verdict: Verdict, matches: list[ClaimMatch], stages: Stages
) -> tuple[list[Evidence], Verdict]:
    """Return the evidence and verdict with accepted published fact-checks taken in.

    The judges never read a matched review (it restates the claim, which a stance model would
    take for support): it is added after them, and decides the claims it rates unless fresh
    evidence says the opposite (`from_fact_checks`).
    """
    if not matches:
        return evidence, verdict
    evidence = with_fact_checks(evidence, matches, stages.deps.rater)
    return evidence, from_fact_checks(verdict, evidence, matches, reference=stages.reference)


async def _reviews_first(
    claims: list[Claim], evidence: list[Evidence], decided: Decided, deps: CheckDeps
) -> tuple[list[Evidence], Verdict, list[Quote]]:
    """Return the verifier's decision with every claim a matching fact-check rates taken from it.

    The fact-check review judge (`deps.judge`) adopts the rating of a retrieved ClaimReview of
    the same claim, as the path without the verifier always did; such a claim keeps only the
    fact-check's evidence stance and none of the verifier's quotes.
    """
    reviewed, stanced = await deps.judge.judge(claims, evidence)
    by_review = {cv.claim_id: cv for cv in reviewed.claims if cv.basis is Basis.REVIEW}
    if not by_review:
        return list(decided.evidence), decided.verdict, list(decided.quotes)
    verdicts = tuple(by_review.get(cv.claim_id, cv) for cv in decided.verdict.claims)
    claim_of = {e.id: e.claim_id for e in evidence}
    review_stance = {e.id: e for e in stanced if claim_of.get(e.id) in by_review}
    judged = [review_stance.get(e.id, e) for e in decided.evidence]
    quotes = [q for q in decided.quotes if claim_of.get(q.evidence_id) not in by_review]
    verdict = Verdict(label=combine([cv.label for cv in verdicts]), claims=verdicts)
    return judged, verdict, quotes


async def _hybrid(claims: list[Claim], judged: Judged, model: ModelDeps, deps: CheckDeps) -> Judged:
    """The hybrid judge: the model's verdict, settled towards a confident verifier by code.

    A claim the verifier takes over gets the verifier's quotes and stances; a rated fact-check
    that matches a claim outranks both (`defer_to_fact_checks`).
    """
    verifier = model.verifier
    assert verifier is not None  # the caller checks
    # a claim the stance model cannot read is unverifiable to it: the model judge's verdict stays
    decided = await decide_readable(verifier, claims, judged.evidence)
    verdict, changed = settle(judged.verdict, decided, verifier.thresholds)
    if not changed:
        return judged
    verdict = await defer_to_fact_checks(claims, judged.evidence, verdict, deps)
    claim_of = {e.id: e.claim_id for e in judged.evidence}
    moved = {e.id: e for e in decided.evidence if claim_of.get(e.id) in changed}
    evidence = [moved.get(e.id, e) for e in judged.evidence]
    quotes = [q for q in judged.quotes if q.evidence_id not in moved]
    quotes += [q for q in decided.quotes if q.evidence_id in moved]
    return dataclasses.replace(judged, evidence=evidence, verdict=verdict, quotes=quotes)


async def _model_claims(
    post: Post, llm: LLMClient, *, stages: Stages, images: ImageReport
) -> tuple[list[Claim], list[Query]]:
    """Return the claims one model call finds in post and their queries (its own, then each
    claim's wording: relevance is measured against it)."""
    decomposition: Decomposition = await stages.timed(
        "claims",
        image_aware(
            decompose_post(
                post,
                llm=llm,
                image_descriptions=[d.text for d in images.descriptions],
                max_claims=stages.config.max_claims,
            ),
            images,
        ),
    )
    deps = stages.deps
    claims = await identify_claims(decomposition.claims, post, deps.languages, cpu=deps.cpu)
    return claims, [*decomposition.queries, *await build_queries(claims)]


async def _model_path(
    post: Post, *, model: ModelDeps, stages: Stages, images: ImageReport
) -> tuple[list[Claim], Judged]:
    """Claims -> evidence -> quotes -> graphs -> narratives -> judge, refined on what is missing.

    Refinement (`pipeline.checking.refinement`) searches again for an unverifiable claim's
    missing 5W1H facts (CRAVE) and for the parts of its graph no evidence matched (RAV).
    """
    deps, config = stages.deps, stages.config
    claims, queries = await _model_claims(post, model.llm, stages=stages, images=images)
    queries = [with_terms(q, images.terms) for q in queries]
    matches = await _match_fact_checks(claims, post, stages)
    evidence = await stages.gather(claims, queries, "")
    quotes = await stages.timed("extraction", quote_all(claims, evidence, model, config))
    await stages.verify(claims, evidence, "")
    evidence += await trace_images(claims, images, stages=stages)
    first = await stages.timed(
        "judgement",
        judge_claims(claims, evidence, quotes, model, deps, stages.claim_graphs(claims)),
    )
    judged = await refine(claims, first, stages=stages, model=model)
    evidence, verdict = _published_first(list(judged.evidence), judged.verdict, matches, stages)
    return claims, dataclasses.replace(judged, evidence=evidence, verdict=verdict)
