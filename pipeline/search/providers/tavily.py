"""Tavily search API.

`POST https://api.tavily.com/search` with `Authorization: Bearer tvly-...` (the current scheme;
early versions took `api_key` in the body) and a JSON body: `query`, `max_results` (at most 20),
`search_depth`, `topic`, `include_domains` for sites and `end_date` (`YYYY-MM-DD`, inclusive)
for `before`. The answer's `results[]` carry `url`, `title`, `content` (an extract), `score`
and, for the news topic, `published_date`.
"""

from __future__ import annotations

from typing import Any, Literal

import httpx
from pydantic import SecretStr

from pipeline.search.base import SearchQuery, SearchResult
from pipeline.search.http import ProviderClient
from pipeline.search.parsing import last_day
from pipeline.search.providers._common import (
    Answer,
    ContentHit,
    KeyedProvider,
    content_results,
    validate,
)

DEFAULT_URL = "https://api.tavily.com"
MAX_RESULTS = 20


class _Answer(Answer):
    results: tuple[ContentHit, ...] = ()


class TavilySearch(KeyedProvider):
    """The Tavily search API."""

    name = "tavily"
    supports_sites = True
    default_url = DEFAULT_URL

    def __init__(
        self,
        client: ProviderClient | httpx.AsyncClient,
        *,
        api_key: SecretStr | None,
        base_url: str = DEFAULT_URL,
        topic: Literal["general", "news"] = "general",
        depth: Literal["basic", "advanced"] = "basic",
    ) -> None:
        super().__init__(client, api_key=api_key, base_url=base_url)
        self.topic = topic
        self.depth = depth

    async def search(self, query: SearchQuery) -> list[SearchResult]:
        """Return Tavily's results for query, best first."""
        body: dict[str, Any] = {
            "query": query.text,
            "max_results": min(query.limit, MAX_RESULTS),
            "search_depth": self.depth,
            "topic": self.topic,
            "include_answer": False,
        }
        if query.sites:
            body["include_domains"] = list(query.sites)
        if query.before is not None:
            body["end_date"] = last_day(query.before).isoformat()
        headers = {"Authorization": f"Bearer {self.api_key.get_secret_value()}"}
        data = await self.client.post_json(f"{self.base_url}/search", body=body, headers=headers)
        answer = validate(_Answer, data, self.name)
        return content_results(self.name, answer.results, query.limit)
