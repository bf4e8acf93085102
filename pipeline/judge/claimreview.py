"""Judgement without a language model: adopt a matching fact-check's rating, never guess.

A claim gets a verdict other than `unverifiable` only when one of its evidence documents carries
a schema.org ClaimReview whose reviewed claim says the same thing: embedding cosine at least
`match_threshold`, the same negation polarity, and no number in the post's claim that the
reviewed claim lacks. Everything else is `unverifiable`. The overall verdict is combined from the
per-claim verdicts by `combine`.

Failure policy: never raises; evidence without a usable review is simply not decisive.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from pipeline.embedding.embedder import Embedder
from pipeline.records.domain import Basis, Claim, ClaimVerdict, Evidence, Label, Stance, Verdict

_NEGATION_RE = re.compile(
    r"\b(no|not|never|none|nobody|nothing|neither|nor|without|cannot|isn't|aren't|wasn't|"
    r"weren't|doesn't|don't|didn't|won't|can't|hasn't|haven't|hadn't)\b|n't\b",
    re.IGNORECASE,
)
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")

# The evidence stance a review's label gives the page that carries it.
STANCE_OF = {
    Label.ACCURATE: Stance.SUPPORTS,
    Label.FALSE: Stance.REFUTES,
    Label.MISLEADING: Stance.CONTEXT,
    Label.PARTLY_ACCURATE: Stance.CONTEXT,
    Label.UNVERIFIABLE: Stance.UNKNOWN,
}


class Judge(Protocol):
    """Decides a verdict per claim from evidence; the language-model judge has the same shape."""

    name: str

    async def judge(
        self, claims: Sequence[Claim], evidence: Sequence[Evidence]
    ) -> tuple[Verdict, tuple[Evidence, ...]]:
        """Return the verdict and the evidence with stances filled in."""
        ...


def _polarity(text: str) -> int:
    return len(_NEGATION_RE.findall(text)) % 2


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER_RE.findall(text)}


def same_claim(claim: str, reviewed: str) -> bool:
    """Return whether two wordings pass the lexical checks (negation, numbers)."""
    if _polarity(claim) != _polarity(reviewed):
        return False
    missing = _numbers(claim) - _numbers(reviewed)
    return not missing


def combine(labels: Sequence[Label]) -> Label:
    """Combine per-claim labels into the post's label.

    No decided claim -> unverifiable; all decided claims agree -> that label; accurate (or partly
    accurate) mixed with false or misleading -> partly accurate; false mixed with misleading ->
    false.
    """
    decided = [label for label in labels if label is not Label.UNVERIFIABLE]
    if not decided:
        return Label.UNVERIFIABLE
    kinds = set(decided)
    if len(kinds) == 1:
        return decided[0]
    if kinds & {Label.ACCURATE, Label.PARTLY_ACCURATE}:
        return Label.PARTLY_ACCURATE
    return Label.FALSE if Label.FALSE in kinds else Label.MISLEADING


class ReviewMatchJudge:
    """The no-model judge: adopts ratings of fact-checks that match a claim closely."""

    name = "no-model"

    def __init__(self, embedder: Embedder, *, match_threshold: float = 0.84) -> None:
        self.embedder = embedder
        self.match_threshold = match_threshold

    async def judge(
        self, claims: Sequence[Claim], evidence: Sequence[Evidence]
    ) -> tuple[Verdict, tuple[Evidence, ...]]:
        """Return per-claim verdicts and evidence stances."""
        reviewed = [
            e for e in evidence if e.document.claim_review and e.document.claim_review.label
        ]
        texts = [c.text for c in claims] + [
            e.document.claim_review.claim_reviewed for e in reviewed if e.document.claim_review
        ]
        vectors = await self.embedder.embed(texts, role="query") if reviewed else np.zeros((0, 0))
        claim_vecs = {c.id: vectors[i] for i, c in enumerate(claims)} if reviewed else {}
        review_vecs = {e.id: vectors[len(claims) + i] for i, e in enumerate(reviewed)}
        stances: dict[str, Stance] = {}
        verdicts: list[ClaimVerdict] = []
        for claim in claims:
            best: tuple[float, Evidence] | None = None
            for ev in reviewed:
                review = ev.document.claim_review
                if ev.claim_id != claim.id or review is None:
                    continue
                score = float(claim_vecs[claim.id] @ review_vecs[ev.id])
                if score < self.match_threshold or not same_claim(
                    claim.text, review.claim_reviewed
                ):
                    continue
                if best is None or score > best[0]:
                    best = (score, ev)
            verdicts.append(self._verdict(claim, best, evidence))
            if best is not None and best[1].document.claim_review is not None:
                label = best[1].document.claim_review.label or Label.UNVERIFIABLE
                stances[best[1].id] = STANCE_OF[label]
        updated = tuple(
            dataclasses.replace(e, stance=stances[e.id]) if e.id in stances else e for e in evidence
        )
        overall = combine([v.label for v in verdicts])
        return Verdict(label=overall, claims=tuple(verdicts)), updated

    def _verdict(
        self, claim: Claim, best: tuple[float, Evidence] | None, evidence: Sequence[Evidence]
    ) -> ClaimVerdict:
        if best is None or best[1].document.claim_review is None:
            mine = tuple(e.id for e in evidence if e.claim_id == claim.id)
            reason = (
                "no fact-check in the retrieved evidence matches this claim"
                if mine
                else "no credible evidence about this claim was found"
            )
            return ClaimVerdict(
                claim_id=claim.id,
                label=Label.UNVERIFIABLE,
                rationale=reason,
                evidence_ids=mine,
                basis=Basis.NO_MATCH if mine else Basis.NO_EVIDENCE,
            )
        score, ev = best
        review = ev.document.claim_review
        assert review is not None  # guarded above
        reviewer = review.reviewer or ev.document.domain
        return ClaimVerdict(
            claim_id=claim.id,
            label=review.label or Label.UNVERIFIABLE,
            rationale=(
                f'{reviewer} rated the claim "{review.claim_reviewed}" as "{review.rating}" '
                f"(match {score:.2f})"
            ),
            evidence_ids=(ev.id,),
            basis=Basis.REVIEW,
        )
