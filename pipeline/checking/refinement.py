"""The refinement round: search again for what the first judgement could not settle.

A claim the model judged `unverifiable` is searched again with its missing 5W1H facts (CRAVE)
and the parts of its graph no evidence matched (RAV's feedback retrieval); only evidence not
seen before is quoted and the claims are judged again. Rounds stop when no claim qualifies or
a search finds nothing new.
"""

from __future__ import annotations

from pipeline.checking.deps import ModelDeps
from pipeline.checking.stages import Stages
from pipeline.checking.steps import Judged, judge_claims, quote_all
from pipeline.claims.queries import Query
from pipeline.judge.tiered import missing_facets
from pipeline.records.domain import Claim, Label
from pipeline.util.text import keywords

_FACET_HINTS = {
    "who": "who",
    "what": "what happened",
    "when": "date when",
    "where": "where location",
    "why": "why reason",
    "how": "how",
}


def targeted_queries(
    claims: list[Claim],
    judged: Judged,
    unmatched: dict[str, tuple[str, ...]],
) -> list[Query]:
    """Return one query per unverifiable claim that misses facts or graph parts, else none."""
    missing = missing_facets(judged.assessments)
    labels = {v.claim_id: v.label for v in judged.verdict.claims}
    todo = [
        c
        for c in claims
        if (missing.get(c.id) or unmatched.get(c.id)) and labels.get(c.id) is Label.UNVERIFIABLE
    ]
    return [
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


async def refine(
    claims: list[Claim], judged: Judged, *, stages: Stages, model: ModelDeps
) -> Judged:
    """Run up to `model.refine_rounds` rounds of targeted search, quoting and judgement."""
    for round_no in range(1, model.refine_rounds + 1):
        unmatched = {c: g.unmatched for c, g in stages.graphs.items()}
        targeted = targeted_queries(claims, judged, unmatched)
        if not targeted:
            break
        todo_ids = {q.claim_id for q in targeted}
        todo = [c for c in claims if c.id in todo_ids]
        known = {(e.claim_id, e.passage.id) for e in judged.evidence}
        fresh = [
            e
            for e in await stages.gather(todo, targeted, f"#{round_no}")
            if (e.claim_id, e.passage.id) not in known
        ]
        if not fresh:
            break
        evidence = [*judged.evidence, *fresh]
        quotes = judged.quotes + await stages.timed(
            f"extraction#{round_no}", quote_all(todo, fresh, model, stages.config)
        )
        await stages.verify(todo, evidence, f"#{round_no}")
        judged = await stages.timed(
            f"judgement#{round_no}",
            judge_claims(claims, evidence, quotes, model, stages.deps, stages.claim_graphs(claims)),
        )
    return judged
