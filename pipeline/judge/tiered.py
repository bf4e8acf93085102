"""CRAVE's tiered rule (stage "judge", in code): a claim's label from its narratives' readings.

The model judge (`pipeline.judge.model`) asks the model how each narrative relates to a claim and
how it compares on who/what/when/where/why/how; everything here is deterministic code on those
readings and the extraction stage's quotes:

- `decide` picks the label by the tiered rule and the evidence it rests on;
- `consistent` checks a reading against the quotes of the same evidence (a "supports" reading of
  a narrative whose evidence was quoted as refuting the claim is not trusted);
- `missing_facets` tells refinement which facts to search for again;
- `with_stances` records on each piece of evidence the stance the check settled on.

Failure policy: nothing here raises on model output; readings that do not fit are dropped.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pipeline.records.domain import (
    FACETS,
    Assessment,
    Basis,
    Claim,
    ClaimVerdict,
    Evidence,
    Label,
    Narrative,
    Quote,
    Relation,
    Stance,
)

log = logging.getLogger(__name__)

FACTUAL_FACETS = ("who", "what", "when", "where")  # a conflict here is a factual contradiction

ImageProvenance = Callable[[Evidence], bool]


def is_image_provenance(evidence: Evidence) -> bool:
    """Return whether evidence shows where the post's image comes from (an ImageTrace)."""
    return evidence.image is not None


def out_of_context(evidence: Evidence) -> bool:
    """Return whether evidence is citable image provenance that conflicts with the post.

    An earlier appearance of the post's photo that predates the event it describes, or whose
    caption names another place or date: the photo does not show what the post says (CRAVE,
    RAV). Code decides on it first, on every path.
    """
    trace = evidence.image
    return trace is not None and bool(trace.conflict) and evidence.tier.citable


def out_of_context_verdict(claim_id: str, evidence: Sequence[Evidence]) -> ClaimVerdict | None:
    """Return the misleading verdict the claim's out-of-context image evidence makes, or None."""
    found = [e for e in evidence if e.claim_id == claim_id and out_of_context(e)]
    if not found:
        return None
    details = "; ".join(dict.fromkeys(e.image.detail for e in found if e.image is not None))
    return ClaimVerdict(
        claim_id=claim_id,
        label=Label.MISLEADING,
        rationale=f"The photo is shown out of context: {details}.",
        evidence_ids=tuple(e.id for e in found),
        basis=Basis.RULES,
    )


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
    0. citable image provenance that conflicts with the post (`out_of_context`) -> misleading,
       whatever the narratives' readings (code decides on explicit provenance first);
    1. a supporting narrative with image-provenance evidence that fits the post -> accurate;
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
    traced = out_of_context_verdict(claim.id, evidence)
    if traced is not None:
        log.info(
            "claim decided",
            extra={"claim_id": claim.id, "label": "misleading", "rule": "out-of-context"},
        )
        return traced
    imaged = [
        u for u in support if any(image_provenance(e) and not out_of_context(e) for e in u.members)
    ]
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
        basis = (
            Basis.MODEL if any(a.claim_id == claim.id for a in assessments) else Basis.NO_EVIDENCE
        )
        return ClaimVerdict(claim_id=claim.id, label=label, rationale=reason, basis=basis)
    # members[0] is the representative (unless it is not citable): representatives first
    cited = dict.fromkeys(
        [*(u.members[0].id for u in deciding), *(e.id for u in deciding for e in u.members)]
    )
    rationale = explanation.strip() or _template(label, rule, deciding)
    return ClaimVerdict(
        claim_id=claim.id,
        label=label,
        rationale=rationale,
        evidence_ids=tuple(cited),
        basis=Basis.MODEL,
    )


def consistent(
    assessments: Sequence[Assessment],
    narratives: Sequence[Narrative],
    quotes: Sequence[Quote],
) -> list[Assessment]:
    """Return the assessments, a reading that its own evidence's quotes contradict made void.

    The extraction stage read the same pages one claim at a time; when it quoted a narrative's
    evidence as refuting the claim and the judge still reads the narrative as supporting it, one
    of the two readings is wrong (or was steered by text in the page). Such a narrative is not
    used to decide (relation "irrelevant"), so the claim rests on the evidence both agree on.
    """
    refuting = {q.evidence_id for q in quotes if q.stance is Stance.REFUTES}
    members = {(n.claim_id, n.id): set(n.evidence_ids) | {n.representative_id} for n in narratives}
    checked: list[Assessment] = []
    for a in assessments:
        ids = members.get((a.claim_id, a.narrative_id), set())
        if a.relation is Relation.SUPPORTS and ids & refuting:
            log.warning(
                "judge reading contradicts the quotes",
                extra={"claim_id": a.claim_id, "narrative_id": a.narrative_id},
            )
            a = dataclasses.replace(
                a,
                relation=Relation.IRRELEVANT,
                rationale="Not used: the quotes from this evidence contradict the judge's reading.",
            )
        checked.append(a)
    return checked


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


def with_stances(
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
