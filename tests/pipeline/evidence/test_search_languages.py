"""A claim in another language is searched in its language with its fact-checkers, then for
English results with the English ones; English claims are searched as before. Real httpx and
the real SearXNG provider, answered by an httpx MockTransport that records each request."""

from __future__ import annotations

import httpx
import pytest

from bots.app.search import build_search
from bots.settings import SearchSettings
from pipeline.claims.queries import build_queries
from pipeline.credibility.importers import parse_rating_table
from pipeline.credibility.policy import SourcePolicy
from pipeline.evidence.ingest import Ingester
from pipeline.evidence.web import gather_web_evidence
from pipeline.fetch.fetcher import Fetcher, FetchPolicy
from pipeline.records.domain import Claim
from pipeline.search.locales import FACT_CHECK_SITES_BY_LANGUAGE, search_language
from storage import Store
from tests.conftest import REPO


async def _asked(store: Store, embedder: object, claim: Claim) -> list[dict[str, str]]:
    asked: list[dict[str, str]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(dict(request.url.params))
        return httpx.Response(200, json={"results": []})

    settings = SearchSettings(
        providers=["searxng"], searxng_url="http://searx.test", fact_check_sites=["fullfact.org"]
    )
    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http,
        Fetcher(FetchPolicy()) as fetcher,
    ):
        await gather_web_evidence(
            await build_queries([claim]),
            search=build_search(settings, http, store.web),
            fetcher=fetcher,
            rater=SourcePolicy(store.sources),
            ingester=Ingester(store.documents, embedder),  # type: ignore[arg-type]
            fact_check_sites=tuple(settings.fact_check_sites),
            sites_by_language={
                k: tuple(v) for k, v in settings.fact_check_sites_by_language.items()
            },
        )
    return asked


async def test_a_spanish_claim_is_searched_in_spanish_then_for_english_results(
    store: Store, embedder: object
) -> None:
    claim = Claim(id="c", post_id="p", position=0, text="La vacuna no causa autismo", language="es")
    asked = await _asked(store, embedder, claim)
    assert [(a.get("language"), "site:" in a["q"]) for a in asked] == [
        ("es", False),
        ("es", True),
        ("en", False),
        ("en", True),
    ]
    assert "site:maldita.es" in asked[1]["q"] and "site:fullfact.org" in asked[3]["q"]
    assert "site:fullfact.org" not in asked[1]["q"]


@pytest.mark.parametrize("language", ["en", None, "und"])
async def test_english_and_unidentified_claims_are_searched_as_before(
    store: Store, embedder: object, language: str | None
) -> None:
    claim = Claim(
        id="c", post_id="p", position=0, text="The vaccine does not cause autism", language=language
    )
    asked = await _asked(store, embedder, claim)
    assert [("language" in a, "site:" in a["q"]) for a in asked] == [(False, False), (False, True)]


def test_chinese_variants_search_as_zh_and_every_language_has_fact_checkers() -> None:
    assert search_language("zh-Hant") == search_language("zh-Hans") == "zh"
    assert search_language("und") is None and search_language(None) is None
    for language in ("es", "pt", "fr", "de", "ar", "hi", "zh"):
        assert len(FACT_CHECK_SITES_BY_LANGUAGE[language]) >= 3, language


def test_every_language_fact_checker_is_rated_high_in_the_seed() -> None:
    seed = (REPO / "pipeline" / "data" / "seed_sources.csv").read_text(encoding="utf-8")
    tiers = {r.domain: r.tier.value for r in parse_rating_table(seed, origin="seed")}
    for language, sites in FACT_CHECK_SITES_BY_LANGUAGE.items():
        for site in sites:
            assert tiers.get(site) == "high", (language, site)
