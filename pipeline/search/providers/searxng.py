"""SearXNG, the self-hosted metasearch engine, through its JSON API.

`GET {base}/search?q=...&format=json` (the instance must list `json` under `search.formats` in
its settings.yml, or it answers 403). Results carry `url`, `title`, `content` and, from some
engines, `publishedDate` (ISO 8601). `site:` operators in `q` are passed on to the engines that
understand them. SearXNG has no date bound and no result count: `before` is left to the caller's
filter and the answer is cut to `limit`.
"""

from __future__ import annotations

import httpx

from pipeline.search.base import SearchQuery, SearchResult
from pipeline.search.http import ProviderClient
from pipeline.search.parsing import with_sites
from pipeline.search.providers._common import (
    Answer,
    ContentHit,
    content_results,
    provider_client,
    validate,
)

DEFAULT_URL = "http://localhost:8080"


class _Answer(Answer):
    results: tuple[ContentHit, ...] = ()


class SearxngSearch:
    """A SearXNG instance."""

    name = "searxng"
    supports_sites = True

    def __init__(
        self, client: ProviderClient | httpx.AsyncClient, *, base_url: str = DEFAULT_URL
    ) -> None:
        self.client = provider_client(self.name, client)
        self.base_url = base_url.rstrip("/")

    async def search(self, query: SearchQuery) -> list[SearchResult]:
        """Return the instance's results for query, best first."""
        params: dict[str, str | int] = {
            "q": with_sites(query.text, query.sites),
            "format": "json",
            "pageno": 1,
        }
        if query.language:
            params["language"] = query.language
        data = await self.client.get_json(f"{self.base_url}/search", params=params)
        answer = validate(_Answer, data, self.name)
        return content_results(self.name, answer.results, query.limit)
