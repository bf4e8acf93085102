"""Page extraction: main text, title, author, publisher and date of an HTML page, its
ClaimReviews, and whether it is a wall (paywall, consent wall, bot protection) instead.

What a reader of the rendered page cannot see is dropped before trafilatura reads the page
(`pipeline.fetch.visibility`): scripts, styles and templates; `hidden`, `aria-hidden` and
`display:none`; text in a colour too close to its background, transparent, of no size, clipped
away or pushed off the page, by inline styles or the page's own `<style>` rules. Hidden text -
a favourite place for prompt injection - thus never reaches the document text, a model or a
quote. Styles from external stylesheets cannot be seen without fetching them.

Each page is parsed once: one lxml tree gives the ClaimReviews, a copy of it the wall check
(walls are judged on the page as served, hidden consent containers included), and the tree
after the visibility pass serves trafilatura for the text and metadata, author included.
trafilatura and htmldate copy the tree they are given rather than parse the HTML again.

Extraction is CPU-bound: async callers run `extract_page` in a worker thread (`pipeline.util.cpu`).
trafilatura (and htmldate with it) is imported on first use, so processes that never extract
a page never load it.

Failure policy: `extract_document` raises `ExtractionError` when a page has no usable main
text, and when it is a wall whose text is too short to be the article (the reason then starts
with "paywall", "consent wall" or "bot protection"); malformed JSON-LD blocks and ClaimReviews
without a claim or rating are skipped. `extract_metadata` raises `ExtractionError` only for an
empty or unparsable page.
"""

from __future__ import annotations

import copy
import json
import logging
import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

import lxml.html
from lxml import etree

from pipeline.errors import ExtractionError
from pipeline.factchecks.ratings import rating_to_label
from pipeline.fetch.visibility import drop_invisible
from pipeline.fetch.walls import detect_wall
from pipeline.records.domain import ClaimReview, Document, document_id_for
from pipeline.util.dates import parse_date
from pipeline.util.jsonld import first_object, number_of, text_of

if TYPE_CHECKING:
    from trafilatura.settings import Document as TrafilaturaDocument

log = logging.getLogger(__name__)

MIN_WORDS = 25
# A wall page whose main text is shorter than this is taken for the wall, not the article.
WALL_MAX_WORDS = 250
# Prose in any script is mostly letters; binary noise decoded as text is mostly symbols and
# U+FFFD. Only the start of a text is measured.
_MIN_LETTER_SHARE = 0.35
_MAX_REPLACEMENT_SHARE = 0.01
_MEASURED_CHARS = 20_000

# htmldate (run by trafilatura) with the time of day when the page gives one.
_DATE_PARAMS = {
    "original_date": True,
    "extensive_search": True,
    "outputformat": "%Y-%m-%dT%H:%M:%S%z",
}
_MAX_JSON_DEPTH = 24


@dataclass(frozen=True)
class PageMetadata:
    """What a page says about itself: title, author, site name and publication time."""

    title: str | None
    author: str | None
    site_name: str | None  # the page's own name for its site, else the URL's host name
    published_at: datetime | None


@dataclass(frozen=True)
class ExtractedPage:
    """A page's document and what else the page declares about itself (its author)."""

    document: Document
    metadata: PageMetadata


def extract_page(
    html: str,
    *,
    url: str,
    domain: str,
    fetched_at: datetime | None = None,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
) -> ExtractedPage:
    """Extract the main text and metadata of an HTML page, parsing it once."""
    from trafilatura import bare_extraction
    from trafilatura.settings import Document as TrafilaturaDocument

    tree = _parse_html(html, url)
    reviews = _claim_reviews_in(tree, page_url=url)
    served = copy.deepcopy(tree)  # a tenth of a parse; the wall check needs the page as served
    drop_invisible(tree)
    result = bare_extraction(
        tree,
        url=url,
        with_metadata=True,
        include_comments=False,
        include_tables=True,
        date_extraction_params=dict(_DATE_PARAMS),
    )
    text = ""
    if isinstance(result, TrafilaturaDocument):  # None: trafilatura found no main text
        text = (result.text or "").strip()
    words = len(text.split())
    if words < WALL_MAX_WORDS:
        # Only short pages are checked: a wall's markers also sit on pages with their article.
        wall = detect_wall(html, status, headers, tree=served)
        if wall:
            raise ExtractionError(url, f"{wall}: only {words} words of main text")
    if not isinstance(result, TrafilaturaDocument):
        raise ExtractionError(url, "no main text")
    if words < MIN_WORDS:
        raise ExtractionError(url, f"only {words} words of main text (at least {MIN_WORDS})")
    if not _readable(text):
        raise ExtractionError(url, "the text is not readable (binary or wrongly decoded)")
    metadata = _page_metadata(result, tree, url)
    review = next((r for r in reviews if r.label is not None), reviews[0] if reviews else None)
    document = Document(
        id=document_id_for(url),
        url=url,
        domain=domain,
        title=metadata.title or url,
        text=text,
        published_at=metadata.published_at,
        fetched_at=fetched_at,
        publisher=metadata.site_name,
        claim_review=review,
    )
    log.debug("extracted", extra={"url": url, "words": words, "reviews": len(reviews)})
    return ExtractedPage(document=document, metadata=metadata)


def extract_document(
    html: str,
    *,
    url: str,
    domain: str,
    fetched_at: datetime | None = None,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
) -> Document:
    """Extract the main text and metadata of an HTML page into a Document."""
    return extract_page(
        html, url=url, domain=domain, fetched_at=fetched_at, status=status, headers=headers
    ).document


def extract_metadata(html: str, url: str) -> PageMetadata:
    """Return the title, author, site name and publication time a page declares."""
    from trafilatura.metadata import extract_metadata as trafilatura_metadata

    tree = _parse_html(html, url)
    drop_invisible(tree)
    return _page_metadata(trafilatura_metadata(tree, url, dict(_DATE_PARAMS)), tree, url)


def parse_claim_reviews(html: str, *, page_url: str | None = None) -> list[ClaimReview]:
    """Return the schema.org ClaimReviews in the page's JSON-LD blocks."""
    try:
        tree = _parse_html(html, page_url or "<html>")
    except ExtractionError:
        return []
    return _claim_reviews_in(tree, page_url=page_url)


def _parse_html(html: str, url: str) -> Any:
    if not html.strip():
        raise ExtractionError(url, "empty page")
    # Bytes with an explicit encoding: lxml refuses str input that carries an XML declaration.
    parser = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)
    try:
        return lxml.html.document_fromstring(html.encode("utf-8", errors="replace"), parser)
    except (etree.ParserError, ValueError) as exc:
        raise ExtractionError(url, f"unparsable HTML: {exc}") from exc


def _page_metadata(result: TrafilaturaDocument, tree: Any, url: str) -> PageMetadata:
    title = (result.title or "").strip() or (tree.findtext(".//title") or "").strip() or None
    host = (urlsplit(url).hostname or "").removeprefix("www.")
    site = (result.sitename or "").strip()
    # With no name of its own, trafilatura names the site after the host of the page's
    # canonical URL, which the page chooses; the host we fetched from is the honest fallback.
    canonical = (urlsplit(result.url or "").hostname or "").removeprefix("www.")
    if not site or (canonical and site.lower() == canonical.lower()):
        site = host
    return PageMetadata(
        title=title,
        author=(result.author or "").strip() or None,
        site_name=site or None,
        published_at=parse_date(result.date),
    )


def _readable(text: str) -> bool:
    sample = text[:_MEASURED_CHARS]
    if sample.count("\ufffd") > _MAX_REPLACEMENT_SHARE * len(sample):
        return False
    visible = [ch for ch in sample if not ch.isspace()]
    letters = sum(1 for ch in visible if unicodedata.category(ch).startswith("L"))
    return letters >= _MIN_LETTER_SHARE * len(visible)


def _claim_reviews_in(tree: Any, *, page_url: str | None) -> list[ClaimReview]:
    reviews: list[ClaimReview] = []
    for script in tree.iter("script"):
        if "ld+json" not in (script.get("type") or "").lower():
            continue
        raw = (script.text or "").strip()
        # Some CMSs wrap JSON-LD in HTML comment or CDATA markers.
        raw = re.sub(r"^\s*(?:<!--|//\s*<!\[CDATA\[)|(?:-->|//\s*\]\]>)\s*$", "", raw)
        try:
            data = json.loads(raw, strict=False)
        except (ValueError, RecursionError) as exc:
            log.debug("malformed JSON-LD skipped", extra={"url": page_url, "error": str(exc)})
            continue
        for node in _find_claim_reviews(data, 0):
            review = _claim_review(node, page_url)
            if review is not None:
                reviews.append(review)
    return reviews


def _find_claim_reviews(node: Any, depth: int) -> Iterator[dict[str, Any]]:
    if depth > _MAX_JSON_DEPTH:
        return
    if isinstance(node, list):
        for item in node:
            yield from _find_claim_reviews(item, depth + 1)
    elif isinstance(node, dict):
        types = node.get("@type")
        for kind in types if isinstance(types, list) else [types]:
            if isinstance(kind, str) and re.split(r"[/:#]", kind)[-1] == "ClaimReview":
                yield node
                break
        for key, value in node.items():
            if key != "@context" and isinstance(value, dict | list):
                yield from _find_claim_reviews(value, depth + 1)


def _claim_review(node: dict[str, Any], page_url: str | None) -> ClaimReview | None:
    item = first_object(node.get("itemReviewed"))
    claim = text_of(node.get("claimReviewed")) or text_of(
        item.get("name") or item.get("text") or item.get("description")
    )
    rating = first_object(node.get("reviewRating"))
    raw_value = rating.get("ratingValue")
    value = number_of(raw_value)
    words = (
        text_of(rating.get("alternateName"))
        or text_of(rating.get("name"))
        or (text_of(raw_value) if value is None else None)
    )
    best, worst = number_of(rating.get("bestRating")), number_of(rating.get("worstRating"))
    if words is None and value is not None:
        words = f"{value:g}/{best if best is not None else 5:g}"
    if not claim and not words:
        return None
    link = text_of(node.get("url"))
    return ClaimReview(
        claim_reviewed=claim or "",
        rating=words or "",
        label=rating_to_label(words, value, best, worst),
        reviewer=_author(node.get("author")),
        url=urljoin(page_url or "", link) if link else page_url,
        date_published=parse_date(text_of(node.get("datePublished"))),
    )


def _author(author: Any) -> str | None:
    if isinstance(author, list):
        names = [name for name in (_author(a) for a in author) if name]
        return ", ".join(names) or None
    if isinstance(author, dict):
        return text_of(author.get("name")) or text_of(author.get("alternateName"))
    return text_of(author)
