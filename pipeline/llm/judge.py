"""The model judge (stage "judge"): the model reads narratives, code decides the label.

`assess` makes ONE model call for all claims of a post (the judge is on the critical path). For
each claim and each of its narratives the model sees the representative evidence (its quotes when
there are any, else its passage, with publisher domain and date) in delimited data blocks, and
returns per narrative a relation (supports / conflicts / irrelevant), a 5W1H facet check and a
one-sentence rationale, and per claim a plain-language explanation for the reply. Narrative
labels the prompt did not give are dropped; narratives the model skipped count as irrelevant.

`decide` applies CRAVE's tiered rule in code (see its docstring); `ModelJudge` puts the two
together with `combine` and, when the model fails, falls back to the no-model judge.

Failure policy: `assess` raises the client's ModelOutputError or ModelUnavailableError;
`ModelJudge` never does: it logs the failure and returns the fallback judge's verdict.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from pipeline.embedder import Embedder
from pipeline.judgement import Judge, combine
from pipeline.llm.client import LLMClient, ModelError
from pipeline.llm.prompts import data_block, system_prompt
from pipeline.llm.usage import UsageMeter
from pipeline.narratives import cluster_narratives
from pipeline.records import (
    FACETS,
    Assessment,
    Claim,
    ClaimVerdict,
    Evidence,
    FacetCheck,
    Label,
    Narrative,
    Quote,
    Relation,
    Stance,
    Verdict,
)

log = logging.getLogger(__name__)

STAGE = "judge"
FACTUAL_FACETS = ("who", "what", "when", "where")  # a conflict here is a factual contradiction
MAX_CLAIM_CHARS = 600
MAX_PASSAGE_CHARS = 1500
MAX_QUOTE_CHARS = 700
MAX_QUOTES = 2
MAX_OTHER_PUBLISHERS = 5
MAX_EXPLANATION_CHARS = 600
_TOKENS_BASE, _TOKENS_PER_CLAIM, _TOKENS_PER_NARRATIVE, _TOKENS_CAP = 150, 120, 220, 6000

ImageProvenance = Callable[[Evidence], bool]

TASK = """\
Task: judge claims taken from a post against narratives. A narrative is a cluster of evidence \
from publishers, shown by one representative <document> (quoted paragraphs, or a passage). \
Claims have ids like C1; each <document> names its narrative, like C1.N2, and belongs to that \
claim only.

For every claim and every one of its narratives give:
- relation: "supports" when the evidence confirms the claim; "conflicts" when it contradicts \
the claim or shows it leaves out context that changes its meaning; "irrelevant" when it is \
about something else.
- facets: compare the claim with the evidence on who (people, organisations), what (events, \
objects, topics, numbers), when (dates), where (places), why (causes, motives) and how \
(means, manner): "consistent", "conflicting", or "missing" when the evidence does not say; \
note: a few words.
- rationale: one sentence.
Then for every claim an explanation: two or three plain sentences for a reader saying what in \
the claim is accurate, what is not, and why, based only on the evidence shown; no URLs. If the \
evidence does not settle the claim, say so. Never call a recent event fabricated only because \
you do not know of it."""


class FacetOut(BaseModel):
    """The model's check of one facet."""

    status: Literal["consistent", "conflicting", "missing"]
    note: str


class FacetsOut(BaseModel):
    """The model's 5W1H check of a narrative against a claim."""

    who: FacetOut
    what: FacetOut
    when: FacetOut
    where: FacetOut
    why: FacetOut
    how: FacetOut


class NarrativeOut(BaseModel):
    """The model's reading of one narrative."""

    narrative: str
    relation: Literal["supports", "conflicts", "irrelevant"]
    facets: FacetsOut
    rationale: str


class ClaimOut(BaseModel):
    """The model's reading of one claim's narratives, and its explanation."""

    claim: str
    narratives: list[NarrativeOut]
    explanation: str


class JudgeOutput(BaseModel):
    """The model judge's whole answer."""

    claims: list[ClaimOut]


@dataclass(frozen=True)
class _Layout:
    user: str
    claims: dict[str, Claim]
    narratives: dict[str, Narrative]


def _document(
    narrative: Narrative, label: str, by_id: dict[str, Evidence], quotes: list[Quote]
) -> str:
    rep = by_id[narrative.representative_id]
    others = [
        by_id[i].document.domain for i in narrative.evidence_ids if i in by_id and i != rep.id
    ]
    published = rep.document.published_at
    if quotes:
        text = "\n\n".join(q.text[:MAX_QUOTE_CHARS] for q in quotes[:MAX_QUOTES])
    else:
        text = rep.passage.text
    return data_block(
        "document",
        text,
        max_chars=MAX_PASSAGE_CHARS,
        narrative=label,
        publisher=rep.document.domain,
        published=published.date().isoformat() if published else "unknown",
        title=rep.document.title or None,
        also=", ".join(list(dict.fromkeys(others))[:MAX_OTHER_PUBLISHERS]) or None,
    )


def _layout(
    claims: Sequence[Claim],
    narratives: Sequence[Narrative],
    evidence: Sequence[Evidence],
    quotes: Sequence[Quote],
) -> _Layout:
    by_id = {e.id: e for e in evidence}
    quotes_of: dict[str, list[Quote]] = defaultdict(list)
    for quote in quotes:
        quotes_of[quote.evidence_id].append(quote)
    parts: list[str] = []
    claim_labels: dict[str, Claim] = {}
    narrative_labels: dict[str, Narrative] = {}
    for claim in claims:
        mine = [n for n in narratives if n.claim_id == claim.id and n.representative_id in by_id]
        if not mine:
            continue
        c_label = f"C{len(claim_labels) + 1}"
        claim_labels[c_label] = claim
        parts.append(data_block("claim", claim.text, max_chars=MAX_CLAIM_CHARS, id=c_label))
        for j, narrative in enumerate(mine, start=1):
            label = f"{c_label}.N{j}"
            narrative_labels[label] = narrative
            rep_quotes = quotes_of[narrative.representative_id]
            parts.append(_document(narrative, label, by_id, rep_quotes))
    return _Layout("\n\n".join(parts), claim_labels, narrative_labels)


def _facets(out: FacetsOut) -> tuple[FacetCheck, ...]:
    return tuple(
        FacetCheck(facet=f, status=getattr(out, f).status, note=getattr(out, f).note.strip())
        for f in FACETS
    )


def _read(answer: JudgeOutput, layout: _Layout) -> tuple[list[Assessment], dict[str, str]]:
    found: dict[str, Assessment] = {}
    explanations: dict[str, str] = {}
    dropped = 0
    for claim_out in answer.claims:
        claim = layout.claims.get(claim_out.claim.strip())
        if claim is None:
            dropped += len(claim_out.narratives) or 1
            continue
        explanations.setdefault(claim.id, claim_out.explanation.strip()[:MAX_EXPLANATION_CHARS])
        for out in claim_out.narratives:
            label = out.narrative.strip()
            narrative = layout.narratives.get(label)
            if narrative is None or narrative.claim_id != claim.id or label in found:
                dropped += 1
                continue
            found[label] = Assessment(
                claim_id=claim.id,
                narrative_id=narrative.id,
                relation=Relation(out.relation),
                facets=_facets(out.facets),
                rationale=out.rationale.strip(),
            )
    missing = [label for label in layout.narratives if label not in found]
    if dropped or missing:
        log.warning(
            "judge answer incomplete",
            extra={"stage": STAGE, "dropped": dropped, "unassessed": len(missing)},
        )
    assessments = [
        found.get(label)
        or Assessment(
            claim_id=n.claim_id,
            narrative_id=n.id,
            relation=Relation.IRRELEVANT,
            facets=(),
            rationale="The judge did not assess this narrative.",
        )
        for label, n in layout.narratives.items()
    ]
    return assessments, explanations


async def assess_with_explanations(
    claims: Sequence[Claim],
    narratives: Sequence[Narrative],
    evidence: Sequence[Evidence],
    quotes: Sequence[Quote],
    *,
    llm: LLMClient,
    meter: UsageMeter | None = None,
) -> tuple[list[Assessment], dict[str, str]]:
    """Assess every claim's narratives in one model call; return assessments and explanations."""
    layout = _layout(claims, narratives, evidence, quotes)
    if not layout.narratives:
        return [], {}
    max_tokens = min(
        _TOKENS_CAP,
        _TOKENS_BASE
        + _TOKENS_PER_CLAIM * len(layout.claims)
        + _TOKENS_PER_NARRATIVE * len(layout.narratives),
    )
    answer = await llm.complete(
        stage=STAGE,
        system=system_prompt(TASK),
        user=layout.user,
        schema=JudgeOutput,
        max_tokens=max_tokens,
        meter=meter,
    )
    return _read(answer, layout)


async def assess(
    claims: Sequence[Claim],
    narratives: Sequence[Narrative],
    evidence: Sequence[Evidence],
    quotes: Sequence[Quote],
    *,
    llm: LLMClient,
    meter: UsageMeter | None = None,
) -> list[Assessment]:
    """Assess every claim's narratives in one model call."""
    assessments, _ = await assess_with_explanations(
        claims, narratives, evidence, quotes, llm=llm, meter=meter
    )
    return assessments


def is_image_provenance(evidence: Evidence) -> bool:
    """Return whether evidence shows where an image comes from (no such evidence exists yet)."""
    return False


def contradicted_facets(assessment: Assessment) -> list[str]:
    """Return the factual facets (who/what/when/where) the assessment marks conflicting."""
    return [
        f.facet
        for f in assessment.facets
        if f.facet in FACTUAL_FACETS and f.status == "conflicting"
    ]


@dataclass(frozen=True)
class _Usable:
    """A narrative assessed as relevant, with its citable evidence (representative first)."""

    narrative: Narrative
    assessment: Assessment
    members: tuple[Evidence, ...]

    @property
    def best_rank(self) -> int:
        return min(e.tier.rank for e in self.members)


def _usable(
    claim: Claim,
    assessments: Sequence[Assessment],
    narratives: Sequence[Narrative],
    by_id: dict[str, Evidence],
) -> list[_Usable]:
    mine = {n.id: n for n in narratives if n.claim_id == claim.id}
    order = list(mine)
    usable: dict[str, _Usable] = {}
    for a in assessments:
        narrative = mine.get(a.narrative_id)
        if a.claim_id != claim.id or narrative is None or a.relation is Relation.IRRELEVANT:
            continue
        ids = dict.fromkeys((narrative.representative_id, *narrative.evidence_ids))
        members = tuple(by_id[i] for i in ids if i in by_id and by_id[i].tier.citable)
        if members and narrative.id not in usable:
            usable[narrative.id] = _Usable(narrative, a, members)
    return sorted(usable.values(), key=lambda u: order.index(u.narrative.id))


def _refutes(u: _Usable, refuting: set[str]) -> bool:
    return bool(contradicted_facets(u.assessment)) or any(e.id in refuting for e in u.members)


def _template(label: Label, rule: str, deciding: Sequence[_Usable]) -> str:
    reason = deciding[0].assessment.rationale.rstrip(".") if deciding else ""
    intro = {
        "image": "Evidence on where the image comes from supports the claim",
        "support": "Credible sources support the claim and none contradicts it",
        "support-by-tier": "More credible sources support the claim than contradict it",
        "tie": "Equally credible sources support and contradict the claim",
        "contradiction": "Credible sources contradict the claim",
        "context": "Credible sources add context that changes the claim's meaning",
    }[rule]
    return f"{intro}: {reason}." if reason else f"{intro}."


def decide(
    claim: Claim,
    assessments: Sequence[Assessment],
    narratives: Sequence[Narrative],
    evidence: Sequence[Evidence],
    *,
    explanation: str = "",
    quotes: Sequence[Quote] = (),
    image_provenance: ImageProvenance = is_image_provenance,
) -> ClaimVerdict:
    """Decide a claim's label from its narratives' assessments by CRAVE's tiered rule.

    Usable narratives are those assessed supports/conflicts with at least one citable item.
    1. a supporting narrative with image-provenance evidence -> accurate;
    2. support and no conflict -> accurate; support and conflict -> the side whose best
       evidence has the better credibility tier wins (conflict: see 3); a tie -> misleading;
    3. conflict only -> false when a conflicting narrative contradicts a fact (who/what/when/
       where "conflicting", or a REFUTES quote or stance), else misleading;
    4. no usable narrative -> unverifiable (no evidence cited).
    Partly accurate is never given here: it is the post-level label `combine` makes.
    """
    by_id = {e.id: e for e in evidence}
    usable = _usable(claim, assessments, narratives, by_id)
    support = [u for u in usable if u.assessment.relation is Relation.SUPPORTS]
    conflict = [u for u in usable if u.assessment.relation is Relation.CONFLICTS]
    refuting = {q.evidence_id for q in quotes if q.stance is Stance.REFUTES}
    refuting |= {e.id for e in evidence if e.stance is Stance.REFUTES}
    imaged = [u for u in support if any(image_provenance(e) for e in u.members)]
    label, rule, deciding = Label.UNVERIFIABLE, "none", list[_Usable]()
    if imaged:
        label, rule, deciding = Label.ACCURATE, "image", imaged
    elif support and not conflict:
        label, rule, deciding = Label.ACCURATE, "support", support
    elif support and conflict:
        best_support = min(u.best_rank for u in support)
        best_conflict = min(u.best_rank for u in conflict)
        if best_support < best_conflict:
            label, rule, deciding = Label.ACCURATE, "support-by-tier", support
        elif best_support == best_conflict:
            label, rule, deciding = Label.MISLEADING, "tie", usable
    if conflict and rule == "none":
        factual = [u for u in conflict if _refutes(u, refuting)]
        if factual:
            rest = [u for u in conflict if u not in factual]
            label, rule, deciding = Label.FALSE, "contradiction", factual + rest
        else:
            label, rule, deciding = Label.MISLEADING, "context", conflict
    log.info(
        "claim decided",
        extra={"claim_id": claim.id, "label": label.value, "rule": rule, "usable": len(usable)},
    )
    if label is Label.UNVERIFIABLE:
        reason = (
            "None of the retrieved evidence bears on this claim."
            if any(a.claim_id == claim.id for a in assessments)
            else "No credible evidence about this claim was found."
        )
        return ClaimVerdict(claim_id=claim.id, label=label, rationale=reason)
    # members[0] is the representative (unless it is not citable): representatives first
    cited = dict.fromkeys(
        [*(u.members[0].id for u in deciding), *(e.id for u in deciding for e in u.members)]
    )
    rationale = explanation.strip() or _template(label, rule, deciding)
    return ClaimVerdict(
        claim_id=claim.id, label=label, rationale=rationale, evidence_ids=tuple(cited)
    )


def missing_facets(assessments: Sequence[Assessment]) -> dict[str, list[str]]:
    """Return, per claim id, the facets every relevant narrative reports missing.

    A claim with no relevant narrative gets every facet: all of it has to be searched again.
    """
    relevant: dict[str, list[Assessment]] = {}
    for a in assessments:
        bucket = relevant.setdefault(a.claim_id, [])
        if a.relation is not Relation.IRRELEVANT:
            bucket.append(a)
    result: dict[str, list[str]] = {}
    for claim_id, mine in relevant.items():
        result[claim_id] = [
            facet
            for facet in FACETS
            if all(any(f.facet == facet and f.status == "missing" for f in a.facets) for a in mine)
        ]
    return result


def _stances(
    evidence: Sequence[Evidence],
    narratives: Sequence[Narrative],
    assessments: Sequence[Assessment],
    quotes: Sequence[Quote],
) -> tuple[Evidence, ...]:
    """Return evidence with stances from quotes first, else from their narrative's relation."""
    strength = {Stance.REFUTES: 3, Stance.SUPPORTS: 2, Stance.CONTEXT: 1}
    stance: dict[str, Stance] = {}
    for q in quotes:
        old = stance.get(q.evidence_id)
        if q.stance in strength and (old is None or strength[q.stance] > strength[old]):
            stance[q.evidence_id] = q.stance
    by_key = {(n.claim_id, n.id): n for n in narratives}
    for a in assessments:
        narrative = by_key.get((a.claim_id, a.narrative_id))
        if narrative is None or a.relation is Relation.IRRELEVANT:
            continue
        if a.relation is Relation.SUPPORTS:
            from_relation = Stance.SUPPORTS
        else:
            from_relation = Stance.REFUTES if contradicted_facets(a) else Stance.CONTEXT
        for evidence_id in narrative.evidence_ids:
            stance.setdefault(evidence_id, from_relation)
    return tuple(
        dataclasses.replace(e, stance=stance[e.id]) if e.id in stance else e for e in evidence
    )


class ModelJudge:
    """The language-model judge: one call per post, labels decided in code, never fails."""

    name = "model"

    def __init__(
        self,
        llm: LLMClient,
        *,
        fallback: Judge,
        embedder: Embedder | None = None,
        max_k: int = 4,
        meter: UsageMeter | None = None,
        image_provenance: ImageProvenance = is_image_provenance,
    ) -> None:
        self.llm = llm
        self.fallback = fallback
        self.embedder = embedder
        self.max_k = max_k
        self.meter = meter
        self.image_provenance = image_provenance

    async def judge(
        self, claims: Sequence[Claim], evidence: Sequence[Evidence]
    ) -> tuple[Verdict, tuple[Evidence, ...]]:
        """Return the verdict and stances, clustering narratives here (the `Judge` protocol)."""
        if self.embedder is None:
            log.warning("model judge has no embedder", extra={"fallback": self.fallback.name})
            return await self.fallback.judge(claims, evidence)
        narratives: list[Narrative] = []
        for claim in claims:
            narratives += await cluster_narratives(
                claim.id, evidence, embedder=self.embedder, max_k=self.max_k
            )
        verdict, updated, _ = await self.judge_with(
            claims, evidence, narratives=narratives, quotes=()
        )
        return verdict, updated

    async def judge_with(
        self,
        claims: Sequence[Claim],
        evidence: Sequence[Evidence],
        *,
        narratives: Sequence[Narrative],
        quotes: Sequence[Quote],
    ) -> tuple[Verdict, tuple[Evidence, ...], list[Assessment]]:
        """Return the verdict, the evidence with stances, and the narratives' assessments."""
        try:
            assessments, explanations = await assess_with_explanations(
                claims, narratives, evidence, quotes, llm=self.llm, meter=self.meter
            )
        except ModelError as exc:
            log.warning(
                "model judge failed, using fallback",
                extra={"stage": exc.stage, "reason": exc.reason, "fallback": self.fallback.name},
            )
            verdict, updated = await self.fallback.judge(claims, evidence)
            return verdict, updated, []
        verdicts = tuple(
            decide(
                claim,
                assessments,
                narratives,
                evidence,
                explanation=explanations.get(claim.id, ""),
                quotes=quotes,
                image_provenance=self.image_provenance,
            )
            for claim in claims
        )
        verdict = Verdict(label=combine([v.label for v in verdicts]), claims=verdicts)
        return verdict, _stances(evidence, narratives, assessments, quotes), assessments
