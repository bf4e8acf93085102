"""Building live web search from settings (part of the composition root).

Live search is on by default with the keyless providers (Wikipedia's API, Bing News and Google
News RSS):
`FACTBOT_SEARCH__ENABLED=false` turns it off. Before a check searches, `live_web` probes every
provider (`pipeline.search.probe`, answers cached for `FACTBOT_SEARCH__PROBE_TTL`), searches only
those that answer, and returns the `SearchStatus` the check records; with none reachable the
check keeps to the local index at once instead of waiting for timeouts.

The reviews of every Google Fact Check Tools answer go to the fact-check index when a `sink` is
given (`bots.app.factcheck_cache`, as checks do while fact-checks are on).

Reverse image search (`reverse_image`) is built here too, over the same HTTP client and search
cache: every provider whose key is set in `FACTBOT_REVERSE_IMAGE__...`, none by default.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import httpx

from bots.settings import ReverseImageSettings, SearchSettings
from pipeline.evidence.web import WebDeps
from pipeline.fetch.fetcher import Fetcher
from pipeline.image.reverse.interface import ReverseImageProvider
from pipeline.image.reverse.multi import ReverseDeps, ReverseSearch
from pipeline.image.reverse.serpapi import SerpApiLens
from pipeline.image.reverse.tineye import TinEyeSearch
from pipeline.image.reverse.vision import VisionWebDetection
from pipeline.records.search_status import SearchStatus, probed
from pipeline.search.base import SearchProvider
from pipeline.search.http import ProviderClient
from pipeline.search.merge import MultiSearch
from pipeline.search.probe import ProbeTarget, SearchProbe
from pipeline.search.providers import (
    BingNewsSearch,
    BraveSearch,
    FactCheckSearch,
    GoogleNewsSearch,
    SearxngSearch,
    SerperSearch,
    TavilySearch,
    WikipediaSearch,
    bing_news,
    factcheck,
    google_news,
    tavily,
)
from pipeline.search.providers.factcheck import FactCheckSink
from storage.webcache import WebCache

OFF_SWITCH = "FACTBOT_SEARCH__ENABLED=false"


def build_providers(
    settings: SearchSettings, http: httpx.AsyncClient, *, sink: FactCheckSink | None = None
) -> list[SearchProvider]:
    """Return the enabled providers, each with its own bounded, retrying client; `sink`
    takes the reviews of every Google Fact Check Tools answer (the fact-check index's cache)."""
    providers: list[SearchProvider] = []
    for name in dict.fromkeys(settings.providers):
        client = ProviderClient(
            name,
            http,
            max_concurrency=settings.concurrency_per_provider,
            timeout=settings.request_timeout,
            connect_timeout=settings.connect_timeout,
        )
        base = settings.base_urls.get(name)
        if name == "searxng":
            providers.append(SearxngSearch(client, base_url=base or settings.searxng_url or ""))
        elif name == "brave":
            providers.append(BraveSearch(client, api_key=settings.brave_api_key, base_url=base))
        elif name == "serper":
            providers.append(SerperSearch(client, api_key=settings.serper_api_key, base_url=base))
        elif name == "tavily":
            providers.append(
                TavilySearch(
                    client, api_key=settings.tavily_api_key, base_url=base or tavily.DEFAULT_URL
                )
            )
        elif name == "google_news":
            providers.append(
                GoogleNewsSearch(
                    client,
                    language=settings.language,
                    region=settings.region,
                    base_url=base or google_news.DEFAULT_URL,
                )
            )
        elif name == "bing_news":
            providers.append(
                BingNewsSearch(
                    client,
                    language=settings.language,
                    region=settings.region,
                    base_url=base or bing_news.DEFAULT_URL,
                )
            )
        elif name == "wikipedia":
            providers.append(WikipediaSearch(client, language=settings.language, base_url=base))
        elif name == "factcheck":
            providers.append(
                FactCheckSearch(
                    client,
                    api_key=settings.factcheck_api_key,
                    base_url=base or factcheck.DEFAULT_URL,
                    sink=sink,
                )
            )
    return providers


def build_search(
    settings: SearchSettings,
    http: httpx.AsyncClient,
    cache: WebCache,
    *,
    providers: Sequence[SearchProvider] | None = None,
) -> MultiSearch:
    """Return the merged, cached, budgeted search over providers (default: every enabled one)."""
    providers = build_providers(settings, http) if providers is None else providers
    return MultiSearch(
        providers,
        cache=cache,
        ttl=timedelta(hours=settings.cache_ttl_hours),
        budgets={p.name: settings.budget_per_check for p in providers},
        default_budget=settings.budget_per_check,
    )


def live_enabled(settings: SearchSettings) -> bool:
    """Return whether live web search is on (enabled, with at least one provider)."""
    return settings.enabled and bool(settings.providers)


def off_reason(settings: SearchSettings) -> str:
    """Return why live search is off, naming the setting ("" when it is on)."""
    if not settings.enabled:
        return f"turned off by {OFF_SWITCH}"
    if not settings.providers:
        return "no provider in FACTBOT_SEARCH__PROVIDERS"
    return ""


def probe_targets(providers: Sequence[SearchProvider]) -> list[ProbeTarget]:
    """Return what to probe for each provider: the root of its API host."""
    return [ProbeTarget(p.name, f"{getattr(p, 'base_url', '').rstrip('/')}/") for p in providers]


async def live_web(
    settings: SearchSettings,
    *,
    http: httpx.AsyncClient,
    cache: WebCache,
    fetcher: Fetcher,
    probe: SearchProbe,
    local_documents: int | None,
    sink: FactCheckSink | None = None,
) -> tuple[WebDeps | None, SearchStatus]:
    """Return web retrieval over the providers that answer the probe, and the search status.

    With live search off, or no provider reachable, the first part is None. `sink` takes the
    reviews of Google Fact Check Tools answers (`build_providers`).
    """
    if not live_enabled(settings):
        status = SearchStatus(local_documents=local_documents, off_reason=off_reason(settings))
        return None, status
    providers = build_providers(settings, http, sink=sink)
    statuses = await probe.check(probe_targets(providers), http)
    status = probed(statuses, local_documents=local_documents)
    reachable = [p for p, st in zip(providers, statuses, strict=True) if st.reachable]
    if not reachable:
        return None, status
    web = WebDeps(
        search=build_search(settings, http, cache, providers=reachable),
        fetcher=fetcher,
        pages_per_claim=settings.pages_per_claim,
        results_per_provider=settings.results_per_provider,
        fact_check_sites=tuple(settings.fact_check_sites),
        sites_by_language={
            lang: tuple(sites) for lang, sites in settings.fact_check_sites_by_language.items()
        },
    )
    return web, status


def new_probe(settings: SearchSettings) -> SearchProbe:
    """Return the reachability probe the settings describe."""
    return SearchProbe(
        ttl=settings.probe_ttl,
        timeout=settings.probe_timeout,
        connect_timeout=settings.connect_timeout,
    )


def build_reverse_providers(
    settings: ReverseImageSettings, http: httpx.AsyncClient
) -> list[ReverseImageProvider]:
    """Return the reverse image providers whose key is set, each with its own client."""
    providers: list[ReverseImageProvider] = []
    for name in settings.keyed():
        client = ProviderClient(
            name,
            http,
            timeout=settings.request_timeout,
            connect_timeout=settings.connect_timeout,
        )
        base = settings.base_urls.get(name)
        if name == "serpapi":
            providers.append(
                SerpApiLens(
                    client,
                    api_key=settings.serpapi_api_key,
                    base_url=base,
                    lens_type=settings.serpapi_type,
                )
            )
        elif name == "vision":
            providers.append(
                VisionWebDetection(client, api_key=settings.vision_api_key, base_url=base)
            )
        elif name == "tineye":
            providers.append(TinEyeSearch(client, api_key=settings.tineye_api_key, base_url=base))
    return providers


def reverse_image(
    settings: ReverseImageSettings, *, http: httpx.AsyncClient, cache: WebCache
) -> ReverseDeps | None:
    """Return reverse image search over every keyed provider, or None when no key is set."""
    providers = build_reverse_providers(settings, http)
    if not providers or settings.pages_per_image == 0:
        return None
    search = ReverseSearch(
        providers,
        cache=cache,
        ttl=timedelta(hours=settings.cache_ttl_hours),
        default_budget=settings.budget_per_check,
    )
    return ReverseDeps(
        search=search,
        pages_per_image=settings.pages_per_image,
        results_per_provider=settings.results_per_provider,
        upload=settings.upload,
    )
