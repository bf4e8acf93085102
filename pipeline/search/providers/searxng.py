"""SearXNG, the self-hosted metasearch engine, through its JSON API.

`GET {base}/search?q=...&format=json` (the instance must list `json` under `search.formats` in
its settings.yml, or it answers 403). Results carry `url`, `title`, `content` and, from some
engines, `publishedDate` (ISO 8601). `site:` operators in `q` are passed on to the engines that
understand them. SearXNG has no date bound and no result count: `before` is left to the caller's
filter and the answer is cut to `limit`.
"""

from __future__ import annotations

import httpx
from pydantic import Field

from pipeline.search.base import SearchQuery, SearchResult
from pipeline.search.http import ProviderClient
from pipeline.search.parsing import parse_date, plain_text, with_sites
from pipeline.search.providers._common import Answer, provider_client, validate

DEFAULT_URL = "http://localhost:8080"


class _Hit(Answer):
    url: str
    title: str = ""
    content: str | None = ""
    published_date: str | None = Field(default=None, alias="publishedDate")


class _Answer(Answer):
    results: tuple[_Hit, ...] = ()


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
        return [
            SearchResult(
                url=hit.url,
                title=plain_text(hit.title),
                snippet=plain_text(hit.content),
                provider=self.name,
                rank=rank,
                published_at=parse_date(hit.published_date),
            )
            for rank, hit in enumerate(answer.results[: query.limit], start=1)
        ]
