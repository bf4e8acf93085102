"""The matcher over a real store: ranks the review of the same claim first, in any language,
and refuses a match whose entities agree but whose claim says the opposite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pipeline.embedding.e5 import E5Embedder
from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.factchecks.matching import FactCheckMatcher
from pipeline.records.domain import Label
from pipeline.records.factchecks import FactCheck
from storage import Store
from tests.support.factchecks import BLEACH, store_reviews

REVIEWS = [
    BLEACH,
    FactCheck(
        url="https://www.snopes.com/fact-check/biden-won-2020/",
        claim_reviewed="Joe Biden won the 2020 U.S. presidential election.",
        publisher="Snopes",
        publisher_site="snopes.com",
        headline="Did Biden Win the 2020 Election?",
        language="en",
        rating="True",
        label=Label.ACCURATE,
    ),
    FactCheck(
        url="https://www.snopes.com/fact-check/anaconda/",
        claim_reviewed="A viral video shows a 10-meter-long anaconda swimming across a river.",
        publisher="Snopes",
        publisher_site="snopes.com",
        headline="Does Video Show a 10-Meter-Long Anaconda?",
        language="en",
        rating="Miscaptioned",
        label=Label.MISLEADING,
    ),
    FactCheck(
        url="https://correctiv.org/faktencheck/5g-corona/",
        claim_reviewed="5G-Funkmasten verbreiten das Coronavirus.",
        publisher="Correctiv",
        publisher_site="correctiv.org",
        headline="Nein, 5G verbreitet kein Coronavirus",
        language="de",
        rating="Falsch",
        label=Label.FALSE,
    ),
]


@pytest.fixture
def matcher(
    store: Store, embedder: OnnxEmbedder, e5_embedder: E5Embedder
) -> Iterator[FactCheckMatcher]:
    store_reviews(store.fact_checks, REVIEWS, [embedder, e5_embedder])
    yield FactCheckMatcher(store.fact_checks, [embedder, e5_embedder])


def test_a_reworded_post_finds_its_fact_check_and_it_is_accepted(matcher: FactCheckMatcher) -> None:
    [found] = matcher.match_sync(["omg people are saying drinking bleach will cure covid 😱"])
    assert found[0].fact_check.url == REVIEWS[0].url
    assert found[0].accepted, found[0].reasons
    assert not any(m.accepted for m in found[1:])


def test_the_opposite_claim_is_ranked_but_refused(matcher: FactCheckMatcher) -> None:
    [found] = matcher.match_sync(["Joe Biden lost the 2020 presidential election."])
    assert found[0].fact_check.url == REVIEWS[1].url
    assert not found[0].accepted
    assert "opposite direction" in found[0].reasons


def test_a_post_in_another_language_finds_an_english_fact_check(matcher: FactCheckMatcher) -> None:
    [found] = matcher.match_sync(["Beber lejía cura el COVID-19, compártelo"], languages=["es"])
    assert found[0].fact_check.url == REVIEWS[0].url


def test_an_english_post_finds_a_german_fact_check(matcher: FactCheckMatcher) -> None:
    [found] = matcher.match_sync(["5G towers are spreading the coronavirus"], languages=["en"])
    assert found[0].fact_check.url == REVIEWS[3].url


def test_an_unrelated_post_matches_nothing(matcher: FactCheckMatcher) -> None:
    [found] = matcher.match_sync(["The city council meets on Tuesday to discuss parking fees."])
    assert not any(m.accepted for m in found)


def test_an_empty_index_matches_nothing(store: Store, embedder: OnnxEmbedder) -> None:
    assert FactCheckMatcher(store.fact_checks, [embedder]).match_sync(["anything"]) == [[]]


def test_excluded_reviews_are_left_out(matcher: FactCheckMatcher) -> None:
    [found] = matcher.match_sync(["drinking bleach cures covid"], exclude={REVIEWS[0].url})
    assert REVIEWS[0].url not in {m.fact_check.url for m in found}
