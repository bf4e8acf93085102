"""A check on a post that repeats a published fact-check: matched before retrieval, decided by
the review's rating, cited by its link, said in the post's language; and what it must not do."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from pipeline.checking.published import fact_check_evidence, from_fact_checks
from pipeline.credibility.importers import load_seed
from pipeline.credibility.policy import SourcePolicy
from pipeline.embedding.e5 import E5Embedder
from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.factchecks.matching import FactCheckMatcher
from pipeline.inputs.language import LanguageIdentifier
from pipeline.inputs.posts import post_from_text
from pipeline.judge.claimreview import ReviewMatchJudge
from pipeline.records.domain import Basis, ClaimVerdict, Label, Verdict, utcnow
from pipeline.records.factchecks import ClaimMatch, FactCheck, FactCheckMatch
from pipeline.run import CheckConfig, CheckDeps, run_check
from storage import Store
from tests.support.factchecks import BLEACH as SHARED_BLEACH
from tests.support.factchecks import store_reviews

# the shared review, checked recently (no "may be outdated" note)
BLEACH = dataclasses.replace(SHARED_BLEACH, review_date=utcnow() - timedelta(days=200))
FRIES = FactCheck(
    url="https://www.snopes.com/fact-check/1-mcdonalds-any-size-fries/",
    claim_reviewed="McDonald's restaurants are offering $1 Any Size Fries between May 18 and 31.",
    publisher="Snopes",
    publisher_site="snopes.com",
    headline="$1 McDonald's Any Size Fries",
    review_date=datetime(2015, 5, 26, tzinfo=UTC),
    language="en",
)


@pytest.fixture
def deps(store: Store, embedder: OnnxEmbedder, e5_embedder: E5Embedder) -> CheckDeps:
    load_seed(store.sources)
    store_reviews(store.fact_checks, [BLEACH, FRIES], [embedder, e5_embedder])
    return CheckDeps(
        index=store.documents,
        embedder=embedder,
        rater=SourcePolicy(store.sources, unrated="allow"),
        judge=ReviewMatchJudge(embedder),
        languages=LanguageIdentifier(),
        factchecks=FactCheckMatcher(store.fact_checks, [embedder, e5_embedder]),
    )


async def test_a_rated_match_decides_the_claim_and_is_cited(deps: CheckDeps) -> None:
    post = post_from_text("Drinking bleach cures covid, spread the word!!", max_chars=1000)
    check = await run_check(post, deps=deps, config=CheckConfig())
    assert check.verdict.label is Label.FALSE
    [cv] = check.verdict.claims
    assert cv.basis is Basis.REVIEW
    assert check.correction.references[0].url == BLEACH.url
    assert "Checked by PolitiFact on" in check.correction.text
    assert "Pants on Fire (false)" in check.correction.text
    assert check.fact_checks and check.fact_checks[0].match.accepted
    assert "fact-checks" in [t.stage for t in check.timings]


async def test_the_reply_is_in_the_posts_language(deps: CheckDeps) -> None:
    post = post_from_text("Beber lejía cura el covid-19, compártelo", max_chars=1000)
    check = await run_check(post, deps=deps, config=CheckConfig())
    [match] = check.fact_checks
    assert match.match.fact_check.url == BLEACH.url
    if match.match.accepted:  # e5's cross-language cosine decides; the reply follows the post
        assert "Verificado por PolitiFact el" in check.correction.text
        assert check.verdict.label is Label.FALSE


async def test_an_unrated_review_is_cited_for_its_headline_and_says_it_is_old(
    deps: CheckDeps,
) -> None:
    post = post_from_text(
        "McDonald's is offering $1 any size fries from May 18 to 31!", max_chars=1000
    )
    check = await run_check(post, deps=deps, config=CheckConfig())
    assert check.verdict.label is Label.UNVERIFIABLE  # no rating: the evidence decides
    assert check.correction.references[0].url == FRIES.url
    assert "Snopes checked this claim on" in check.correction.text
    assert "The fact-check is from 2015" in check.correction.text


async def test_a_review_published_after_the_post_is_not_used(deps: CheckDeps) -> None:
    post = dataclasses.replace(
        post_from_text("Drinking bleach cures covid", max_chars=1000),
        created_at=BLEACH.review_date - timedelta(days=30),  # type: ignore[operator]
    )
    check = await run_check(post, deps=deps, config=CheckConfig())
    assert BLEACH.url not in {r.url for r in check.correction.references}
    assert check.verdict.label is Label.UNVERIFIABLE


async def test_an_unrelated_post_is_not_matched(deps: CheckDeps) -> None:
    post = post_from_text("The library opens at nine on Saturdays.", max_chars=1000)
    check = await run_check(post, deps=deps, config=CheckConfig())
    assert not any(m.match.accepted for m in check.fact_checks)
    assert BLEACH.url not in {r.url for r in check.correction.references}


def test_fresh_evidence_against_the_review_leaves_the_claim_open() -> None:
    match = ClaimMatch("c1", FactCheckMatch(BLEACH, score=1.2, accepted=True))
    review = fact_check_evidence(match, SourcePolicyStub())
    fresh = Verdict(
        label=Label.ACCURATE,
        claims=(ClaimVerdict("c1", Label.ACCURATE, "pages support it", (), basis=Basis.VERIFIER),),
    )
    verdict = from_fact_checks(fresh, [review], [match], reference=utcnow())
    [cv] = verdict.claims
    assert cv.label is Label.UNVERIFIABLE and cv.basis is Basis.CONFLICT
    assert cv.evidence_ids[0] == review.id
    agreeing = dataclasses.replace(fresh.claims[0], label=Label.FALSE)
    verdict = from_fact_checks(
        Verdict(Label.FALSE, (agreeing,)), [review], [match], reference=utcnow()
    )
    assert verdict.claims[0].label is Label.FALSE and verdict.claims[0].basis is Basis.REVIEW


class SourcePolicyStub:
    """A rater that knows no publisher (the fact-check index makes them citable anyway)."""

    def rate(self, url_or_domain: str):  # type: ignore[no-untyped-def]
        from pipeline.records.domain import SourceRating, Tier

        return SourceRating(domain=url_or_domain, tier=Tier.UNRATED, reason="", origin="test")

    def citable(self, rating, *, web=False):  # type: ignore[no-untyped-def]
        return True
