"""The web caches expire on the store's clock: a FakeClock moved by hand, never a sleep."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from storage import Store
from storage.webcache import CachedPage, Reachability
from tests.support.clock import FakeClock

HOUR = timedelta(hours=1)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def clocked(tmp_path: Path, clock: FakeClock, open_store: Callable[..., Store]) -> Iterator[Store]:
    with open_store(tmp_path / "cache.db", clock=clock) as opened:
        yield opened


def _page(clock: FakeClock, url: str = "https://a.example/") -> CachedPage:
    return CachedPage(url, url, 200, "text/html", None, b"<p>x</p>", (), clock.now())


def test_search_results_live_for_their_ttl(clocked: Store, clock: FakeClock) -> None:
    results = [{"url": "https://a.example/", "title": "A"}]
    clocked.web.put_search("k", provider="p", query="q", before=None, results=results, ttl=HOUR)
    clock.advance(3599)
    assert clocked.web.get_search("k") == results
    clock.advance(1)
    assert clocked.web.get_search("k") is None


def test_pages_live_for_their_ttl_from_when_they_were_fetched(
    clocked: Store, clock: FakeClock
) -> None:
    page = _page(clock)
    clock.advance(600)  # stored ten minutes after it was fetched
    clocked.web.put_page(page, ttl=HOUR)
    clock.advance(2999)
    assert clocked.web.get_page(page.url) == page
    clock.advance(1)
    assert clocked.web.get_page(page.url) is None


def test_a_timestamp_from_the_future_does_not_extend_an_entry(
    clocked: Store, clock: FakeClock
) -> None:
    future = FakeClock(clock.now() + timedelta(days=30))
    clocked.web.put_page(_page(future), ttl=HOUR)
    check = Reachability("https://b.example/", True, "ok", future.now())
    clocked.web.put_reachability(check, ttl=HOUR)
    clock.advance(3600)
    assert clocked.web.get_page("https://a.example/") is None
    assert clocked.web.get_reachability("https://b.example/") is None


def test_reachability_lives_for_its_ttl(clocked: Store, clock: FakeClock) -> None:
    check = Reachability("https://a.example/", False, "HTTP 404", clock.now())
    clocked.web.put_reachability(check, ttl=HOUR)
    clock.advance(3599)
    assert clocked.web.get_reachability(check.url) == check
    clock.advance(1)
    assert clocked.web.get_reachability(check.url) is None


def test_purge_removes_only_expired_entries(clocked: Store, clock: FakeClock) -> None:
    web = clocked.web
    web.put_search("short", provider="p", query="q", before=None, results=[], ttl=HOUR)
    web.put_search("long", provider="p", query="q", before=None, results=[], ttl=3 * HOUR)
    web.put_page(_page(clock), ttl=HOUR)
    web.put_reachability(Reachability("https://a.example/", True, "ok", clock.now()), ttl=HOUR)
    assert web.purge_expired() == 0
    clock.advance(2 * 3600)
    assert web.purge_expired() == 3
    assert web.get_search("long") == []
    assert clocked.db.execute("SELECT count(*) FROM search_cache").fetchone()[0] == 1
