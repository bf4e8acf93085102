"""A whole check with live web search: a local SearXNG stand-in and local publisher pages."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from bots.app.root import App
from bots.settings import FetchSettings, SearchSettings, Settings
from pipeline.inputs.posts import post_from_text
from pipeline.records.domain import Basis, Label
from tests.support.httpserver import LocalServer, serve

FACT_CHECK = """<!DOCTYPE html><html><head><title>No, 5G does not spread the coronavirus</title>
<meta property="article:published_time" content="2020-04-15T10:00:00Z">
<script type="application/ld+json">{"@context": "https://schema.org", "@type": "ClaimReview",
 "claimReviewed": "5G networks spread the coronavirus.", "datePublished": "2020-04-15",
 "author": {"@type": "Organization", "name": "Local Fact Desk"},
 "reviewRating": {"@type": "Rating", "ratingValue": 1, "bestRating": 5, "worstRating": 1,
                  "alternateName": "False"}}</script></head>
<body><article><h1>No, 5G does not spread the coronavirus</h1>
<p>Posts claim that 5G networks spread the coronavirus. Viruses cannot travel on radio waves,
and COVID-19 spread in many places without any 5G network at all, such as Iran.</p>
<p>Health authorities and physicists agree that there is no mechanism by which mobile networks
could transmit a virus. The claim that 5G spreads the coronavirus is false.</p>
</article></body></html>"""

NEWS = """<!DOCTYPE html><html><head><title>Engineers explain how 5G works</title>
<meta property="article:published_time" content="2020-03-01T10:00:00Z"></head>
<body><article><h1>Engineers explain how 5G works</h1>
<p>5G networks use radio waves at higher frequencies than earlier mobile networks. The radio
waves carry data between phones and masts, and they do not carry viruses or bacteria.</p>
<p>Engineers said the rollout of 5G networks continued during the coronavirus pandemic.</p>
</article></body></html>"""


def _searx_results(site: LocalServer) -> dict[str, object]:
    return {
        "query": "q",
        "number_of_results": 4,
        "results": [
            {
                "url": f"{site.base}/fact-check",
                "title": "No, 5G does not spread the coronavirus",
                "content": "Viruses cannot travel on radio waves.",
                "engine": "x",
                "score": 1.0,
            },
            {
                "url": "https://www.naturalnews.com/5g-virus.html",
                "title": "5G spreads virus",
                "content": "insiders say",
                "engine": "x",
                "score": 0.9,
            },
            {
                "url": f"{site.base}/later",
                "title": "Later story",
                "content": "later",
                "publishedDate": "2021-01-01T00:00:00",
                "engine": "x",
                "score": 0.8,
            },
            {
                "url": f"{site.base}/news",
                "title": "Engineers explain how 5G works",
                "content": "radio waves",
                "engine": "x",
                "score": 0.7,
            },
            {
                "url": f"{site.base}/gone",
                "title": "Gone",
                "content": "404",
                "engine": "x",
                "score": 0.6,
            },
        ],
    }


@contextmanager
def publishers() -> Iterator[LocalServer]:
    """A fact-checker, a news page and a SearXNG stand-in that finds both, on one server."""
    with serve() as running:
        running.add("/fact-check", FACT_CHECK)
        running.add("/news", NEWS)
        running.add("/robots.txt", "User-agent: *\nAllow: /\n", "text/plain")
        running.add("/search", json.dumps(_searx_results(running)), "application/json")
        yield running


@pytest.fixture
def site() -> Iterator[LocalServer]:
    with publishers() as running:
        yield running


def _app(tmp_path: Path, site: LocalServer, embedder, tmp_block: Path) -> App:  # type: ignore[no-untyped-def]
    settings = Settings(
        data_dir=tmp_path / "data",
        search=SearchSettings(providers=["searxng"], searxng_url=site.base, fact_check_sites=[]),
        fetch=FetchSettings(allowed_networks=("127.0.0.1/32",)),
    )
    app = App(settings, embedder=embedder)
    from pipeline.credibility.importers import import_sources

    import_sources(app.store.sources, tmp_block, fmt="blocklist")
    return app


async def test_web_search_finds_fetches_and_cites_a_fact_check(
    tmp_path: Path, site: LocalServer, embedder
) -> None:  # type: ignore[no-untyped-def]
    block = tmp_path / "block.txt"
    block.write_text("naturalnews.com\n")
    app = _app(tmp_path, site, embedder, block)
    post = post_from_text(
        "5G networks spread the coronavirus!",
        max_chars=10_000,
        created_at=datetime(2020, 12, 1, tzinfo=UTC),  # a post's own time bounds its evidence
    )
    check = await app.check(post)
    assert check.before == post.created_at
    assert check.verdict.label is Label.FALSE
    assert check.correction.references[0].url == f"{site.base}/fact-check"
    assert "web" in [t.stage for t in check.timings]
    assert "reachability" in [t.stage for t in check.timings]
    searches = [p for p in site.seen if p.startswith("/search")]
    assert parse_qs(urlsplit(searches[0]).query)["format"] == ["json"]
    fetched = {p for p in site.seen if not p.startswith(("/search", "/robots"))}
    assert "/later" not in fetched  # dated after the post by the provider: never fetched
    assert {"/fact-check", "/news", "/gone"} <= fetched
    stored = app.store.documents.by_url(f"{site.base}/fact-check")
    assert stored is not None and stored.claim_review is not None
    # Every reference is a document the pipeline retrieved and stored.
    for ref in check.correction.references:
        assert app.store.documents.get(ref.document_id) is not None

    # The same claim again: search answers come from the cache.
    before = len([p for p in site.seen if p.startswith("/search")])
    await app.check(post)
    assert len([p for p in site.seen if p.startswith("/search")]) == before
    app.close()


async def test_unreachable_references_are_dropped(
    tmp_path: Path, site: LocalServer, embedder
) -> None:  # type: ignore[no-untyped-def]
    block = tmp_path / "block.txt"
    block.write_text("naturalnews.com\n")
    app = _app(tmp_path, site, embedder, block)
    await app.check(post_from_text("5G networks spread the coronavirus!", max_chars=10_000))
    # The fact-check page disappears; its cached reachability expires.
    site.unroute("/fact-check")
    app.store.db.execute("DELETE FROM url_checks")
    app.store.db.execute("DELETE FROM page_cache")
    check = await app.check(post_from_text("5G networks spread the coronavirus.", max_chars=10_000))
    assert all(r.url != f"{site.base}/fact-check" for r in check.correction.references)
    # The fact-check's rating went with its page: what decides now is the evidence left.
    assert all(cv.basis is not Basis.REVIEW for cv in check.verdict.claims)
    assert check.judge == "verifier"
    app.close()


def _default_policy_app(tmp_path: Path, site: LocalServer, embedder, **retrieval: str) -> App:  # type: ignore[no-untyped-def]
    from bots.settings import RetrievalSettings

    settings = Settings(
        data_dir=tmp_path / "data",
        search=SearchSettings(providers=["searxng"], searxng_url=site.base, fact_check_sites=[]),
        fetch=FetchSettings(allowed_networks=("127.0.0.1/32",)),
        retrieval=RetrievalSettings(**retrieval),  # type: ignore[arg-type]
    )
    return App(settings, embedder=embedder)


async def test_default_policy_never_cites_unrated_pages_found_by_web_search(
    tmp_path: Path, site: LocalServer, embedder
) -> None:  # type: ignore[no-untyped-def]
    app = _default_policy_app(tmp_path, site, embedder)
    assert app.settings.retrieval.unrated_sources == "local"
    post = post_from_text(
        "5G networks spread the coronavirus!",
        max_chars=10_000,
        created_at=datetime(2020, 12, 1, tzinfo=UTC),
    )
    check = await app.check(post)
    # The loopback publisher has no rating: found by search, it is neither fetched nor cited.
    assert not {"/fact-check", "/news", "/gone"} & set(site.seen)
    assert check.correction.references == ()
    assert check.verdict.label is Label.UNVERIFIABLE
    app.close()


async def test_default_policy_cites_unrated_pages_the_operator_indexed(
    tmp_path: Path, site: LocalServer, embedder
) -> None:  # type: ignore[no-untyped-def]
    from pipeline.evidence.ingest import Ingester

    settings = Settings(
        data_dir=tmp_path / "data",
        search=SearchSettings(enabled=False),
        fetch=FetchSettings(allowed_networks=("127.0.0.1/32",)),
    )
    settings = settings.model_copy(
        update={"retrieval": settings.retrieval.model_copy(update={"unrated_sources": "local"})}
    )
    app = App(settings, embedder=embedder)
    # The operator ingests the (unrated) fact-check page into the local index.
    report = await Ingester(app.store.documents, embedder, fetcher=await app.fetcher()).ingest(
        [f"{site.base}/fact-check"]
    )
    assert report.added == 1
    check = await app.check(
        post_from_text(
            "5G networks spread the coronavirus!",
            max_chars=10_000,
            created_at=datetime(2020, 12, 1, tzinfo=UTC),
        )
    )
    assert check.verdict.label is Label.FALSE
    assert check.correction.references[0].url == f"{site.base}/fact-check"
    await app.close_fetcher()
    app.close()
