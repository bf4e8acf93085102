"""Live search by default: a check searches the keyless providers, and offline it fails fast.

The providers are the real Wikipedia and Google News clients pointed at loopback stand-ins (or
at a port that refuses, or a server that never answers): no test reaches the internet.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bots.app.root import App
from bots.render import check_to_json
from bots.settings import FetchSettings, GraphSettings, SearchSettings, Settings
from pipeline.inputs.posts import post_from_text
from pipeline.records.search_status import LiveSearch
from tests.support.httpserver import HTML, LocalServer, Response, json_response, serve

CLAIM = "The WHO declared in 2023 that 5G towers spread COVID-19."
ARTICLE = """<html><head><title>5G and COVID-19 misinformation</title></head><body><article>
<h1>5G and COVID-19 misinformation</h1>
<p>The World Health Organization has said that 5G mobile networks and 5G towers do not spread
COVID-19. Viruses cannot travel on radio waves or mobile networks, and COVID-19 spreads in many
countries that have no 5G mobile networks at all.</p>
<p>Claims that 5G towers spread the coronavirus were widely shared in 2020 and debunked by
fact-checkers and health authorities around the world.</p>
</article></body></html>"""


@pytest.fixture
def site() -> Iterator[LocalServer]:
    with serve() as server:
        yield server


def _refused() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def _settings(folder: Path, **base_urls: str) -> Settings:
    search = SearchSettings(  # enabled, as for a user with no configuration
        providers=["wikipedia", "google_news"],
        base_urls=base_urls,  # type: ignore[arg-type]
        probe_timeout=0.5,
        connect_timeout=0.5,
        fact_check_sites=[],
    )
    fetch = FetchSettings(allowed_networks=("127.0.0.1/32",))
    return Settings(data_dir=folder, search=search, fetch=fetch, graph=GraphSettings(enabled=False))


def _check(app: App, text: str = CLAIM) -> Any:
    async def go() -> Any:
        try:
            return await app.check(post_from_text(text, max_chars=10_000))
        finally:
            await app.close_fetcher()

    return asyncio.run(go())


def test_search_is_on_without_configuration() -> None:
    search = SearchSettings()
    assert search.enabled and search.providers == ["wikipedia", "bing_news", "google_news"]


def test_offline_a_check_fails_fast_and_says_it_could_not_search(
    tmp_path: Path, embedder: Any, site: LocalServer
) -> None:
    site.route("/", Response(200, delay=30), method="*")  # connects, never answers
    settings = _settings(tmp_path, wikipedia=_refused(), google_news=site.base)
    app = App(settings, embedder=embedder)
    try:
        check = _check(app)
        status = check.search
        assert status.live is LiveSearch.UNREACHABLE and status.local_documents == 0
        reasons = {p.provider: p.reason for p in status.providers}
        assert reasons["wikipedia"].startswith("network error: ConnectError")
        assert reasons["google_news"].startswith("no answer within 0.5 s")
        # Recorded durations: each probe ended at its timeout, and nothing searched or fetched.
        assert all(p.seconds < 2.0 for p in status.providers)
        stages = {t.stage for t in check.timings}
        # Nothing to search: no web stage, no reference checks, no retrieval (no embedder load).
        assert stages.isdisjoint({"web", "reachability", "retrieval"})
        assert check.correction.headline.startswith(
            "factbot could not search: its local evidence index is empty and live search was "
            "unreachable (wikipedia: network error; google_news: no answer within 0.5 s"
        )
        assert check.verdict.label.value == "unverifiable" and not check.evidence
        stored = app.store.checks.get(check.id)
        assert stored.search == status
        assert stored.correction.could_not_search == check.correction.could_not_search
        body = check_to_json(stored)
        assert body["search"]["live"] == "unreachable"
        assert body["correction"]["could_not_search"].startswith("its local evidence index")
        # The next check reuses the probe's answers: no time spent, no request sent.
        seen = len(site.requests)
        again = _check(app, "Drinking bleach cures COVID-19.")
        assert [p.seconds for p in again.search.providers] == [0.0, 0.0]
        assert len(site.requests) == seen
    finally:
        app.close()


def test_a_reachable_provider_is_searched_and_its_pages_indexed(
    tmp_path: Path, embedder: Any, site: LocalServer
) -> None:
    hit = {"title": "5G misinformation", "snippet": "5G towers do not spread COVID-19"}
    site.route("/w/api.php", json_response({"query": {"search": [hit]}}))
    site.route("/wiki/5G_misinformation", Response(200, ARTICLE, content_type=HTML))
    settings = _settings(tmp_path, wikipedia=site.base, google_news=_refused())
    app = App(settings, embedder=embedder)
    try:
        check = _check(app)
        assert check.search.live is LiveSearch.PARTIAL
        [down] = check.search.failures()
        assert down.provider == "google_news" and "ConnectError" in down.reason
        assert app.store.documents.stats().documents == 1  # the page it retrieved, indexed
        assert any(r.path == "/wiki/5G_misinformation" for r in site.requests)
        assert "could not search" not in check.correction.text
        assert check.correction.could_not_search == ""
        assert "web" in {t.stage for t in check.timings}
    finally:
        app.close()
