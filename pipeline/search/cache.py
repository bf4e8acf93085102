"""Search cache keys and the JSON form of cached results.

A provider's answer to a query is cached under sha256 of the provider name, the normalised query
text (lower-case, whitespace collapsed), the sorted sites, the `before` bound (UTC, ISO 8601),
the limit and the language, so two spellings of one query share an entry and any parameter that
changes the answer gets its own. A `v1` prefix lets a change of the stored form start afresh.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from pipeline.records.domain import ClaimReview, Label
from pipeline.search.base import SearchQuery, SearchResult
from pipeline.search.parsing import to_utc

_VERSION = "v1"


def normalise_text(text: str) -> str:
    """Return text lower-cased with its whitespace collapsed."""
    return " ".join(text.lower().split())


def cache_key(provider: str, query: SearchQuery) -> str:
    """Return the cache key of provider's answer to query."""
    parts = (
        _VERSION,
        provider,
        normalise_text(query.text),
        ",".join(sorted({site.strip().lower() for site in query.sites})),
        to_utc(query.before).isoformat() if query.before is not None else "",
        str(query.limit),
        (query.language or "").lower(),
    )
    return hashlib.sha256("|".join(parts).encode("utf-8")).hexdigest()


def result_to_dict(result: SearchResult) -> dict[str, Any]:
    """Return result as a JSON-ready dict."""
    review = result.claim_review
    return {
        "url": result.url,
        "title": result.title,
        "snippet": result.snippet,
        "provider": result.provider,
        "rank": result.rank,
        "published_at": _dt_out(result.published_at),
        "publisher": result.publisher,
        "publisher_domain": result.publisher_domain,
        "claim_review": None
        if review is None
        else {
            "claim_reviewed": review.claim_reviewed,
            "rating": review.rating,
            "label": review.label.value if review.label is not None else None,
            "reviewer": review.reviewer,
            "url": review.url,
            "date_published": _dt_out(review.date_published),
        },
    }


def result_from_dict(data: dict[str, Any]) -> SearchResult:
    """Return the result stored as data; raise KeyError, TypeError or ValueError if malformed."""
    review = data.get("claim_review")
    return SearchResult(
        url=str(data["url"]),
        title=str(data["title"]),
        snippet=str(data["snippet"]),
        provider=str(data["provider"]),
        rank=int(data["rank"]),
        published_at=_dt_in(data.get("published_at")),
        publisher=data.get("publisher"),
        publisher_domain=data.get("publisher_domain"),
        claim_review=None
        if review is None
        else ClaimReview(
            claim_reviewed=str(review["claim_reviewed"]),
            rating=str(review["rating"]),
            label=Label(review["label"]) if review.get("label") else None,
            reviewer=review.get("reviewer"),
            url=review.get("url"),
            date_published=_dt_in(review.get("date_published")),
        ),
    )


def _dt_out(value: datetime | None) -> str | None:
    return to_utc(value).isoformat() if value is not None else None


def _dt_in(value: object) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"a stored date must be a string, not {type(value).__name__}")
    return to_utc(datetime.fromisoformat(value))
