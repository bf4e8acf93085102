"""The rules that have the last word over any judge, and the finished correction.

A model reads pages that may carry injected instructions, so code decides where evidence is
explicit: a rated fact-checker's matching review outranks the model (`defer_to_fact_checks`,
applied after every model judgement), then the evidence rules (`enforce_rules`) and the
citation rules (`enforce_citations`) apply on every path before the correction is written.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace

from pipeline.checking.deps import CheckDeps
from pipeline.checking.images import describe_findings, image_note
from pipeline.checking.published import stored_documents
from pipeline.checking.stages import Stages
from pipeline.image.conflicts import event_kind
from pipeline.judge.claimreview import combine
from pipeline.judge.rules import enforce_rules
from pipeline.records.domain import (
    Claim,
    ClaimGraph,
    Correction,
    Document,
    Evidence,
    Label,
    Quote,
    Tier,
    Verdict,
)
from pipeline.records.image import ImageReport
from pipeline.reply.citations import enforce_citations
from pipeline.reply.writer import write_correction

log = logging.getLogger(__name__)


async def defer_to_fact_checks(
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


async def finalise(
    claims: list[Claim],
    verdict: Verdict,
    evidence: list[Evidence],
    quotes: list[Quote],
    *,
    stages: Stages,
    images: ImageReport,
    language: str | None = None,
) -> tuple[Verdict, list[Evidence], Correction, tuple[ClaimGraph, ...]]:
    """Apply the code's rules to the verdict and return it with the evidence and correction.

    The correction is written in the post's `language` where a reply catalogue in use has it
    (`deps.replies`), else in English with a notice saying why.

    The image stage's note joins the correction's, and each earlier appearance of the post's
    images that reached the judges (`pipeline.checking.images`) gets a sentence citing it.
    """
    deps = stages.deps
    t = deps.replies.for_language(language)
    claim_graphs = stages.claim_graphs(claims)
    # Code has the last word on every path: explicit evidence outranks any judge's reading.
    verdict = enforce_rules(verdict, evidence, quotes, claim_graphs)
    # the citation check reads the stored documents: in a worker thread, off the event loop
    lookup: Callable[[str], Document | None] = deps.index.get
    if stages.matches and deps.factchecks is not None:  # matched reviews: the fact-check index
        lookup = stored_documents(stages.matches, deps.factchecks.index, lookup)
    verdict, quotes = await asyncio.to_thread(
        enforce_citations, verdict, evidence, quotes, lookup=lookup
    )
    correction = await stages.timed(
        "correction",
        write_correction(
            claims,
            verdict,
            evidence,
            quotes=quotes,
            graphs=claim_graphs,
            sources=stages.search_status() if deps.sources is not None else None,
            language=t,
        ),
    )
    unread = image_note(images, t)
    if unread:
        correction = replace(correction, note=t.space.join(filter(None, (correction.note, unread))))
    # What was found about the post's photos, each sentence citing the page it was found on.
    event = event_kind(" ".join(c.text for c in claims))
    correction = describe_findings(correction, evidence, event=event, t=t)
    return verdict, evidence, correction, claim_graphs
