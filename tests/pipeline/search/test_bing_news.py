"""Bing News RSS: the request, and article URLs taken from Bing's click-through links."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from pipeline.errors import SearchError
from pipeline.search.base import SearchQuery
from pipeline.search.providers import BingNewsSearch
from pipeline.search.providers.bing_news import article_url
from tests.pipeline.search.fakeapi import RSS, FakeAPI, Reply

REUTERS = "https://www.reuters.com/article/factcheck-5g-covid-idUSL1N2UM1A2"
FEED = f"""<?xml version="1.0" encoding="utf-8" ?>
<rss version="2.0" xmlns:News="https://www.bing.com:443/news/search?q=5g&amp;format=rss">
<channel><title>5g covid - BingNews</title><link>https://www.bing.com/news</link>
<item>
  <title>Fact check: 5G does not spread COVID-19</title>
  <link>http://www.bing.com/news/apiclick.aspx?ref=FexRss&amp;aid=&amp;tid=abc&amp;url={
    REUTERS.replace(":", "%3a").replace("/", "%2f")
}&amp;c=123&amp;mkt=en-us</link>
  <description>There is no link between &lt;b&gt;5G&lt;/b&gt; and the virus.</description>
  <pubDate>Wed, 15 Apr 2020 10:30:00 GMT</pubDate>
  <News:Source>Reuters</News:Source>
</item>
<item>
  <title>A click-through that names no article</title>
  <link>http://www.bing.com/news/apiclick.aspx?ref=FexRss&amp;tid=def</link>
</item>
<item>
  <title>A direct link</title>
  <link>https://apnews.com/article/5g-virus-claims</link>
</item>
</channel></rss>""".encode()


async def test_bing_news_reads_the_publishers_urls(api: FakeAPI, http: httpx.AsyncClient) -> None:
    api.queue(Reply(200, FEED, RSS))
    provider = BingNewsSearch(http, base_url=api.base)
    results = await provider.search(SearchQuery("5g covid", sites=("reuters.com", "apnews.com")))

    (seen,) = api.seen
    assert (seen.method, seen.path) == ("GET", "/news/search")
    assert seen.param("q") == "5g covid (site:reuters.com OR site:apnews.com)"
    assert (seen.param("format"), seen.param("mkt")) == ("rss", "en-US")
    reuters, ap = results
    assert reuters.url == REUTERS and reuters.publisher == "Reuters"
    assert reuters.publisher_domain == "reuters.com"
    assert reuters.snippet == "There is no link between 5G and the virus."
    assert reuters.published_at == datetime(2020, 4, 15, 10, 30, tzinfo=UTC)
    assert (reuters.rank, ap.rank, ap.provider) == (1, 2, "bing_news")
    assert ap.url == "https://apnews.com/article/5g-virus-claims" and ap.publisher is None


async def test_bing_news_refuses_what_is_not_rss(api: FakeAPI, http: httpx.AsyncClient) -> None:
    api.queue(Reply(200, b"<html><body>consent</body></html>", "text/html"))
    with pytest.raises(SearchError, match=r"not an RSS feed|not valid XML"):
        await BingNewsSearch(http, base_url=api.base).search(SearchQuery("x"))


def test_article_urls_never_come_from_elsewhere() -> None:
    assert article_url("javascript:alert(1)") is None
    assert article_url("https://www.bing.com/news/apiclick.aspx?url=javascript%3aalert(1)") is None
    elsewhere = "https://example.org/a?url=https%3a%2f%2fother.example"
    assert article_url(elsewhere) == elsewhere  # only Bing's own click-throughs are unwrapped
