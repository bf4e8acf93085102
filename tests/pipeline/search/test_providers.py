"""Each provider's request (path, parameters, headers, body) and its parsing of a real answer."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import httpx
import pytest
from pydantic import SecretStr

from pipeline.errors import ConfigError, SearchError
from pipeline.records.domain import Label
from pipeline.records.factchecks import FactCheck
from pipeline.search.base import SearchQuery
from pipeline.search.providers import (
    BraveSearch,
    FactCheckSearch,
    GoogleNewsSearch,
    SearxngSearch,
    SerperSearch,
    TavilySearch,
    WikipediaSearch,
)
from tests.pipeline.search.fakeapi import RSS, FakeAPI, Reply, fixture
from tests.pipeline.search.providers_table import BRAVE_KEY, FACTCHECK_KEY, SERPER_KEY, TAVILY_KEY

BEFORE = datetime(2024, 3, 5, 18, 30, tzinfo=UTC)
SNOPES = "https://www.snopes.com/fact-check/six-days-darkness/"
REUTERS = "https://www.reuters.com/article/uk-factcheck-nasa-darkness-idUSKBN2861U3"


async def test_searxng(api: FakeAPI, http: httpx.AsyncClient) -> None:
    api.queue(Reply(200, fixture("searxng.json")))
    provider = SearxngSearch(http, base_url=api.base)
    query = SearchQuery("nasa six days of darkness", sites=("snopes.com",), language="en")
    results = await provider.search(query)

    (seen,) = api.seen
    assert (seen.method, seen.path) == ("GET", "/search")
    assert seen.param("q") == "nasa six days of darkness site:snopes.com"
    assert (seen.param("format"), seen.param("language")) == ("json", "en")
    first, second, third = results
    assert first.url == SNOPES
    assert first.published_at == datetime(2014, 12, 3, 9, 15, tzinfo=UTC)
    assert (first.provider, first.rank, third.rank) == ("searxng", 1, 3)
    assert second.snippet.startswith('Posts claim NASA confirmed "six days of darkness"')
    assert second.published_at is None and third.snippet == ""


async def test_searxng_cuts_to_limit(api: FakeAPI, http: httpx.AsyncClient) -> None:
    api.queue(Reply(200, fixture("searxng.json")))
    results = await SearxngSearch(http, base_url=api.base).search(SearchQuery("x", limit=2))
    assert len(results) == 2


async def test_brave(api: FakeAPI, http: httpx.AsyncClient) -> None:
    api.queue(Reply(200, fixture("brave.json")))
    provider = BraveSearch(http, api_key=SecretStr(BRAVE_KEY), base_url=api.base)
    query = SearchQuery("nasa six days of darkness", before=BEFORE, limit=30, language="en")
    results = await provider.search(query)

    (seen,) = api.seen
    assert (seen.method, seen.path) == ("GET", "/res/v1/web/search")
    assert seen.headers["x-subscription-token"] == BRAVE_KEY
    assert seen.headers["accept"] == "application/json"
    assert seen.param("q") == "nasa six days of darkness"
    assert (seen.param("count"), seen.param("search_lang")) == ("20", "en")
    assert seen.param("freshness") == "1970-01-01to2024-03-05"
    snopes, reuters, nasa = results
    assert snopes.title == "Will Earth Experience Six Days of Darkness in December? | Snopes.com"
    assert "<strong>" not in snopes.snippet and "NASA confirmed" in snopes.snippet
    assert snopes.published_at == datetime(2014, 12, 3, 9, 15, tzinfo=UTC)  # page_age wins
    assert (snopes.publisher, snopes.publisher_domain) == ("Snopes.com", "snopes.com")
    assert reuters.published_at == datetime(2020, 11, 26, tzinfo=UTC)  # from `age`
    assert reuters.url.endswith("?utm_source=twitter&utm_medium=social")  # kept as given
    assert nasa.published_at is not None  # "2 days ago", resolved against now
    assert (datetime.now(UTC) - nasa.published_at).days == 2


async def test_serper(api: FakeAPI, http: httpx.AsyncClient) -> None:
    api.queue(Reply(200, fixture("serper.json")))
    provider = SerperSearch(http, api_key=SecretStr(SERPER_KEY), base_url=api.base)
    query = SearchQuery("nasa darkness", before=BEFORE, sites=("reuters.com", "snopes.com"))
    results = await provider.search(query)

    (seen,) = api.seen
    assert (seen.method, seen.path) == ("POST", "/search")
    assert seen.headers["x-api-key"] == SERPER_KEY
    assert seen.headers["content-type"] == "application/json"
    assert seen.json() == {
        "q": "nasa darkness (site:reuters.com OR site:snopes.com)",
        "num": 10,
        "tbs": "cdr:1,cd_max:03/05/2024",
    }
    assert [r.url for r in results] == [
        REUTERS,
        "https://snopes.com/fact-check/six-days-darkness",
        "https://www.example-news.test/science/nasa-darkness-rumour",
    ]
    assert results[0].published_at == datetime(2020, 11, 26, tzinfo=UTC)
    assert results[1].published_at is None and results[2].published_at is not None
    assert [r.rank for r in results] == [1, 2, 3]


async def test_tavily(api: FakeAPI, http: httpx.AsyncClient) -> None:
    api.queue(Reply(200, fixture("tavily.json")))
    provider = TavilySearch(http, api_key=SecretStr(TAVILY_KEY), base_url=api.base)
    query = SearchQuery("nasa darkness", before=BEFORE, sites=("reuters.com",), limit=50)
    results = await provider.search(query)

    (seen,) = api.seen
    assert (seen.method, seen.path) == ("POST", "/search")
    assert seen.headers["authorization"] == f"Bearer {TAVILY_KEY}"
    body = seen.json()
    assert "api_key" not in body
    assert body == {
        "query": "nasa darkness",
        "max_results": 20,
        "search_depth": "basic",
        "topic": "general",
        "include_answer": False,
        "include_domains": ["reuters.com"],
        "end_date": "2024-03-05",
    }
    assert [r.url for r in results] == [REUTERS, SNOPES]
    assert results[0].published_at == datetime(2020, 11, 26, 10, tzinfo=UTC)
    assert results[1].published_at is None


async def test_google_news(api: FakeAPI, http: httpx.AsyncClient) -> None:
    api.queue(Reply(200, fixture("google_news.xml"), RSS))
    provider = GoogleNewsSearch(http, base_url=api.base)
    query = SearchQuery("nasa darkness", before=BEFORE, sites=("reuters.com",))
    results = await provider.search(query)

    (seen,) = api.seen
    assert (seen.method, seen.path) == ("GET", "/rss/search")
    assert seen.param("q") == "nasa darkness site:reuters.com before:2024-03-06"
    assert (seen.param("hl"), seen.param("gl"), seen.param("ceid")) == ("en-US", "US", "US:en")
    reuters, usatoday = results
    assert reuters.url.startswith("https://news.google.com/rss/articles/CBMi")
    assert reuters.title == "Fact check: NASA did not confirm six days of darkness"
    assert reuters.snippet == reuters.title
    assert (reuters.publisher, reuters.publisher_domain) == ("Reuters", "reuters.com")
    assert reuters.published_at == datetime(2020, 11, 26, 12, tzinfo=UTC)
    assert (usatoday.publisher_domain, usatoday.rank) == ("usatoday.com", 2)


async def test_google_news_refuses_an_html_page(api: FakeAPI, http: httpx.AsyncClient) -> None:
    api.queue(Reply(200, "<html><body>Before you continue</body></html>", "text/html"))
    with pytest.raises(SearchError, match="not an RSS feed"):
        await GoogleNewsSearch(http, base_url=api.base).search(SearchQuery("x"))


async def test_wikipedia(api: FakeAPI, http: httpx.AsyncClient) -> None:
    api.queue(Reply(200, fixture("wikipedia.json")))
    provider = WikipediaSearch(http, base_url=api.base, user_agent="factbot-test/1.0")
    results = await provider.search(SearchQuery("six days of darkness", limit=3))

    (seen,) = api.seen
    assert (seen.method, seen.path) == ("GET", "/w/api.php")
    assert {name: seen.param(name) for name in seen.query} == {
        "action": "query",
        "list": "search",
        "srsearch": "six days of darkness",
        "srlimit": "3",
        "srprop": "snippet",
        "format": "json",
        "formatversion": "2",
    }
    assert seen.headers["user-agent"] == "factbot-test/1.0"
    assert [r.url for r in results] == [
        f"{api.base}/wiki/Polar_night",
        f"{api.base}/wiki/Solar_eclipse_of_April_8,_2024",
        f"{api.base}/wiki/Three_Days_of_Darkness",
    ]
    assert results[0].snippet.startswith("Polar night is a phenomenon")
    assert '"darkness" for days' in results[0].snippet and "<span" not in results[0].snippet
    assert all(r.published_at is None for r in results)  # `timestamp` is an edit time
    assert WikipediaSearch(http).page_url("Ödön von Horváth") == (
        "https://en.wikipedia.org/wiki/%C3%96d%C3%B6n_von_Horv%C3%A1th"
    )


async def test_wikipedia_api_error_with_status_200(api: FakeAPI, http: httpx.AsyncClient) -> None:
    api.queue(Reply(200, '{"error": {"code": "srsearch-text-disabled", "info": "disabled"}}'))
    with pytest.raises(SearchError, match="srsearch-text-disabled"):
        await WikipediaSearch(http, base_url=api.base).search(SearchQuery("x"))


async def test_factcheck(api: FakeAPI, http: httpx.AsyncClient) -> None:
    api.queue(Reply(200, fixture("factcheck.json")))
    provider = FactCheckSearch(
        http, api_key=SecretStr(FACTCHECK_KEY), base_url=api.base, max_age_days=3650
    )
    results = await provider.search(SearchQuery("nasa darkness", language="en"))

    (seen,) = api.seen
    assert (seen.method, seen.path) == ("GET", "/v1alpha1/claims:search")
    assert seen.headers["x-goog-api-key"] == FACTCHECK_KEY
    assert "key" not in seen.query  # never in a URL
    assert (seen.param("query"), seen.param("languageCode")) == ("nasa darkness", "en")
    assert (seen.param("pageSize"), seen.param("maxAgeDays")) == ("10", "3650")
    reuters, politifact, leadstories = results  # the review without a URL is skipped
    assert reuters.url == REUTERS and reuters.publisher_domain == "reuters.com"
    review = reuters.claim_review
    assert review is not None
    assert review.claim_reviewed.startswith("NASA has confirmed that Earth will experience")
    assert (review.rating, review.label, review.reviewer) == ("False", Label.FALSE, "Reuters")
    assert review.date_published == datetime(2020, 11, 26, tzinfo=UTC)
    assert reuters.published_at == review.date_published
    assert reuters.snippet.startswith("Social media posts: NASA has confirmed")
    assert politifact.claim_review is not None
    assert politifact.claim_review.label == Label.FALSE  # "Pants on Fire"
    assert leadstories.claim_review is not None
    assert leadstories.claim_review.label == Label.MISLEADING
    assert [r.rank for r in results] == [1, 2, 3]


async def test_factcheck_sites(api: FakeAPI, http: httpx.AsyncClient) -> None:
    api.queue(Reply(200, fixture("factcheck.json")))
    provider = FactCheckSearch(http, api_key=SecretStr(FACTCHECK_KEY), base_url=api.base)
    one = await provider.search(SearchQuery("nasa", sites=("politifact.com",)))
    several = await provider.search(SearchQuery("nasa", sites=("politifact.com", "reuters.com")))
    assert api.seen[0].param("reviewPublisherSiteFilter") == "politifact.com"
    assert [r.publisher for r in one] == ["PolitiFact"]
    assert "reviewPublisherSiteFilter" not in api.seen[1].query
    assert [r.publisher for r in several] == ["Reuters", "PolitiFact"]


async def test_factcheck_answers_go_to_the_sink(api: FakeAPI, http: httpx.AsyncClient) -> None:
    kept: list[Sequence[FactCheck]] = []
    api.queue(Reply(200, fixture("factcheck.json")), Reply(200, fixture("factcheck.json")))
    key = SecretStr(FACTCHECK_KEY)
    provider = FactCheckSearch(http, api_key=key, base_url=api.base, sink=kept.append)
    results = await provider.search(SearchQuery("nasa", sites=("politifact.com",)))

    (found,) = kept  # every review of the answer, whatever the sites asked
    assert [fc.url for fc in found] == [
        r.url
        for r in await FactCheckSearch(http, api_key=key, base_url=api.base).search(
            SearchQuery("nasa")
        )
    ]
    assert found[0].publisher == "Reuters" and found[0].label == Label.FALSE
    assert len(results) == 1


@pytest.mark.parametrize("provider", [BraveSearch, SerperSearch, TavilySearch, FactCheckSearch])
async def test_missing_key_says_which_setting(
    provider: type[BraveSearch], http: httpx.AsyncClient
) -> None:
    with pytest.raises(ConfigError, match="FACTBOT_SEARCH__"):
        provider(http, api_key=None)
    with pytest.raises(ConfigError):
        provider(http, api_key=SecretStr("  "))
