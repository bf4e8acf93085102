"""Web retrieval fetches a query's pages as soon as its search answers, not after every search.

Real HTTP on loopback: the benchmark's SearXNG and publisher stand-ins, with delays, answer one
search at a time, and their request log shows what overlapped.
"""

from __future__ import annotations

from typing import Any

import httpx

from bench.latency_posts import POSTS
from bench.standins import CallLog, SearchStandin, page_site, serving
from bots.app.search import build_search
from bots.settings import SearchSettings
from pipeline.claims.queries import Query
from pipeline.credibility.policy import SourcePolicy
from pipeline.evidence.ingest import Ingester
from pipeline.evidence.web import gather_web_evidence
from pipeline.fetch.fetcher import Fetcher, FetchPolicy
from storage import Store


async def test_pages_are_fetched_while_later_searches_are_still_running(
    store: Store, embedder: Any
) -> None:
    claims = POSTS[0].claims  # two claims, so two queries with pages of their own
    log = CallLog()
    sites = [page_site(n, log, claims=claims, delay=0.05, robots_delay=0.0) for n in range(2)]
    search = SearchStandin(
        "127.0.0.1", log, claims=claims, sites=[s.base for s in sites], results=2, delay=0.5
    )
    hosts = tuple(f"{s.server_address[0]!s}/32" for s in sites)
    queries = [Query(claim_id=f"C{n}", text=c.text, terms=()) for n, c in enumerate(claims)]
    settings = SearchSettings(
        providers=["searxng"],
        searxng_url=search.base,
        concurrency_per_provider=1,  # one search after the other
        fact_check_sites=[],
    )
    with serving(*sites, search):
        async with (
            httpx.AsyncClient() as http,
            Fetcher(FetchPolicy(allowed_networks=hosts)) as fetcher,
        ):
            report = await gather_web_evidence(
                queries,
                search=build_search(settings, http, store.web),
                fetcher=fetcher,
                rater=SourcePolicy(store.sources, unrated="allow"),  # loopback stand-ins
                ingester=Ingester(store.documents, embedder),
                pages_per_claim=2,
                limit=2,
            )
    calls = log.between(0.0, float("inf"))
    searches = [c for c in calls if c.kind == "search"]
    pages = [c for c in calls if c.kind == "page"]
    assert len(searches) == 2 and report.fetched == report.added == len(pages) == 4
    # The first query's pages went out about when its search answered, not after the second.
    assert min(p.start for p in pages) < max(s.end for s in searches) - 0.25
