"""Ingest from HTML files, feeds, sitemaps and URLs over real HTTP on loopback."""

from __future__ import annotations

import shutil
from pathlib import Path

from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.evidence.ingest import Ingester
from pipeline.fetch.fetcher import Fetcher, FetchPolicy
from pipeline.records.domain import Label
from storage import Store
from tests.conftest import FIXTURES
from tests.support.httpserver import serve

LOOPBACK_ONLY = FetchPolicy(allowed_networks=("127.0.0.1/32",))
PAGES = FIXTURES / "pages"


def _rss(base: str, paths: list[str]) -> str:
    items = "".join(f"<item><title>{p}</title><link>{base}{p}</link></item>" for p in paths)
    return (
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>{items}</channel></rss>'
    )


async def test_feed_items_are_fetched_extracted_and_indexed(
    store: Store, embedder: OnnxEmbedder
) -> None:
    with serve() as site:
        site.add("/news.html", (PAGES / "news_article.html").read_bytes())
        site.add("/fc.html", (PAGES / "factcheck_pants_on_fire.html").read_bytes())
        site.add("/empty.html", (PAGES / "boilerplate.html").read_bytes())
        feed = site.add(
            "/feed.xml",
            _rss(site.base, ["/news.html", "/fc.html", "/empty.html", "/gone.html"]),
            "application/rss+xml",
        )
        async with Fetcher(LOOPBACK_ONLY) as fetcher:
            report = await Ingester(store.documents, embedder, fetcher=fetcher).ingest([feed])
    assert report.added == 2
    failed = sorted(e.source for e in report.errors)
    assert failed == [f"{site.base}/empty.html", f"{site.base}/gone.html"]
    fact_check = store.documents.by_url(f"{site.base}/fc.html")
    assert fact_check is not None and fact_check.claim_review is not None
    assert fact_check.claim_review.label is Label.FALSE
    assert fact_check.published_at is not None
    # The reviewed claim is searchable with the page text.
    assert store.documents.search_text('"bleach" AND "flu"', limit=5)


async def test_sitemap_pages_are_ingested(store: Store, embedder: OnnxEmbedder) -> None:
    with serve() as site:
        site.add("/news.html", (PAGES / "news_article.html").read_bytes())
        sitemap = site.add(
            "/sitemap.xml",
            '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>{site.base}/news.html</loc></url></urlset>",
            "application/xml",
        )
        async with Fetcher(LOOPBACK_ONLY) as fetcher:
            report = await Ingester(store.documents, embedder, fetcher=fetcher).ingest([sitemap])
    assert report.added == 1 and not report.errors


async def test_private_urls_are_refused_by_default(store: Store, embedder: OnnxEmbedder) -> None:
    with serve() as site:
        page = site.add("/news.html", (PAGES / "news_article.html").read_bytes())
        async with Fetcher() as fetcher:
            report = await Ingester(store.documents, embedder, fetcher=fetcher).ingest([page])
        assert site.seen == []  # nothing was sent
    assert report.added == 0
    assert "refused" in str(report.errors[0])


async def test_html_files_need_a_canonical_url(
    store: Store, embedder: OnnxEmbedder, tmp_path: Path
) -> None:
    folder = tmp_path / "pages"
    folder.mkdir()
    shutil.copy(PAGES / "news_article.html", folder / "a.html")
    shutil.copy(PAGES / "factcheck_pants_on_fire.html", folder / "b.html")
    (folder / "c.html").write_bytes(b"\xff\xfe\x00garbage\x00")
    report = await Ingester(store.documents, embedder).ingest([str(folder)])
    assert report.added == 1
    assert len(report.errors) == 2
    assert any("canonical" in str(e) for e in report.errors)


async def test_author_and_site_name_are_kept(store: Store, embedder: OnnxEmbedder) -> None:
    import json

    with serve() as site:
        page = site.add("/news.html", (PAGES / "news_article.html").read_bytes())
        async with Fetcher(LOOPBACK_ONLY) as fetcher:
            await Ingester(store.documents, embedder, fetcher=fetcher).ingest([page])
    document = store.documents.by_url(page)
    assert document is not None and document.publisher
    extra = json.loads(store.db.execute("SELECT extra FROM documents").fetchone()[0])
    assert extra["author"]
