"""The last word on a verdict, in code: rules the label must obey whatever the judge said.

The judges read pages that may carry instructions, and a model can be wrong or steered. Where
the evidence is explicit, these rules overrule the judge's label (stage "judgement", after the
model judge, the fact-check deferral and the no-model judge alike; `run.py` calls
`enforce_rules` once, on every path):

1. no credible evidence cited for a claim -> `unverifiable`: a verdict needs retrieved, citable
   evidence of that claim (DESIGN: "never guess");
2. a contradiction from credible evidence of the claim — a quote the extraction stage found
   refuting, or a date, place or number conflict found by graph verification — means the claim
   cannot be `accurate`. It becomes `misleading` when supporting quotes or a graph conflict
   stand beside the refutation, or only the graph conflicts; and `unverifiable` when a refuting
   quote stands alone. A supporting quote stands beside a refutation only when its source is at
   least as credible as the most credible refuting one (CRAVE's tier order): an unrated page
   that "confirms" a claim a rated newsroom refutes cannot make it `misleading` (the real local
   model read such an attacker's page as support in the news-only safety cases). A refuting
   quote alone is unsettled: the judge read the same evidence as support, so the check's two
   readings disagree and neither settles the claim. (It was `false` until the local model's
   gold-mode run: there all three claims this rule decided were gold `accurate`, two of them
   turned `false` on a refutation the extraction stage misread. A wrong `false` is the costliest
   error; a refuting quote the judge also reads as refuting is `false` by the judge's own label.)
3. the label agrees with the stances of the quotes it cites: `false` resting only on quotes
   that support the claim, with no refutation, no conflict and no cited fact-check that rates
   it false, becomes `unverifiable` (a wrong `false` is the costliest error a public bot makes;
   a rated fact-check outranks a quote's stance, which a page could have steered);
4. the post's photo shown out of context — citable image provenance (an earlier appearance of
   the photo) that predates the event the post describes or whose caption names another place
   (`pipeline.judge.tiered.out_of_context`) — makes the claim it illustrates `misleading`,
   citing that appearance first, whatever the judge said; only `false` stands (a refutation of
   the text is the stronger finding, and the reply still says what was found about the photo).

Failure policy: pure code on typed records; never raises.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence

from pipeline.judge.claimreview import combine
from pipeline.judge.tiered import out_of_context_verdict
from pipeline.records.domain import (
    Basis,
    ClaimGraph,
    ClaimVerdict,
    Evidence,
    GraphConflict,
    Label,
    Quote,
    Stance,
    Verdict,
)

log = logging.getLogger(__name__)

NO_EVIDENCE = "No credible evidence about this claim was found."
UNSETTLED = (
    "A credible source quoted here contradicts the claim, yet the evidence was also read as "
    "supporting it: it does not settle the claim."
)


def enforce_rules(
    verdict: Verdict,
    evidence: Sequence[Evidence],
    quotes: Sequence[Quote],
    graphs: Sequence[ClaimGraph] = (),
) -> Verdict:
    """Return the verdict with every claim's label made consistent with the explicit evidence."""
    by_id = {e.id: e for e in evidence}
    graph_of = {g.claim_id: g for g in graphs}
    claims = tuple(
        _image_rule(_rule(cv, by_id, quotes, graph_of.get(cv.claim_id)), evidence)
        for cv in verdict.claims
    )
    if claims == verdict.claims:
        return verdict
    return Verdict(label=combine([cv.label for cv in claims]), claims=claims)


def _rule(
    cv: ClaimVerdict,
    by_id: dict[str, Evidence],
    quotes: Sequence[Quote],
    graph: ClaimGraph | None,
) -> ClaimVerdict:
    mine = {i: e for i, e in by_id.items() if e.claim_id == cv.claim_id and e.tier.citable}
    stances: dict[str, set[Stance]] = {}
    for q in quotes:
        if q.evidence_id in mine:
            stances.setdefault(q.evidence_id, set()).add(q.stance)
    refuting = [i for i, s in stances.items() if Stance.REFUTES in s]
    most_credible = min((mine[i].tier.rank for i in refuting), default=None)
    supporting = [
        i
        for i, s in stances.items()
        if Stance.SUPPORTS in s and (most_credible is None or mine[i].tier.rank <= most_credible)
    ]
    conflicts = [c for c in (graph.conflicts if graph else ()) if c.evidence_id in mine]
    cited = [i for i in cv.evidence_ids if i in mine]
    label, reason, ids = cv.label, "", list(cv.evidence_ids)
    if label is not Label.UNVERIFIABLE and not cited:
        label, reason = Label.UNVERIFIABLE, NO_EVIDENCE
    elif label is Label.ACCURATE and (refuting or conflicts):
        alone = refuting and not supporting and not conflicts
        label = Label.UNVERIFIABLE if alone else Label.MISLEADING
        against = refuting or [c.evidence_id for c in conflicts]
        ids = list(dict.fromkeys([*against, *ids]))
        reason = UNSETTLED if alone else _contradiction(conflicts)
    elif label is Label.FALSE and not refuting and not conflicts and not _reviewed(cv, mine):
        cited_stances = set().union(*(stances.get(i, set()) for i in cited))
        if Stance.SUPPORTS in cited_stances and Stance.REFUTES not in cited_stances:
            label = Label.UNVERIFIABLE
            reason = "The sources cited support the claim rather than refute it; it is not settled."
    if label is cv.label:
        return cv
    log.warning(
        "judge label overruled by the verdict rules",
        extra={"claim": cv.claim_id, "judge": cv.label.value, "rule": label.value},
    )
    basis = Basis.NO_EVIDENCE if reason == NO_EVIDENCE else Basis.RULES
    return dataclasses.replace(
        cv, label=label, rationale=reason, evidence_ids=tuple(ids), basis=basis
    )


def _image_rule(cv: ClaimVerdict, evidence: Sequence[Evidence]) -> ClaimVerdict:
    """Return cv made misleading when its claim's photo is shown out of context (rule 4)."""
    traced = out_of_context_verdict(cv.claim_id, evidence)
    if traced is None or cv.label in (Label.MISLEADING, Label.FALSE):
        return cv
    log.warning(
        "judge label overruled by image provenance",
        extra={"claim": cv.claim_id, "judge": cv.label.value, "rule": traced.label.value},
    )
    # An unverifiable verdict lists every piece of evidence it saw: none of it decided.
    kept = () if cv.label is Label.UNVERIFIABLE else cv.evidence_ids
    ids = tuple(dict.fromkeys([*traced.evidence_ids, *kept]))
    return dataclasses.replace(traced, evidence_ids=ids, shown=cv.shown)


def _reviewed(cv: ClaimVerdict, mine: dict[str, Evidence]) -> bool:
    """Return whether a cited fact-check's ClaimReview gives the verdict's own label."""
    return any(
        (review := mine[i].document.claim_review) is not None and review.label is cv.label
        for i in cv.evidence_ids
        if i in mine
    )


def _contradiction(conflicts: Sequence[GraphConflict]) -> str:
    parts = [
        f"the {c.kind} is wrong: the claim says {c.claim_value}, the source says {c.evidence_value}"
        for c in conflicts
    ]
    if not parts:
        return "A credible source quoted here contradicts the claim."
    text = "; ".join(dict.fromkeys(parts))
    return text[0].upper() + text[1:] + "."
