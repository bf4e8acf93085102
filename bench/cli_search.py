"""`factbot bench search-cache`: how fast a cached search answers."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

import click


def _searx_answer(n: int) -> bytes:
    results = [
        {
            "url": f"https://news.example/{i}",
            "title": f"Result {i}",
            "content": "A snippet of the page " * 5,
            "publishedDate": "2024-01-01T00:00:00",
            "engine": "bench",
        }
        for i in range(n)
    ]
    return json.dumps({"query": "q", "results": results}).encode()


@click.command("search-cache")
@click.option("--lookups", type=int, default=1000, show_default=True)
@click.option("--results", type=int, default=10, show_default=True, help="Results per answer.")
def search_cache(lookups: int, results: int) -> None:
    """Time a search answered by a local SearXNG stand-in, then the same search from the cache.

    \b
    Example:
      factbot bench search-cache --lookups 1000
    """
    import httpx
    import numpy as np

    from pipeline.search.base import SearchQuery
    from pipeline.search.http import ProviderClient
    from pipeline.search.merge import MultiSearch
    from pipeline.search.providers import SearxngSearch
    from storage import Store
    from tests.support.httpserver import JSON, LocalServer, Response, serve

    async def go(store: Store, server: LocalServer) -> dict[str, float | int]:
        async with httpx.AsyncClient() as http:
            provider = SearxngSearch(ProviderClient("searxng", http), base_url=server.base)
            search = MultiSearch([provider], cache=store.web)
            query = SearchQuery(text="5G networks spread the coronavirus", limit=results)
            t0 = time.perf_counter()
            await search.search(query)
            miss = time.perf_counter() - t0
            timings = []
            for _ in range(lookups):
                t1 = time.perf_counter()
                outcome = await search.search(query)
                timings.append(time.perf_counter() - t1)
            assert len(outcome.results) == results
        return {
            "results_per_answer": results,
            "miss_ms": round(miss * 1000, 2),
            "hit_p50_ms": round(float(np.percentile(timings, 50)) * 1000, 3),
            "hit_p95_ms": round(float(np.percentile(timings, 95)) * 1000, 3),
            "lookups": lookups,
            "provider_requests": len(server.requests),
        }

    # a local SearXNG stand-in: every request gets the same answer
    answer = Response(200, _searx_answer(results), JSON)
    with (
        serve(default=answer) as server,
        tempfile.TemporaryDirectory() as tmp,
        Store.open(Path(tmp) / "b.db") as store,
    ):
        figures = asyncio.run(go(store, server))
    click.echo(json.dumps(figures, indent=2))
