"""The page cache: the store's page_cache table behind the fetcher."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from pipeline.fetch.fetcher import FetchedPage, Fetcher, FetchPolicy, PageCache
from storage import Store
from storage.pagecache import StorePageCache
from tests.support.clock import FakeClock
from tests.support.httpserver import serve

POLICY = FetchPolicy(allowed_networks=("127.0.0.1/32",))
HTML = "<html><body><p>Cached words.</p></body></html>"


def test_a_page_round_trips_through_the_store(store: Store) -> None:
    cache = StorePageCache(store.web, ttl=timedelta(hours=1))
    fetched = datetime.now(UTC).replace(microsecond=0)
    page = FetchedPage(
        url="https://news.example/final",
        requested_url="https://news.example/start",
        status=200,
        content_type="text/html",
        charset="iso-8859-1",
        body="café".encode("latin-1"),
        redirects=("https://news.example/start",),
        fetched_at=fetched,
    )

    cache.put(page)
    hit = cache.get("https://news.example/start")

    assert hit == replace(page, from_cache=True)
    assert hit is not None and hit.text() == "café"
    assert cache.get("https://news.example/final") is None  # keyed by the requested URL


def test_expired_and_unsuccessful_pages_are_not_served(tmp_path: Path) -> None:
    clock = FakeClock()
    store = Store.open(tmp_path / "clocked.db", clock=clock)
    page = FetchedPage("https://a.example/", "https://a.example/", 200, "text/html", None, b"x", ())
    StorePageCache(store.web, ttl=timedelta(hours=1)).put(page)
    assert StorePageCache(store.web, ttl=timedelta(hours=1)).get(page.url) is not None
    clock.advance(3600)
    assert StorePageCache(store.web, ttl=timedelta(hours=1)).get(page.url) is None

    cache = StorePageCache(store.web, ttl=timedelta(hours=1))
    cache.put(
        replace(page, url="https://a.example/e", requested_url="https://a.example/e", status=500)
    )
    assert cache.get("https://a.example/e") is None
    store.close()


def test_database_errors_are_misses_not_failures(store: Store) -> None:
    cache = StorePageCache(store.web, ttl=timedelta(hours=1))
    page = FetchedPage("https://a.example/", "https://a.example/", 200, "text/html", None, b"x", ())
    store.close()
    cache.put(page)
    assert cache.get(page.url) is None


async def test_a_hit_makes_no_request_not_even_for_robots(store: Store) -> None:
    cache: PageCache = StorePageCache(store.web, ttl=timedelta(hours=1))
    with serve() as site:
        url = site.add("/story", HTML)
        async with Fetcher(POLICY, cache=cache) as fetcher:
            first = await fetcher.fetch(url)
        assert site.seen == ["/robots.txt", "/story"]

        async with Fetcher(POLICY, cache=cache) as fetcher:
            second = await fetcher.fetch(url)
        assert site.seen == ["/robots.txt", "/story"]  # nothing more was sent

    assert not first.from_cache and second.from_cache
    assert second.body == first.body and second.url == first.url
    assert second.fetched_at == first.fetched_at


async def test_redirected_pages_are_cached_under_the_requested_url(store: Store) -> None:
    """A mock transport stands in for a public site that redirects."""

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/start":
            return httpx.Response(301, headers={"Location": "/final"})
        if request.url.path == "/final":
            body = httpx.ByteStream(HTML.encode())
            return httpx.Response(200, headers={"Content-Type": "text/html"}, stream=body)
        return httpx.Response(404)

    async def resolve(host: str, port: int) -> list[str]:
        return ["93.184.216.34"]

    cache = StorePageCache(store.web, ttl=timedelta(hours=1))
    transport = httpx.MockTransport(handler)
    async with Fetcher(cache=cache, resolver=resolve, transport=transport) as fetcher:
        page = await fetcher.fetch("https://news.example/start")

    assert page.url == "https://news.example/final"
    assert cache.get("https://news.example/start") == replace(page, from_cache=True)
    assert cache.get("https://news.example/final") is None


async def test_only_text_pages_are_cached(store: Store) -> None:
    cache = StorePageCache(store.web, ttl=timedelta(hours=1))
    policy = replace(POLICY, content_types=(*POLICY.content_types, "application/pdf"))
    with serve() as site:
        pdf = site.add("/doc.pdf", b"%PDF-1.7 binary", "application/pdf")
        text = site.add("/notes.txt", "plain words", "text/plain; charset=utf-8")
        async with Fetcher(policy, cache=cache) as fetcher:
            await fetcher.fetch(pdf)
            await fetcher.fetch(text)
    assert cache.get(pdf) is None
    assert cache.get(text) is not None
