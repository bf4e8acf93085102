"""The matcher over a real store: ranks the review of the same claim first, in any language,
and refuses a match whose entities agree but whose claim says the opposite."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from pipeline.embedding.e5 import E5Embedder
from pipeline.embedding.embedder import Role, Vectors
from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.factchecks.loading import embed_missing
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


class StopsAfter:
    """An e5 embedder (the real one) whose pass stops after its first `calls` batches."""

    def __init__(self, real: E5Embedder, calls: int) -> None:
        self.real, self.name, self.left = real, real.name, calls

    def embed_sync(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        raise AssertionError("the pass embeds off the caller's thread")

    async def embed(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        if self.left == 0:
            raise RuntimeError("stopped")
        self.left -= 1
        return self.real.embed_sync(texts, role=role)


async def test_matching_before_during_and_after_the_e5_pass(
    store: Store, embedder: OnnxEmbedder, e5_embedder: E5Embedder
) -> None:
    index = store.fact_checks
    store_reviews(index, REVIEWS, [embedder])  # imported with `--defer e5`
    matcher = FactCheckMatcher(index, [embedder, e5_embedder])
    english = "omg people are saying drinking bleach will cure covid 😱"
    anaconda = "Video shows a ten metre anaconda swimming in a river"
    german = "5G towers are spreading the coronavirus"

    # Before: English reviews are matched on BM25 + MiniLM; the German one is refused.
    [found] = matcher.match_sync([english])
    assert found[0].fact_check.url == REVIEWS[0].url and found[0].accepted, found[0].reasons
    [found] = matcher.match_sync([german], languages=["en"])
    refused = [m for m in found if m.fact_check.url == REVIEWS[3].url]
    assert refused and not refused[0].accepted
    assert "languages differ and the review has no multilingual vector" in refused[0].reasons

    # During: the pass stored e5 for the first two reviews only (one batch of two).
    with pytest.raises(RuntimeError, match="stopped"):
        await embed_missing(index, StopsAfter(e5_embedder, 1), batch_size=2)
    assert index.count_missing_vectors(e5_embedder.name) == 2
    [found] = matcher.match_sync([english])
    assert found[0].fact_check.url == REVIEWS[0].url and found[0].accepted, found[0].reasons
    [found] = matcher.match_sync([anaconda])  # no e5 vector yet: BM25 + MiniLM decide
    assert found[0].fact_check.url == REVIEWS[2].url and found[0].accepted, found[0].reasons
    [found] = matcher.match_sync([german], languages=["en"])
    assert not any(m.accepted for m in found if m.fact_check.url == REVIEWS[3].url)

    # After: every review has both vectors; the cross-language match is found by e5.
    await embed_missing(index, e5_embedder)
    [found] = matcher.match_sync([german], languages=["en"])
    assert found[0].fact_check.url == REVIEWS[3].url
    assert "languages differ and the review has no multilingual vector" not in found[0].reasons
    [found] = matcher.match_sync([anaconda])
    assert found[0].fact_check.url == REVIEWS[2].url and found[0].accepted, found[0].reasons
