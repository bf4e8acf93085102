"""The App's one fetcher: shared by every check, bound to one event loop, closed with the App."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bots.app.root import App
from bots.settings import FetchSettings, ReferenceSettings, SearchSettings, Settings
from pipeline.inputs.posts import post_from_text
from tests.support.httpserver import LocalServer, serve

ARTICLE = """<!DOCTYPE html><html><head><title>No, 5G does not spread the coronavirus</title>
<meta property="article:published_time" content="2020-04-15T10:00:00Z"></head>
<body><article><h1>No, 5G does not spread the coronavirus</h1>
<p>Posts claim that 5G networks spread the coronavirus. Viruses cannot travel on radio waves,
and COVID-19 spread in many places without any 5G network at all, such as Iran.</p>
<p>Health authorities and physicists agree that there is no mechanism by which mobile networks
could transmit a virus. The claim that 5G spreads the coronavirus is false.</p>
</article></body></html>"""


@pytest.fixture
def site():  # type: ignore[no-untyped-def]
    with serve() as running:
        running.add("/fact-check", ARTICLE)
        running.add("/robots.txt", "User-agent: *\nAllow: /\n", "text/plain")
        hit = {"url": f"{running.base}/fact-check", "title": "No", "content": "", "engine": "x"}
        running.add("/search", json.dumps({"query": "q", "results": [hit]}), "application/json")
        yield running


def _app(tmp_path: Path, site: LocalServer, embedder: Any) -> App:
    app = App(
        Settings(
            data_dir=tmp_path / "data",
            search=SearchSettings(
                providers=["searxng"], searxng_url=site.base, fact_check_sites=[]
            ),
            fetch=FetchSettings(allowed_networks=("127.0.0.1/32",)),
            references=ReferenceSettings(check_reachable="always"),
        ),
        embedder=embedder,
    )
    return app


def _forget_pages(app: App) -> None:
    """Empty the page and reachability caches, so the next check fetches every page again."""
    app.store.db.execute("DELETE FROM page_cache")
    app.store.db.execute("DELETE FROM url_checks")


async def test_two_checks_through_one_app_read_robots_txt_once(
    tmp_path: Path, site: LocalServer, embedder: Any
) -> None:
    app = _app(tmp_path, site, embedder)
    await app.check(post_from_text("5G networks spread the coronavirus!", max_chars=10_000))
    _forget_pages(app)
    await app.check(post_from_text("5G networks spread the coronavirus.", max_chars=10_000))
    assert site.seen.count("/fact-check") == 2  # fetched by each check
    assert site.seen.count("/robots.txt") == 1  # but robots.txt only by the first
    fetcher = await app.fetcher()
    app.close()
    for _ in range(10):  # inside the running loop, close() closes the fetcher at its next turn
        if fetcher.closed:
            break
        await asyncio.sleep(0)
    assert fetcher.closed


async def test_concurrent_checks_share_the_fetcher_its_robots_txt_and_its_limits(
    tmp_path: Path, site: LocalServer, embedder: Any
) -> None:
    app = _app(tmp_path, site, embedder)
    fetcher = await app.fetcher()
    posts = ["5G networks spread the coronavirus!", "Radio waves from 5G masts carry viruses."]
    await asyncio.gather(*(app.check(post_from_text(p, max_chars=10_000)) for p in posts))
    assert site.seen.count("/robots.txt") == 1  # one load, awaited by both checks
    assert await app.fetcher() is fetcher
    assert fetcher.gates.peak_per_host <= fetcher.policy.per_host
    await app.close_fetcher()
    assert fetcher.closed
    assert await app.fetcher() is not fetcher  # the next use opens a new one
    await app.close_fetcher()
    app.close()


def test_closing_the_app_closes_its_fetcher(tmp_path: Path) -> None:
    app = App(Settings(data_dir=tmp_path / "data"))
    fetcher = asyncio.run(app.fetcher())
    assert not fetcher.closed
    app.close()
    assert fetcher.closed


def test_a_fetcher_is_never_reused_once_its_event_loop_has_ended(tmp_path: Path) -> None:
    app = App(Settings(data_dir=tmp_path / "data"))
    first = asyncio.run(app.fetcher())
    second = asyncio.run(app.fetcher())
    assert second is not first
    assert first.closed and not second.closed
    app.close()
    assert second.closed


def test_a_fetcher_of_an_idle_loop_is_closed_in_that_loop(tmp_path: Path) -> None:
    app = App(Settings(data_dir=tmp_path / "data"))
    loop = asyncio.new_event_loop()
    try:
        fetcher = loop.run_until_complete(app.fetcher())
        assert loop.run_until_complete(app.fetcher()) is fetcher  # same loop: same fetcher
        app.close()
        assert fetcher.closed
    finally:
        loop.close()
