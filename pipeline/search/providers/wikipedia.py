"""Wikipedia full-text search through the MediaWiki Action API, keyless.

`GET https://en.wikipedia.org/w/api.php?action=query&list=search&srsearch=...&format=json
&formatversion=2&srlimit=N&srprop=snippet`. Each `query.search[]` hit has `title`, `pageid` and
a `snippet` with `<span class="searchmatch">` highlights (stripped here); page URLs are built as
`{base}/wiki/Title_with_underscores`. A hit's optional `timestamp` is the page's last edit, not
a publication date, so it is not asked for and results carry no date. Errors can arrive with
status 200 as `{"error": {"code", "info"}}`. Wikimedia asks API clients for a descriptive
User-Agent.
"""

from __future__ import annotations

from urllib.parse import quote

import httpx

from pipeline.errors import SearchError
from pipeline.search.base import SearchQuery, SearchResult
from pipeline.search.http import ProviderClient
from pipeline.search.parsing import plain_text
from pipeline.search.providers._common import Answer, provider_client, validate

DEFAULT_USER_AGENT = "factbot/0.1 (fact-checking bot; +https://github.com/factbot/factbot)"
MAX_LIMIT = 50
# Characters Wikipedia itself leaves unescaped in article paths.
_TITLE_SAFE = "/:(),'!*-_.~"


class _Hit(Answer):
    title: str
    snippet: str = ""


class _Query(Answer):
    search: tuple[_Hit, ...] = ()


class _Error(Answer):
    code: str = "error"
    info: str = ""


class _Answer(Answer):
    query: _Query | None = None
    error: _Error | None = None


class WikipediaSearch:
    """Wikipedia's search in one language."""

    name = "wikipedia"
    supports_sites = False

    def __init__(
        self,
        client: ProviderClient | httpx.AsyncClient,
        *,
        base_url: str | None = None,
        language: str = "en",
        user_agent: str = DEFAULT_USER_AGENT,
    ) -> None:
        self.client = provider_client(self.name, client)
        self.base_url = (base_url or f"https://{language}.wikipedia.org").rstrip("/")
        self.user_agent = user_agent

    async def search(self, query: SearchQuery) -> list[SearchResult]:
        """Return Wikipedia articles matching query, best first."""
        params: dict[str, str | int] = {
            "action": "query",
            "list": "search",
            "srsearch": query.text,
            "srlimit": min(query.limit, MAX_LIMIT),
            "srprop": "snippet",
            "format": "json",
            "formatversion": 2,
        }
        data = await self.client.get_json(
            f"{self.base_url}/w/api.php", params=params, headers={"User-Agent": self.user_agent}
        )
        answer = validate(_Answer, data, self.name)
        if answer.error is not None:
            raise SearchError(self.name, f"API error {answer.error.code}: {answer.error.info}")
        hits = answer.query.search if answer.query is not None else []
        return [
            SearchResult(
                url=self.page_url(hit.title),
                title=hit.title,
                snippet=plain_text(hit.snippet),
                provider=self.name,
                rank=rank,
                publisher="Wikipedia",
            )
            for rank, hit in enumerate(hits[: query.limit], start=1)
        ]

    def page_url(self, title: str) -> str:
        """Return the URL of the article called title."""
        return f"{self.base_url}/wiki/{quote(title.replace(' ', '_'), safe=_TITLE_SAFE)}"
