"""Feeds (RSS 2.0, RSS 1.0/RDF, Atom) and XML sitemaps, parsed safely with lxml.

The XML parser never loads a DTD, never touches the network, never expands entities and keeps
libxml2's size limits; a document that declares its own entities is refused before parsing, so a
billion-laughs document costs nothing. Bodies starting with the gzip magic bytes are inflated up
to the 50 MB the sitemap protocol allows.

Failure policy: `parse_feed` and `parse_sitemap` raise `ExtractionError` for a body that is not
the expected kind of document; items without a usable http(s) link are skipped.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from datetime import datetime
from typing import Literal
from urllib.parse import urljoin, urlsplit

import lxml.html
from lxml import etree

from pipeline.errors import ExtractionError
from pipeline.util.dates import parse_date

MAX_XML_BYTES = 50 * 1024 * 1024

Kind = Literal["feed", "sitemap", "html", "other"]

_GZIP_MAGIC = b"\x1f\x8b"
_INTERNAL_SUBSET = re.compile(rb"<!DOCTYPE[^>\[]*\[", re.IGNORECASE)
# The prolog before the root element: XML declaration, processing instructions, comments and a
# doctype (whose internal subset may itself contain '>').
_PROLOG_ITEM = re.compile(
    rb"\s*(?:<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^\[>]*(?:\[.*?\])?\s*>)", re.DOTALL | re.IGNORECASE
)
_ROOT_TAG = re.compile(rb"\s*<([A-Za-z_][\w.:-]*)")
_FEED_ROOTS = frozenset({"rss", "rdf", "feed"})
_SITEMAP_ROOTS = frozenset({"urlset", "sitemapindex"})
_HTML_ROOTS = frozenset({"html", "head", "body", "title", "meta"})
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


@dataclass(frozen=True)
class FeedItem:
    """One entry of a feed."""

    url: str
    title: str | None
    published_at: datetime | None
    summary: str | None  # plain text; HTML in the feed is flattened


@dataclass(frozen=True)
class Sitemap:
    """The pages (with their last modification) and nested sitemaps a sitemap lists."""

    pages: tuple[tuple[str, datetime | None], ...]
    sitemaps: tuple[str, ...]


def sniff_kind(body: bytes, content_type: str | None) -> Kind:
    """Tell a feed, a sitemap and an HTML page apart by their root element, then content type."""
    head = body[:65536]
    if head.startswith(_GZIP_MAGIC):
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 65536)
        except zlib.error:
            return "other"
    root = _root_name(head.removeprefix(b"\xef\xbb\xbf"))
    if root in _FEED_ROOTS:
        return "feed"
    if root in _SITEMAP_ROOTS:
        return "sitemap"
    media = (content_type or "").partition(";")[0].strip().lower()
    if root in _HTML_ROOTS or media in _HTML_TYPES:
        return "html"
    return "other"


def parse_feed(body: bytes, *, base_url: str) -> list[FeedItem]:
    """Return the items of an RSS 2.0, RSS 1.0 (RDF) or Atom feed, links made absolute."""
    root = _parse_xml(body, base_url)
    name = _local(root)
    if name == "rss":
        channel = _child(root, "channel")
        entries = _children(channel, "item") if channel is not None else []
    elif name == "RDF":
        entries = _children(root, "item")  # RSS 1.0 items are siblings of the channel
    elif name == "feed":
        entries = _children(root, "entry")
    else:
        raise ExtractionError(base_url, f"not an RSS, RDF or Atom feed (root <{name}>)")
    items: dict[str, FeedItem] = {}
    for entry in entries:
        url = _entry_link(entry, base_url)
        if url is None or url in items:
            continue
        when = _text(_child(entry, "pubDate", "date", "published", "issued", "updated", "modified"))
        items[url] = FeedItem(
            url=url,
            title=_text(_child(entry, "title")),
            published_at=parse_date(when),
            summary=_plain(_text(_child(entry, "description", "summary", "encoded", "content"))),
        )
    return list(items.values())


def parse_sitemap(body: bytes, *, base_url: str | None = None) -> Sitemap:
    """Return the pages and nested sitemaps of a urlset or sitemapindex document."""
    where = base_url or "<sitemap>"
    root = _parse_xml(body, where)
    name = _local(root)
    if name not in _SITEMAP_ROOTS:
        raise ExtractionError(where, f"not a sitemap (root <{name}>)")
    pages: dict[str, datetime | None] = {}
    sitemaps: dict[str, None] = {}
    for entry in _children(root, "url" if name == "urlset" else "sitemap"):
        loc = _absolute(_text(_child(entry, "loc")), base_url)
        if loc is None:
            continue
        if name == "sitemapindex":
            sitemaps[loc] = None
            continue
        # Google News sitemaps carry the publication date deeper than lastmod.
        news_date = next((d for d in entry.iter() if _local(d) == "publication_date"), None)
        pages.setdefault(loc, parse_date(_text(_child(entry, "lastmod")) or _text(news_date)))
    return Sitemap(pages=tuple(pages.items()), sitemaps=tuple(sitemaps))


def _parse_xml(body: bytes, where: str) -> etree._Element:
    data = body
    if data.startswith(_GZIP_MAGIC):
        try:
            data = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, MAX_XML_BYTES + 1)
        except zlib.error as exc:
            raise ExtractionError(where, f"bad gzip data: {exc}") from exc
        if len(data) > MAX_XML_BYTES:
            raise ExtractionError(where, f"inflates to more than {MAX_XML_BYTES} bytes")
    if _INTERNAL_SUBSET.search(data[:65536]) and b"<!ENTITY" in data:
        raise ExtractionError(where, "the document declares XML entities")
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        recover=True,  # real feeds often carry a stray '&'; salvage what parses
    )
    try:
        root = etree.fromstring(data, parser, base_url=where)
    except etree.XMLSyntaxError as exc:
        raise ExtractionError(where, f"malformed XML: {exc}") from exc
    if root is None:
        raise ExtractionError(where, "no XML document")
    return root


def _root_name(head: bytes) -> str | None:
    pos = 0
    while match := _PROLOG_ITEM.match(head, pos):
        pos = match.end()
    if head[pos:].lstrip()[:14].lower() == b"<!doctype html":
        return "html"
    root = _ROOT_TAG.match(head, pos)
    if root is None:
        return None
    return root.group(1).decode("ascii").rpartition(":")[2].lower()


def _local(element: etree._Element) -> str:
    tag = element.tag
    return etree.QName(tag).localname if isinstance(tag, str) else ""


def _children(parent: etree._Element, name: str) -> list[etree._Element]:
    return [child for child in parent if _local(child) == name]


def _child(parent: etree._Element, *names: str) -> etree._Element | None:
    """Return the first child named by the earliest of names that has one."""
    for name in names:
        for child in parent:
            if _local(child) == name:
                return child
    return None


def _text(element: etree._Element | None) -> str | None:
    if element is None:
        return None
    text = " ".join("".join(element.itertext()).split())
    return text or None


def _entry_link(entry: etree._Element, base_url: str) -> str | None:
    links = _children(entry, "link")
    # Atom: rel="alternate" (the default) points at the page; RSS: the link's text does.
    for link in links:
        href = link.get("href")
        if href and link.get("rel", "alternate") == "alternate":
            return _absolute(href, link.base or base_url)
    for link in links:
        found = _absolute(_text(link) or link.get("href"), link.base or base_url)
        if found is not None:
            return found
    guid = _child(entry, "guid", "id")
    if guid is not None and guid.get("isPermaLink", "true") != "false":
        return _absolute(_text(guid), base_url)
    return None


def _absolute(link: str | None, base: str | None) -> str | None:
    if not link:
        return None
    url = urljoin(base, link.strip()) if base else link.strip()
    parts = urlsplit(url)
    return url if parts.scheme in ("http", "https") and parts.netloc else None


def _plain(text: str | None) -> str | None:
    """Flatten HTML in a feed summary to text."""
    if not text or "<" not in text:
        return text
    try:
        fragment = lxml.html.fragment_fromstring(text, create_parent="div")
    except (etree.ParserError, ValueError):
        return text
    return " ".join(fragment.text_content().split()) or None
