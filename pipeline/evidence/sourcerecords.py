"""Turning ingest records (JSON objects, HTML heads) into documents.

JSONL records need `url` and `text`; `title`, `publisher` and a date (`published_at`,
`publish_date`, `date` or `datePublished`) are optional, and every other field is kept as extra
data. A `claim_review` object (`claim_reviewed`, `rating`, optional `reviewer`, `url`) marks a
fact-check.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from pipeline.credibility.domains import registrable_domain
from pipeline.factchecks.ratings import rating_to_label
from pipeline.records.domain import ClaimReview, Document, document_id_for
from pipeline.util.dates import parse_date as parse_text_date

_DATE_FIELDS = ("published_at", "publish_date", "date", "datePublished", "published")
_TEXT_FIELDS = ("text", "content", "body")
_TITLE_FIELDS = ("title", "headline")
_PUBLISHER_FIELDS = ("publisher", "site_name", "source")
_KNOWN = {"url", "claim_review", *_DATE_FIELDS, *_TEXT_FIELDS, *_TITLE_FIELDS, *_PUBLISHER_FIELDS}
_CANONICAL_RE = re.compile(
    r"<link\b[^>]*\brel=[\"']?canonical[\"']?[^>]*>|<meta\b[^>]*\bproperty=[\"']og:url[\"'][^>]*>",
    re.IGNORECASE,
)
_HREF_RE = re.compile(r"\b(?:href|content)=[\"']([^\"']+)[\"']", re.IGNORECASE)


def parse_date(value: object) -> datetime | None:
    """Parse a record's date (a Unix time, or text `pipeline.util.dates` reads) to aware UTC."""
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(float(value), UTC)
    return parse_text_date(value)


def _first(data: dict[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        if data.get(name) not in (None, ""):
            return data[name]
    return None


def _review(data: object) -> ClaimReview | None:
    if not isinstance(data, dict):
        return None
    claim = data.get("claim_reviewed") or data.get("claimReviewed")
    rating = data.get("rating") or data.get("alternateName")
    if not isinstance(claim, str) or not isinstance(rating, str):
        raise ValueError("claim_review needs string fields claim_reviewed and rating")
    reviewer = data.get("reviewer")
    return ClaimReview(
        claim_reviewed=claim,
        rating=rating,
        label=rating_to_label(rating),
        reviewer=reviewer if isinstance(reviewer, str) else None,
        url=data.get("url") if isinstance(data.get("url"), str) else None,
        date_published=parse_date(data.get("date_published")),
    )


def record_from_json(data: object) -> tuple[Document, dict[str, Any]]:
    """Return the document and extra fields of one JSON record; raise ValueError when unusable."""
    if not isinstance(data, dict):
        raise ValueError("the record is not a JSON object")
    url = data.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError("the record has no http(s) url")
    text = _first(data, _TEXT_FIELDS)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"the record for {url} has no text")
    title = _first(data, _TITLE_FIELDS)
    publisher = _first(data, _PUBLISHER_FIELDS)
    document = Document(
        id=document_id_for(url),
        url=url,
        domain=registrable_domain(url),
        title=str(title).strip().strip('"') if title else "",
        text=text.strip(),
        published_at=parse_date(_first(data, _DATE_FIELDS)),
        publisher=str(publisher) if publisher else None,
        claim_review=_review(data.get("claim_review")),
    )
    extra = {k: v for k, v in data.items() if k not in _KNOWN}
    return document, extra


def canonical_url(html: str) -> str | None:
    """Return the page's canonical (or og:url) http(s) URL, if it names one."""
    for tag in _CANONICAL_RE.findall(html[:200_000]):
        match = _HREF_RE.search(tag)
        if match and match.group(1).startswith(("http://", "https://")):
            return match.group(1)
    return None
