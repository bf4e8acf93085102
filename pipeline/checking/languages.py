"""The languages of a check: the post's and each claim's, and who may judge a claim in which.

`identify_post` sets `Post.language` (the platform's own field is only a hint) and
`identify_claims` each claim's: a post may mix languages, and a claim keeps its own.

factbot's stance model reads English only. `decide_readable` is the one rule that keeps it off
every other claim, wherever its verdict would be used (the path without a language model and
the hybrid judge, both in `pipeline.run`): a claim in another language, or in an undetermined
one, is not shown to it and gets `unverifiable` with the reason stated (`Basis.LANGUAGE`). A
rated fact-check that matches the claim still decides it afterwards (`_reviews_first`,
`defer_to_fact_checks`), and where a language-model endpoint is configured the model judge's
reading stands, since the hybrid judge settles only towards a decisive verifier.

Failure policy: never raises; a claim whose language was not identified is read by its script
(Latin script or no letters: the stance model may read it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pipeline.graph.build import GRAPH_LANGUAGES
from pipeline.inputs.language import UNDETERMINED, LanguageIdentifier, script_language
from pipeline.judge.claimreview import combine
from pipeline.records.domain import (
    Basis,
    Claim,
    ClaimVerdict,
    Evidence,
    Label,
    Post,
    Verdict,
)
from pipeline.util.cpu import CpuPool, run_cpu
from pipeline.util.text import clean_post_text
from pipeline.verifier.verdict import Decided, VerifierJudge

STANCE_MODEL_LANGUAGES = frozenset({"en"})
MAX_NEAREST = 2  # sources an unread claim lists as the nearest found (X allows 2 links a reply)


async def identify_post(
    post: Post, identifier: LanguageIdentifier, *, cpu: CpuPool | None = None
) -> Post:
    """Return the post with its language identified (the platform's field as the hint)."""
    found = await run_cpu(cpu, identifier.identify, post.text, hint=post.language)
    return dataclasses.replace(post, language=found.code)


async def identify_claims(
    claims: Sequence[Claim],
    post: Post,
    identifier: LanguageIdentifier | None,
    *,
    cpu: CpuPool | None = None,
) -> list[Claim]:
    """Return the claims with their own languages, the post's as the hint for short ones."""
    if identifier is None:
        return list(claims)
    hint = post.language if post.language != UNDETERMINED else None
    return await run_cpu(cpu, _identify_all, list(claims), identifier, hint)


def _identify_all(
    claims: list[Claim], identifier: LanguageIdentifier, hint: str | None
) -> list[Claim]:
    return [
        dataclasses.replace(c, language=identifier.identify(c.text, hint=hint).code) for c in claims
    ]


def claim_language(claim: Claim) -> str | None:
    """Return the claim's language, from its script when it was not identified (None: Latin)."""
    if claim.language is not None:
        return claim.language
    return script_language(clean_post_text(claim.text))


def stance_model_reads(claim: Claim) -> bool:
    """Return whether the English-only stance model may judge the claim."""
    language = claim_language(claim)
    return language is None or language in STANCE_MODEL_LANGUAGES


def graph_reads(claim: Claim) -> bool:
    """Return whether the graph builder's parser (English spaCy) may parse the claim.

    A claim identified as another language gets no graph: the parse would be noise, no conflict
    it found could be trusted, and it costs seconds a claim (graphs are built before judgement).
    An undetermined one (a short English claim often is) keeps its graph, as before.
    """
    language = claim_language(claim)
    return language in (None, UNDETERMINED) or language in GRAPH_LANGUAGES


def unread_verdict(claim: Claim, evidence_ids: Sequence[str] = ()) -> ClaimVerdict:
    """Return the verdict of a claim no model that reads its language has judged.

    `evidence_ids` are its nearest credible sources: the reply lists them as such ("the most
    relevant sources found are [1] and [2]"), never as proof.
    """
    language = claim_language(claim) or UNDETERMINED
    named = "an undetermined language" if language == UNDETERMINED else f"language '{language}'"
    return ClaimVerdict(
        claim.id,
        Label.UNVERIFIABLE,
        f"This claim is in {named}; factbot's stance model reads English only, and no rated "
        "fact-check of it was found, so it was not judged.",
        evidence_ids=tuple(evidence_ids),
        basis=Basis.LANGUAGE,
    )


async def decide_readable(
    verifier: VerifierJudge, claims: Sequence[Claim], evidence: Sequence[Evidence]
) -> Decided:
    """Return the verifier's decision on the claims it can read; the others are unverifiable.

    The others' evidence keeps the stance retrieval gave it and none of it is quoted, so no
    later rule reads a stance the stance model guessed in a language it cannot read.
    """
    readable = [c for c in claims if stance_model_reads(c)]
    if len(readable) == len(claims):
        return await verifier.decide(claims, evidence)
    ids = {c.id for c in readable}
    decided = await verifier.decide(readable, [e for e in evidence if e.claim_id in ids])
    by_claim = {cv.claim_id: cv for cv in decided.verdict.claims}
    nearest: dict[str, list[str]] = {}
    for e in sorted(evidence, key=lambda e: e.relevance, reverse=True):
        if e.tier.citable:
            nearest.setdefault(e.claim_id, []).append(e.id)
    verdicts = tuple(
        by_claim[c.id]
        if c.id in by_claim
        else unread_verdict(c, nearest[c.id][:MAX_NEAREST])
        if c.id in nearest
        else ClaimVerdict(
            c.id,
            Label.UNVERIFIABLE,
            "No credible evidence about this claim was found.",
            basis=Basis.NO_EVIDENCE,
        )
        for c in claims
    )
    stanced = {e.id: e for e in decided.evidence}
    return Decided(
        verdict=Verdict(label=combine([cv.label for cv in verdicts]), claims=verdicts),
        evidence=tuple(stanced.get(e.id, e) for e in evidence),
        quotes=decided.quotes,
        readings=decided.readings,
    )
