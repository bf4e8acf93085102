"""Bing News search as RSS, keyless: news whose links lead to the publishers themselves.

`GET https://www.bing.com/news/search?q=...&format=rss&mkt=en-US`; `site:` works inside `q`
(several OR-ed in parentheses). Each RSS 2.0 `<item>` has a `<title>`, a `<link>` that is a
`bing.com/news/apiclick.aspx?...&url=<the article's URL, percent-encoded>&...` click-through, a
`<description>` and a `<pubDate>` (RFC 822), and the publisher's name in a namespaced
`<News:Source>` element. The article URL is taken from the link's `url` parameter, so the
fetcher reads the publisher's page and credibility rates the publisher (Google News links, by
contrast, only resolve in a browser). A link off bing.com is kept as it is; a bing.com link
without an http(s) `url` is skipped.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
from lxml import etree

from pipeline.search.base import SearchQuery, SearchResult
from pipeline.search.http import ProviderClient
from pipeline.search.parsing import parse_date, plain_text, rss_items, site_domain, with_sites
from pipeline.search.providers._common import provider_client

DEFAULT_URL = "https://www.bing.com"


class BingNewsSearch:
    """Bing News search through its public RSS feed."""

    name = "bing_news"
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
        """Return Bing News articles for query, best first (the time bound is applied later)."""
        language = query.language or self.language
        params: dict[str, str | int] = {
            "q": with_sites(query.text, query.sites),
            "format": "rss",
            "mkt": f"{language}-{self.region}",
        }
        body = await self.client.get_bytes(
            f"{self.base_url}/news/search",
            params=params,
            headers={"Accept": "application/rss+xml, application/xml;q=0.9"},
        )
        return self._parse(body, query.limit)

    def _parse(self, body: bytes, limit: int) -> list[SearchResult]:
        results: list[SearchResult] = []
        for item in rss_items(self.name, body):
            url = article_url((item.findtext("link") or "").strip())
            if url is None:
                continue
            publisher = " ".join(_source(item).split())
            results.append(
                SearchResult(
                    url=url,
                    title=" ".join((item.findtext("title") or "").split()),
                    snippet=plain_text(item.findtext("description")),
                    provider=self.name,
                    rank=len(results) + 1,
                    published_at=parse_date(item.findtext("pubDate")),
                    publisher=publisher or None,
                    publisher_domain=site_domain(url),
                )
            )
            if len(results) >= limit:
                break
        return results


def article_url(link: str) -> str | None:
    """Return the article a Bing News link leads to, or None when it names none."""
    if not link.startswith(("http://", "https://")):
        return None
    parts = urlsplit(link)
    host = (parts.hostname or "").lower()
    if host != "bing.com" and not host.endswith(".bing.com"):
        return link  # already the publisher's own link
    target = parse_qs(parts.query).get("url", [""])[0].strip()
    # A click-through without an http(s) target is nothing a reader could follow.
    return target if target.startswith(("http://", "https://")) else None


def _source(item: etree._Element) -> str:
    """Return the text of the item's `<News:Source>` (any namespace), or ""."""
    for child in item:
        if isinstance(child.tag, str) and etree.QName(child).localname.lower() == "source":
            return child.text or ""
    return ""
