"""MultiSearch: merging and de-duplication, failures, the cache, budgets, sites and dates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from pipeline.search.base import SearchQuery
from pipeline.search.http import ProviderClient
from pipeline.search.merge import MultiSearch, Outcome
from pipeline.search.providers import BraveSearch, SerperSearch, WikipediaSearch
from storage import Store
from tests.pipeline.search.conftest import Sleeps
from tests.pipeline.search.fakeapi import FakeAPI, Reply, fixture
from tests.pipeline.search.providers_table import BRAVE_KEY, SERPER_KEY
from tests.support.clock import FakeClock

QUERY = SearchQuery("nasa six days of darkness")
SNOPES = "https://www.snopes.com/fact-check/six-days-darkness/"
REUTERS = "https://www.reuters.com/article/uk-factcheck-nasa-darkness-idUSKBN2861U3"


def _multi(
    brave_api: FakeAPI,
    serper_api: FakeAPI,
    http: httpx.AsyncClient,
    store: Store,
    sleeps: Sleeps,
    *,
    ttl: timedelta = timedelta(hours=1),
    budgets: dict[str, int] | None = None,
    default_budget: int = 10,
) -> MultiSearch:
    brave_api.queue(Reply(200, fixture("brave.json")))
    serper_api.queue(Reply(200, fixture("serper.json")))
    brave = BraveSearch(
        ProviderClient("brave", http, sleep=sleeps),
        api_key=SecretStr(BRAVE_KEY),
        base_url=brave_api.base,
    )
    serper = SerperSearch(
        ProviderClient("serper", http, max_retries=0, sleep=sleeps),
        api_key=SecretStr(SERPER_KEY),
        base_url=serper_api.base,
    )
    return MultiSearch(
        [brave, serper], cache=store.web, ttl=ttl, budgets=budgets, default_budget=default_budget
    )


async def test_results_are_merged_by_canonical_url(
    api: FakeAPI, api2: FakeAPI, http: httpx.AsyncClient, store: Store, sleeps: Sleeps
) -> None:
    outcome = await _multi(api, api2, http, store, sleeps).search(QUERY)

    assert [(r.provider, r.outcome, r.results) for r in outcome.reports] == [
        ("brave", Outcome.OK, 3),
        ("serper", Outcome.OK, 3),
    ]
    snopes, reuters, nasa, other = outcome.results
    # Found by both at ranks 1 and 2: equal fused scores, the earlier provider's best hit first.
    assert snopes.providers == ("brave", "serper") and snopes.result.url == SNOPES
    assert snopes.score == pytest.approx(1 / 61 + 1 / 62)
    assert reuters.providers == ("serper", "brave") and reuters.result.url == REUTERS
    assert reuters.key == "https://reuters.com/article/uk-factcheck-nasa-darkness-idUSKBN2861U3"
    # Serper's hit wins on rank; the publisher Brave named fills its gap.
    assert (reuters.result.provider, reuters.result.publisher) == ("serper", "Reuters")
    assert reuters.result.publisher_domain == "reuters.com"
    assert (nasa.providers, other.providers) == (("brave",), ("serper",))
    assert nasa.score == other.score == pytest.approx(1 / 63)
    assert [hit.url for hit in outcome.hits][:2] == [SNOPES, REUTERS]


async def test_a_failing_provider_is_reported_and_skipped(
    api: FakeAPI, api2: FakeAPI, http: httpx.AsyncClient, store: Store, sleeps: Sleeps
) -> None:
    multi = _multi(api, api2, http, store, sleeps)
    api2.replies.clear()
    api2.queue(Reply(500, "down"))
    outcome = await multi.search(QUERY)

    brave, serper = outcome.reports
    assert (brave.outcome, serper.outcome, serper.status) == (Outcome.OK, Outcome.FAILED, 500)
    assert [m.providers for m in outcome.results] == [("brave",)] * 3
    assert store.web.get_search("anything") is None  # failures are not cached


async def test_second_search_is_served_from_the_cache(
    api: FakeAPI, api2: FakeAPI, http: httpx.AsyncClient, store: Store, sleeps: Sleeps
) -> None:
    multi = _multi(api, api2, http, store, sleeps)
    first = await multi.search(QUERY)
    again = await multi.search(SearchQuery("  NASA six   days of Darkness "))

    assert (len(api.seen), len(api2.seen)) == (1, 1)
    assert [r.outcome for r in again.reports] == [Outcome.CACHED, Outcome.CACHED]
    assert again.results == first.results


async def test_cache_entries_expire(
    api: FakeAPI, api2: FakeAPI, http: httpx.AsyncClient, tmp_path: Path, sleeps: Sleeps
) -> None:
    clock = FakeClock()
    store = Store.open(tmp_path / "clocked.db", clock=clock)
    multi = _multi(api, api2, http, store, sleeps, ttl=timedelta(hours=1))
    await multi.search(QUERY)
    clock.advance(3599)
    await multi.search(QUERY)  # still fresh: from the cache
    assert (len(api.seen), len(api2.seen)) == (1, 1)
    clock.advance(1)
    outcome = await multi.search(QUERY)
    store.close()

    assert (len(api.seen), len(api2.seen)) == (2, 2)
    assert [r.outcome for r in outcome.reports] == [Outcome.OK, Outcome.OK]


async def test_budgets_are_per_provider_and_per_check(
    api: FakeAPI, api2: FakeAPI, http: httpx.AsyncClient, store: Store, sleeps: Sleeps
) -> None:
    multi = _multi(api, api2, http, store, sleeps, budgets={"brave": 1}, default_budget=5)
    with multi.check_budget():
        await multi.search(QUERY)
        cached = await multi.search(QUERY)  # cache hits spend nothing
        spent = await multi.search(SearchQuery("another query"))
    with multi.check_budget():
        fresh = await multi.search(SearchQuery("a third query"))

    assert [r.outcome for r in cached.reports] == [Outcome.CACHED, Outcome.CACHED]
    assert [r.outcome for r in spent.reports] == [Outcome.OVER_BUDGET, Outcome.OK]
    assert spent.results and all(m.providers == ("serper",) for m in spent.results)
    assert [r.outcome for r in fresh.reports] == [Outcome.OK, Outcome.OK]
    assert (len(api.seen), len(api2.seen)) == (2, 3)


async def test_sites_skip_providers_that_cannot_honour_them(
    api: FakeAPI, api2: FakeAPI, http: httpx.AsyncClient, store: Store, sleeps: Sleeps
) -> None:
    api.queue(Reply(200, fixture("brave.json")))
    brave = BraveSearch(http, api_key=SecretStr(BRAVE_KEY), base_url=api.base)
    wikipedia = WikipediaSearch(http, base_url=api2.base)
    multi = MultiSearch([brave, wikipedia], cache=store.web)
    outcome = await multi.search(SearchQuery("nasa darkness", sites=("snopes.com",)))

    assert [r.outcome for r in outcome.reports] == [Outcome.OK, Outcome.SKIPPED]
    assert api2.seen == []
    # Brave was asked for snopes.com only; what else it returned is dropped.
    assert [m.result.url for m in outcome.results] == [SNOPES]


async def test_results_published_after_before_are_dropped(
    api: FakeAPI, api2: FakeAPI, http: httpx.AsyncClient, store: Store, sleeps: Sleeps
) -> None:
    multi = _multi(api, api2, http, store, sleeps)
    before = datetime(2020, 11, 26, tzinfo=UTC)  # after Snopes (2014), as Reuters is published
    outcome = await multi.search(SearchQuery("nasa darkness", before=before))

    urls = {m.result.url for m in outcome.results}
    assert SNOPES in urls  # dated 2014
    assert "https://snopes.com/fact-check/six-days-darkness" not in urls  # merged into it
    assert REUTERS not in urls and not any("reuters" in url for url in urls)
    assert "https://science.nasa.gov/sun/solar-cycle-25/" not in urls  # "2 days ago"


async def test_provider_names_must_be_unique(http: httpx.AsyncClient, store: Store) -> None:
    wikipedia = WikipediaSearch(http)
    with pytest.raises(ValueError, match="unique"):
        MultiSearch([wikipedia, wikipedia], cache=store.web)
