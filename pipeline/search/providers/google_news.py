"""Google News search as RSS, keyless.

`GET https://news.google.com/rss/search?q=...&hl=en-US&gl=US&ceid=US:en`; `site:` and
`before:YYYY-MM-DD` (exclusive) work inside `q`. Each RSS 2.0 `<item>` has a `<title>` ending in
" - Publisher", a `<link>` that is a news.google.com redirect (kept as the result URL: it is what
Google gave, and resolving it is the fetcher's job), a `<pubDate>` (RFC 822), a `<description>`
of HTML and `<source url="https://publisher.example">Publisher</source>`, whose host becomes
`publisher_domain` so credibility rates the publisher rather than Google.
"""

from __future__ import annotations

from datetime import timedelta

import httpx

from pipeline.search.base import SearchQuery, SearchResult
from pipeline.search.http import ProviderClient
from pipeline.search.parsing import (
    last_day,
    parse_date,
    plain_text,
    rss_items,
    site_domain,
    with_sites,
)
from pipeline.search.providers._common import provider_client

DEFAULT_URL = "https://news.google.com"


class GoogleNewsSearch:
    """Google News search through its public RSS feed."""

    name = "google_news"
    supports_sites = True

    def __init__(
        self,
        client: ProviderClient | httpx.AsyncClient,
        *,
        base_url: str = DEFAULT_URL,
        language: str = "en",
        region: str = "US",
    ) -> None:
        self.client = provider_client(self.name, client)
        self.base_url = base_url.rstrip("/")
        self.language = language
        self.region = region.upper()

    async def search(self, query: SearchQuery) -> list[SearchResult]:
        """Return Google News articles for query, best first."""
        text = with_sites(query.text, query.sites)
        if query.before is not None:
            text += f" before:{(last_day(query.before) + timedelta(days=1)).isoformat()}"
        language = query.language or self.language
        params: dict[str, str | int] = {
            "q": text,
            "hl": f"{language}-{self.region}" if language == "en" else language,
            "gl": self.region,
            "ceid": f"{self.region}:{language}",
        }
        body = await self.client.get_bytes(
            f"{self.base_url}/rss/search",
            params=params,
            headers={"Accept": "application/rss+xml, application/xml;q=0.9"},
        )
        return self._parse(body, query.limit)

    def _parse(self, body: bytes, limit: int) -> list[SearchResult]:
        results: list[SearchResult] = []
        for item in rss_items(self.name, body):
            link = (item.findtext("link") or "").strip()
            if not link.startswith(("http://", "https://")):
                continue
            source = item.find("source")
            publisher = " ".join((source.text or "").split()) if source is not None else ""
            title = " ".join((item.findtext("title") or "").split())
            if publisher and title.endswith(f" - {publisher}"):
                title = title[: -len(publisher) - 3]
            snippet = plain_text(item.findtext("description"))
            if publisher and snippet.endswith(publisher):
                snippet = snippet[: -len(publisher)].rstrip()
            results.append(
                SearchResult(
                    url=link,
                    title=title,
                    snippet=snippet,
                    provider=self.name,
                    rank=len(results) + 1,
                    published_at=parse_date(item.findtext("pubDate")),
                    publisher=publisher or None,
                    publisher_domain=site_domain(source.get("url")) if source is not None else None,
                )
            )
            if len(results) >= limit:
                break
        return results
