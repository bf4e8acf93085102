"""Building live web search from settings (part of the composition root)."""

from __future__ import annotations

from datetime import timedelta

import httpx

from bots.settings import SearchSettings
from pipeline.search.base import SearchProvider
from pipeline.search.http import ProviderClient
from pipeline.search.merge import MultiSearch
from pipeline.search.providers import (
    BraveSearch,
    FactCheckSearch,
    GoogleNewsSearch,
    SearxngSearch,
    SerperSearch,
    TavilySearch,
    WikipediaSearch,
    factcheck,
    google_news,
    tavily,
)
from storage.webcache import WebCache


def build_providers(settings: SearchSettings, http: httpx.AsyncClient) -> list[SearchProvider]:
    """Return the enabled providers, each with its own bounded, retrying client."""
    providers: list[SearchProvider] = []
    for name in dict.fromkeys(settings.providers):
        client = ProviderClient(name, http, max_concurrency=settings.concurrency_per_provider)
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
        elif name == "wikipedia":
            providers.append(WikipediaSearch(client, language=settings.language, base_url=base))
        elif name == "factcheck":
            providers.append(
                FactCheckSearch(
                    client,
                    api_key=settings.factcheck_api_key,
                    base_url=base or factcheck.DEFAULT_URL,
                )
            )
    return providers


def build_search(settings: SearchSettings, http: httpx.AsyncClient, cache: WebCache) -> MultiSearch:
    """Return the merged, cached, budgeted search over every enabled provider."""
    providers = build_providers(settings, http)
    return MultiSearch(
        providers,
        cache=cache,
        ttl=timedelta(hours=settings.cache_ttl_hours),
        budgets={p.name: settings.budget_per_check for p in providers},
        default_budget=settings.budget_per_check,
    )
