"""Conversions between domain records and SQLite rows."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from typing import Any

from pipeline.records.codec import dump, load
from pipeline.records.domain import (
    ClaimReview,
    Correction,
    Document,
    Label,
    Post,
    Reference,
)


def dt_out(value: datetime | None) -> str | None:
    """Store a datetime as ISO 8601 in UTC (naive values are taken as UTC)."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat()


def dt_in(value: str | None) -> datetime | None:
    """Read a datetime stored by `dt_out`."""
    return datetime.fromisoformat(value) if value else None


def post_row(post: Post) -> dict[str, Any]:
    """Return the posts row for a post."""
    return {
        "id": post.id,
        "platform": post.platform,
        "platform_id": post.platform_id,
        "url": post.url,
        "author": post.author,
        "created_at": dt_out(post.created_at),
        "text": post.text,
        "links": json.dumps(list(post.links)),
        "image_refs": json.dumps(list(post.image_refs)),
        "language": post.language,
        "kind": post.kind,
        "leads": json.dumps(list(post.leads)),
    }


def post_from_row(row: dict[str, Any]) -> Post:
    """Rebuild a post from its row."""
    return Post(
        id=row["id"],
        platform=row["platform"],
        platform_id=row["platform_id"],
        url=row["url"],
        author=row["author"],
        created_at=dt_in(row["created_at"]),
        text=row["text"],
        links=tuple(json.loads(row["links"])),
        image_refs=tuple(json.loads(row["image_refs"])),
        language=row["language"],
        kind=row.get("kind") or "post",  # a post kept as JSON before kinds were stored
        leads=tuple(json.loads(row.get("leads") or "[]")),  # likewise, before leads were
    )


def claim_review_out(review: ClaimReview | None) -> str | None:
    """Serialise a ClaimReview to JSON."""
    if review is None:
        return None
    return json.dumps(
        {
            "claim_reviewed": review.claim_reviewed,
            "rating": review.rating,
            "label": review.label.value if review.label else None,
            "reviewer": review.reviewer,
            "url": review.url,
            "date_published": dt_out(review.date_published),
        }
    )


def claim_review_in(value: str | None) -> ClaimReview | None:
    """Read a ClaimReview serialised by `claim_review_out`."""
    if not value:
        return None
    data = json.loads(value)
    return ClaimReview(
        claim_reviewed=data["claim_reviewed"],
        rating=data["rating"],
        label=Label(data["label"]) if data.get("label") else None,
        reviewer=data.get("reviewer"),
        url=data.get("url"),
        date_published=dt_in(data.get("date_published")),
    )


def document_from_row(row: dict[str, Any]) -> Document:
    """Rebuild a document from its row."""
    return Document(
        id=row["id"],
        url=row["url"],
        domain=row["domain"],
        title=row["title"],
        text=row["text"],
        published_at=dt_in(row["published_at"]),
        fetched_at=dt_in(row["fetched_at"]),
        publisher=row["publisher"],
        claim_review=claim_review_in(row["claim_review"]),
    )


def correction_items_out(correction: Correction) -> str:
    """Return the structured part of a correction (all but its references) as JSON."""
    return dump(correction, exclude={"references"})


def correction_in(
    items_json: str | None, *, text: str, label: Label, references: tuple[Reference, ...]
) -> Correction:
    """Read a correction stored by `correction_items_out`.

    A check stored before corrections were structured has no items JSON: it loads as a
    headline-only correction whose headline is the stored text, so `text` is unchanged.
    """
    if items_json is None:
        return Correction(label=label, headline=text, references=references)
    return dataclasses.replace(load(Correction, items_json), references=references)
