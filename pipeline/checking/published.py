"""The published fact-checks stage of a check: match each claim before evidence retrieval.

Each claim is matched against the operator's fact-check index (`pipeline.factchecks`), and a
short post as a whole too: a tweet often states its claim across sentences that the claim stage
splits. A claim with an accepted match gets the fact-check as evidence (a document built from
the review, cited with its link), and, where the review carries a rating factbot understands,
its verdict from that rating (`from_fact_checks`). A review without a rating, or with one not
understood, is cited for what it says and the verdict is left to the evidence.

The evidence bound holds: a review published after `before` is not used (a post is judged with
what could be known when it was written).

Failure policy: a failing matcher (an embedder that cannot load) is logged and the check goes on
without matches; it never fails the check.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from datetime import datetime

from pipeline.credibility.domains import registrable_domain
from pipeline.errors import FactbotError
from pipeline.evidence.ranking import Rater
from pipeline.factchecks.matching import FactCheckMatcher
from pipeline.judge.claimreview import STANCE_OF, combine
from pipeline.ports import FactCheckIndex
from pipeline.records.domain import (
    Basis,
    Claim,
    ClaimReview,
    ClaimVerdict,
    Document,
    Evidence,
    Label,
    Passage,
    Post,
    Stance,
    Tier,
    Verdict,
)
from pipeline.records.factchecks import ClaimMatch, FactCheck, outdated
from pipeline.util.text import word_count

log = logging.getLogger(__name__)

SHORT_POST_WORDS = 60  # a post this short is also matched as a whole


async def match_claims(
    claims: Sequence[Claim],
    post: Post,
    matcher: FactCheckMatcher,
    *,
    before: datetime | None,
) -> list[ClaimMatch]:
    """Return the best match of each claim that has one (accepted or not), best first."""
    if not claims:
        return []
    texts = [c.text for c in claims]
    languages: list[str | None] = [c.language or post.language for c in claims]
    whole = len(claims) > 0 and word_count(post.text) <= SHORT_POST_WORDS
    if whole and post.text.strip() not in texts:
        texts.append(post.text)
        languages.append(post.language)
    try:
        ranked = await matcher.match(texts, languages=languages, limit=5)
    except (FactbotError, OSError, RuntimeError, ValueError):  # a model that cannot load,
        # an index that cannot be read: the check goes on without matches, and the log says so
        log.exception("fact-check matching failed", extra={"claims": len(claims)})
        return []
    ranked = [[m for m in found if _in_time(m.fact_check, before)] for found in ranked]
    post_best = ranked[len(claims)][0] if len(ranked) > len(claims) and ranked[-1] else None
    out: list[ClaimMatch] = []
    for claim, found in zip(claims, ranked, strict=False):
        best = found[0] if found else None
        own = best is not None and best.accepted
        if not own and post_best is not None and post_best.accepted:
            # the post's match stands for one claim: the first without an accepted one of its own
            out.append(ClaimMatch(claim.id, post_best, via_post=True))
            post_best = None
        elif best is not None:
            out.append(ClaimMatch(claim.id, best))
    return out


def _in_time(review: FactCheck, before: datetime | None) -> bool:
    return before is None or review.review_date is None or review.review_date < before


def review_document(review: FactCheck) -> Document:
    """Return a published review as the document a reply cites: its article, its words."""
    text = review.claim_reviewed
    if review.headline and review.headline != review.claim_reviewed:
        text = f"{review.headline}. {text}"
    return Document(
        id=review.id,
        url=review.url,
        domain=review.publisher_site or registrable_domain(review.url),
        title=review.headline or review.claim_reviewed,
        text=text,
        published_at=review.review_date,
        publisher=review.publisher,
        claim_review=ClaimReview(
            claim_reviewed=review.claim_reviewed,
            rating=review.rating or "",
            label=review.label,
            reviewer=review.publisher,
            url=review.url,
            date_published=review.review_date,
        ),
    )


def stored_documents(
    matches: Sequence[ClaimMatch],
    index: FactCheckIndex,
    documents: Callable[[str], Document | None],
) -> Callable[[str], Document | None]:
    """Return the citation check's lookup: matched reviews from the fact-check index (still
    stored there, under the same URL), every other document from the evidence index."""
    reviews = {m.match.fact_check.id: m.match.fact_check for m in accepted(matches)}

    def lookup(document_id: str) -> Document | None:
        review = reviews.get(document_id)
        if review is None:
            return documents(document_id)
        found = index.fact_check_by_url(review.url)
        return review_document(found[1]) if found is not None else None

    return lookup


def fact_check_evidence(claim_match: ClaimMatch, rater: Rater) -> Evidence:
    """Return an accepted match as the claim's evidence: the review, citable by its link."""
    review = claim_match.match.fact_check
    document = review_document(review)
    text = document.text
    tier = rater.rate(review.url).tier
    # the operator imported this fact-checker's reviews: an unrated publisher is still citable
    tier = Tier.MEDIUM if tier is Tier.UNRATED else tier
    return Evidence(
        id=f"fc-{claim_match.claim_id[:12]}-{review.id[:12]}",
        claim_id=claim_match.claim_id,
        passage=Passage(id=f"fc-{review.id}", document_id=review.id, position=0, text=text),
        document=document,
        relevance=claim_match.match.score,
        tier=tier,
        stance=STANCE_OF.get(review.label, Stance.UNKNOWN) if review.label else Stance.UNKNOWN,
    )


def accepted(matches: Sequence[ClaimMatch]) -> list[ClaimMatch]:
    """Return the matches the decision accepted."""
    return [m for m in matches if m.match.accepted]


def with_fact_checks(
    evidence: Sequence[Evidence], matches: Sequence[ClaimMatch], rater: Rater
) -> list[Evidence]:
    """Return the evidence with each accepted match's review first for its claim."""
    extra = []
    for m in accepted(matches):
        ev = fact_check_evidence(m, rater)
        if ev.tier.citable:
            extra.append(ev)
    known = {e.document.url for e in extra}
    rest = [
        e
        for e in evidence
        if not (e.document.url in known and e.claim_id in {x.claim_id for x in extra})
    ]
    return [*extra, *rest]


_OPPOSED = {
    Label.ACCURATE: {Label.FALSE, Label.MISLEADING},
    Label.PARTLY_ACCURATE: set(),
    Label.MISLEADING: {Label.ACCURATE},
    Label.FALSE: {Label.ACCURATE},
}


def checked_by(review: FactCheck, *, reference: datetime) -> str:
    """Return "Checked by PolitiFact on 3 May 2020: False" (English; the reply translates)."""
    when = f" on {review.review_date:%-d %B %Y}" if review.review_date else ""
    said = review.rating or f'"{review.headline or review.claim_reviewed}"'
    text = f"Checked by {review.publisher}{when}: {said}."
    if outdated(review.review_date, reference):
        text += f" The check is from {review.review_date:%Y}; things may have changed since."
    return text


def from_fact_checks(
    verdict: Verdict,
    evidence: Sequence[Evidence],
    matches: Sequence[ClaimMatch],
    *,
    reference: datetime,
) -> Verdict:
    """Return the verdict with each claim a rated, accepted fact-check matches decided by it.

    Where the claim was decided from fresh evidence the opposite way (the review says false,
    newer credible pages say accurate, or the reverse), the claim is left unverifiable and the
    rationale says both: factbot does not pick. A review without a rating factbot understands
    is cited (its evidence listed first) and the verdict stays the evidence's.
    """
    by_claim = {m.claim_id: m for m in accepted(matches)}
    if not by_claim:
        return verdict
    review_ev = {e.claim_id: e for e in evidence if e.id.startswith("fc-")}
    claims: list[ClaimVerdict] = []
    for cv in verdict.claims:
        m, ev = by_claim.get(cv.claim_id), review_ev.get(cv.claim_id)
        if m is None or ev is None:
            claims.append(cv)
            continue
        review = m.match.fact_check
        said = checked_by(review, reference=reference)
        ids = (ev.id, *(i for i in cv.evidence_ids if i != ev.id))
        label = review.label
        if label is None or label is Label.UNVERIFIABLE:
            claims.append(dataclasses.replace(cv, evidence_ids=ids))
            continue
        fresh = cv.basis not in (Basis.REVIEW, Basis.NO_EVIDENCE, Basis.NO_MATCH, Basis.UNKNOWN)
        if fresh and cv.label in _OPPOSED.get(label, set()):
            claims.append(
                ClaimVerdict(
                    claim_id=cv.claim_id,
                    label=Label.UNVERIFIABLE,
                    rationale=f"{said} Newer credible evidence says otherwise ({cv.label}).",
                    evidence_ids=ids,
                    basis=Basis.CONFLICT,
                )
            )
            continue
        claims.append(
            ClaimVerdict(
                claim_id=cv.claim_id,
                label=label,
                rationale=said,
                evidence_ids=ids,
                basis=Basis.REVIEW,
            )
        )
    return Verdict(label=combine([c.label for c in claims]), claims=tuple(claims))


__all__ = [
    "SHORT_POST_WORDS",
    "accepted",
    "checked_by",
    "fact_check_evidence",
    "from_fact_checks",
    "match_claims",
    "with_fact_checks",
]
