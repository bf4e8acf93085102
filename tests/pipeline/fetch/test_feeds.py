"""Feeds and sitemaps: real lxml on saved fixture documents."""

from __future__ import annotations

import gzip
import time
from datetime import UTC, datetime

import pytest

from pipeline.errors import ExtractionError
from pipeline.fetch.feeds import parse_feed, parse_sitemap, sniff_kind
from pipeline.util.dates import parse_date
from tests.conftest import FIXTURES

FEEDS = FIXTURES / "feeds"


def read(name: str) -> bytes:
    return (FEEDS / name).read_bytes()


def test_rss2_items_links_dates_and_summaries() -> None:
    items = parse_feed(read("rss2.xml"), base_url="https://gazette.example/feed.xml")

    assert [i.url for i in items] == [
        "https://gazette.example/news/2024/03/bike-lanes",
        "https://gazette.example/news/2024/03/library-hours",  # relative link resolved
        "https://gazette.example/news/2024/03/guid-only",  # permalink guid
    ]
    first, second, third = items
    assert first.title == "Council votes to expand bike lanes"
    assert first.published_at == datetime(2024, 3, 5, 13, 30, tzinfo=UTC)
    assert first.summary == "The council voted on Tuesday to expand bike lanes."
    assert second.published_at == datetime(2024, 3, 4, 10, 0, tzinfo=UTC)
    assert second.summary == "Library opening hours change."
    assert third.published_at is None  # "not a date"


def test_atom_prefers_alternate_link_and_honours_xml_base() -> None:
    items = parse_feed(read("atom.xml"), base_url="https://feeds.example/atom.xml")

    assert [i.url for i in items] == [
        "https://blog.example/posts/why-we-checked",
        "https://blog.example/posts/only-updated",
    ]
    assert items[0].published_at == datetime(2024, 2, 9, 13, 0, tzinfo=UTC)
    assert items[0].summary == "A short summary."
    assert items[1].title == "Only updated"
    assert items[1].published_at == datetime(2024, 1, 31, tzinfo=UTC)
    assert items[1].summary == "Full content here."


def test_rdf_items_are_read_from_beside_the_channel() -> None:
    items = parse_feed(read("rdf.xml"), base_url="https://journal.example/rss")

    assert [(i.url, i.title) for i in items] == [
        ("https://journal.example/articles/1", "Vaccines and autism: the evidence"),
        ("https://journal.example/articles/2", "Sea level rise by region"),
    ]
    assert items[0].published_at == datetime(2023, 12, 1, 9, 30, tzinfo=UTC)
    assert items[1].published_at == datetime(2023, 12, 2, tzinfo=UTC)


def test_sitemap_index_lists_nested_sitemaps() -> None:
    sitemap = parse_sitemap(read("sitemap_index.xml"))

    assert sitemap.pages == ()
    assert sitemap.sitemaps == (
        "https://gazette.example/sitemap-news.xml",
        "https://gazette.example/sitemap-2023.xml.gz",
    )


@pytest.mark.parametrize("name", ["urlset.xml", "urlset.xml.gz"])
def test_urlset_pages_with_lastmod_and_news_dates(name: str) -> None:
    sitemap = parse_sitemap(read(name))

    assert sitemap.sitemaps == ()
    assert sitemap.pages == (
        ("https://gazette.example/news/2024/03/bike-lanes", datetime(2024, 3, 5, tzinfo=UTC)),
        (
            "https://gazette.example/news/2024/03/library-hours",
            datetime(2024, 3, 4, 10, tzinfo=UTC),
        ),
        ("https://gazette.example/news/2024/03/election", datetime(2024, 3, 3, 17, tzinfo=UTC)),
        ("https://gazette.example/about", None),
    )  # the ftp:// location is dropped


def test_billion_laughs_is_refused_quickly() -> None:
    started = time.monotonic()
    with pytest.raises(ExtractionError, match="entities"):
        parse_feed(read("billion_laughs.xml"), base_url="https://lol.example/feed")
    assert time.monotonic() - started < 5.0  # expanded, it would not end (generous under load)


def test_gzip_bomb_sitemap_is_refused() -> None:
    # 60 MB of spaces inside a urlset: more than the 50 MB the sitemap protocol allows.
    raw = b"<urlset>" + b" " * (60 * 1024 * 1024) + b"</urlset>"
    with pytest.raises(ExtractionError, match="more than"):
        parse_sitemap(gzip.compress(raw, compresslevel=1))


def test_non_feed_and_garbage_raise_extraction_error() -> None:
    with pytest.raises(ExtractionError, match="not an RSS"):
        parse_feed(read("urlset.xml"), base_url="https://gazette.example/")
    with pytest.raises(ExtractionError, match="not a sitemap"):
        parse_sitemap(read("rss2.xml"))
    with pytest.raises(ExtractionError):
        parse_feed(b"\x00\x01 not xml at all", base_url="https://x.example/")
    with pytest.raises(ExtractionError):
        parse_sitemap(b"")


@pytest.mark.parametrize(
    ("name", "content_type", "kind"),
    [
        ("rss2.xml", None, "feed"),
        ("atom.xml", "application/xml", "feed"),
        ("rdf.xml", "text/xml", "feed"),
        ("sitemap_index.xml", None, "sitemap"),
        ("urlset.xml", None, "sitemap"),
        ("urlset.xml.gz", "application/octet-stream", "sitemap"),
    ],
)
def test_sniff_kind_of_fixtures(name: str, content_type: str | None, kind: str) -> None:
    assert sniff_kind(read(name), content_type) == kind


def test_sniff_kind_of_html_and_other() -> None:
    assert sniff_kind(b"<!DOCTYPE html><html><body>x</body></html>", None) == "html"
    assert sniff_kind(b"\xef\xbb\xbf  <html lang='en'>", None) == "html"
    assert sniff_kind(b"<div>fragment</div>", "text/html; charset=utf-8") == "html"
    assert sniff_kind(b"<?xml version='1.0'?><!-- c --><svg/>", "image/svg+xml") == "other"
    assert sniff_kind(b"\x89PNG\r\n\x1a\n", "image/png") == "other"
    assert sniff_kind(b"", None) == "other"


def test_parse_date_forms() -> None:
    assert parse_date("Tue, 05 Mar 2024 14:30:00 GMT") == datetime(2024, 3, 5, 14, 30, tzinfo=UTC)
    assert parse_date("2024-03-05T14:30:00Z") == datetime(2024, 3, 5, 14, 30, tzinfo=UTC)
    assert parse_date("2024-03-05") == datetime(2024, 3, 5, tzinfo=UTC)
    assert parse_date("yesterday") is None
    assert parse_date(None) is None
