"""The model path's two model-reading steps, shared by its first pass and refinement rounds.

Extraction quotes refuting and context paragraphs for each claim (in the hybrid judge the stance
model does it, with its stance and probability); judgement clusters each claim's evidence into
narratives (CRAVE), asks the model judge once for every claim, and lets a rated fact-check
overrule it (`defer_to_fact_checks`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline.checking.deps import CheckConfig, CheckDeps, ModelDeps
from pipeline.checking.finalise import defer_to_fact_checks
from pipeline.checking.languages import stance_model_reads
from pipeline.judge.narratives import cluster_narratives
from pipeline.judge.quotes import extract_quotes
from pipeline.records.domain import (
    Assessment,
    Claim,
    ClaimGraph,
    Evidence,
    Narrative,
    Quote,
    Verdict,
)


@dataclass(frozen=True)
class Judged:
    """Where the model path stands after a judgement: evidence, quotes and the verdict.

    `narratives` are the clusters the judge was shown and `assessments` its reading of each
    (empty when the model judge failed and the no-model judge decided).
    """

    evidence: list[Evidence]
    quotes: list[Quote]
    verdict: Verdict
    assessments: list[Assessment]
    narratives: list[Narrative] = field(default_factory=list)


async def extract_all(
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


async def quote_all(
    claims: list[Claim], evidence: list[Evidence], model: ModelDeps, config: CheckConfig
) -> list[Quote]:
    """Return the quotes the judge reads: the verifier's in the hybrid judge, else the model's.

    In the hybrid judge the stance model picks each passage's decisive sentence and its stance
    (one model call fewer a claim; the model's extraction misread gold evidence, README "How
    well it judges"), and the model judge sees that stance with its probability.
    """
    if model.verifier is None:
        return await extract_all(claims, evidence, model, config)
    # the stance model reads English only; the model quotes claims in other languages
    read = [c for c in claims if stance_model_reads(c)]
    unread = [c for c in claims if not stance_model_reads(c)]
    quotes = await model.verifier.quotes(read, evidence) if read else []
    return quotes + (await extract_all(unread, evidence, model, config) if unread else [])


async def judge_claims(
    claims: list[Claim],
    evidence: list[Evidence],
    quotes: list[Quote],
    model: ModelDeps,
    deps: CheckDeps,
    graphs: Sequence[ClaimGraph] = (),
) -> Judged:
    """Cluster each claim's evidence into narratives and judge every claim in one call.

    The judge sees each claim's graph result (`graphs`) beside its narratives. The answer
    keeps the narratives and assessments, which the check carries to the dashboard.
    """
    narratives: list[Narrative] = []
    for claim in claims:
        mine = [e for e in evidence if e.claim_id == claim.id]
        if mine:
            narratives += await cluster_narratives(
                claim.id, mine, embedder=deps.embedder, cpu=deps.cpu
            )
    verdict, judged, assessments = await model.judge.judge_with(
        claims, evidence, narratives=narratives, quotes=quotes, graphs=graphs
    )
    verdict = await defer_to_fact_checks(claims, evidence, verdict, deps)
    return Judged(list(judged), list(quotes), verdict, list(assessments), narratives)
