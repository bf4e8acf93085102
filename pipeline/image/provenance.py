"""Where an image has been: its earlier appearances in the local image index, as evidence.

The index holds the main images of ingested pages and of earlier checks, with their page,
publisher, date and caption. An image of a post that matches an indexed one (`pipeline.image.
hashing`: within its match threshold, so a visually dissimilar picture never counts, CRAVE) has
appeared before. An appearance published before the post on a stored page of a citable
publisher becomes evidence of the post's first claim, marked with an `ImageTrace` the tiered
rule reads (`pipeline.judge.tiered`), and it reaches the judges before the verdict. When the
appearance predates the event the post describes by more than `MARGIN`, or its caption names
another place or an earlier date (`pipeline.image.conflicts`, RAV's date and place conflicts),
the trace carries the conflict and code makes the claim misleading (out of context) on every
path (`pipeline.judge.rules`). An earlier check's post is an appearance too, for reuse, but it is
never a stored citable document, so it is never cited.

Failure policy: never raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from pipeline.evidence.ranking import Rater
from pipeline.graph.places import Gazetteer
from pipeline.image.conflicts import MARGIN, Conflict, EventFrame, day, find_conflict
from pipeline.image.hashing import PHASH_DISTANCE
from pipeline.ports import EvidenceIndex
from pipeline.records.domain import (
    Document,
    Evidence,
    ImageTrace,
    Passage,
    Stance,
    Tier,
    document_id_for,
    new_id,
)
from pipeline.records.image import ImageDescription, ImageHashes, ImageReport, IndexedImage

MAX_CAPTION = 120  # characters of an earlier caption quoted in a reply


class ImageIndex(Protocol):
    """The local image index (implemented by `storage.images.ImageIndexRepo`)."""

    def add(self, image: IndexedImage) -> bool:
        """Keep image; return False when that image was already kept for that page."""
        ...

    def similar(self, hashes: ImageHashes, *, limit: int = 10) -> list[tuple[IndexedImage, int]]:
        """Return indexed images that match hashes, with their distances, nearest first."""
        ...


@dataclass(frozen=True)
class Appearance:
    """An earlier appearance of a post's image."""

    image_id: str  # the post's image
    indexed: IndexedImage
    distance: int  # pHash bits apart

    @property
    def predates(self) -> bool:
        """Return whether the appearance is dated (it is required to date the photo)."""
        return self.indexed.published_at is not None


def appearances(
    description: ImageDescription, index: ImageIndex, *, limit: int = 10
) -> list[Appearance]:
    """Return the indexed appearances of an image, earliest dated first, undated last."""
    found = [
        Appearance(image_id=description.image_id, indexed=hit, distance=distance)
        for hit, distance in index.similar(description.hashes, limit=limit)
        if hit.image_url != description.url and distance <= PHASH_DISTANCE
    ]
    far_future = datetime.max.replace(tzinfo=UTC)
    return sorted(found, key=lambda a: (_aware(a.indexed.published_at) or far_future, a.distance))


def older_than(found: list[Appearance], when: datetime | None) -> Appearance | None:
    """Return the earliest appearance published more than MARGIN before when, if any."""
    if when is None:
        return None
    for appearance in found:
        published = _aware(appearance.indexed.published_at)
        if published is not None and published < _aware_required(when) - MARGIN:
            return appearance
    return None


def _aware(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _aware_required(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class ProvenanceFinding:
    """An earlier appearance of a post's image on a stored, citable page, and what it shows."""

    appearance: Appearance
    document: Document
    tier: Tier
    trace: ImageTrace


def find_earlier(
    report: ImageReport,
    *,
    index: ImageIndex,
    documents: EvidenceIndex,
    rater: Rater,
    when: datetime | None,
    frame: EventFrame | None = None,
    gazetteer: Gazetteer | None = None,
) -> list[ProvenanceFinding]:
    """Return, per image, its telling appearance before when on a stored, citable page.

    The earliest appearance that conflicts with the framed event wins; else the earliest one
    that fits it. Appearances after the post (when), undated ones, and ones on pages that are
    not stored documents of a citable publisher are never findings.
    """
    frame = frame or EventFrame(start=_aware(when))
    findings: list[ProvenanceFinding] = []
    for description in report.descriptions:
        candidates: list[tuple[Appearance, Document, Tier]] = []
        for appearance in appearances(description, index, limit=25):
            published = _aware(appearance.indexed.published_at)
            if published is None or (when is not None and published >= _aware_required(when)):
                continue
            document = documents.get(document_id_for(appearance.indexed.page_url))
            rating = rater.rate(appearance.indexed.page_url)
            if document is not None and rater.citable(rating):
                candidates.append((appearance, document, rating.tier))
        chosen: ProvenanceFinding | None = None
        for appearance, document, tier in candidates:
            conflict = find_conflict(appearance.indexed, frame, gazetteer=gazetteer)
            trace = _trace(appearance, conflict)
            finding = ProvenanceFinding(appearance, document, tier, trace)
            if conflict is not None:
                chosen = finding
                break
            chosen = chosen or finding
        if chosen is not None:
            findings.append(chosen)
    return findings


def _trace(appearance: Appearance, conflict: Conflict | None) -> ImageTrace:
    indexed = appearance.indexed
    return ImageTrace(
        image_id=appearance.image_id,
        image_url=indexed.image_url,
        distance=appearance.distance,
        published_at=indexed.published_at,
        caption=indexed.caption,
        conflict=conflict.kind if conflict else "",
        detail=conflict.detail if conflict else "",
    )


def provenance_evidence(findings: Sequence[ProvenanceFinding], *, claim_id: str) -> list[Evidence]:
    """Return each finding as evidence of the claim the image illustrates, marked as such.

    The passage says in words what was found (the judges read it); it is not quoted in a reply,
    so it need not occur in the page.
    """
    evidence: list[Evidence] = []
    for finding in findings:
        trace, document = finding.trace, finding.document
        evidence.append(
            Evidence(
                id=new_id(),
                claim_id=claim_id,
                passage=Passage(
                    id=f"{document.id}:image",
                    document_id=document.id,
                    position=0,
                    text=_described(trace, document),
                ),
                document=document,
                relevance=round(1 - trace.distance / 64, 3),
                tier=finding.tier,
                stance=Stance.CONTEXT if trace.conflict else Stance.UNKNOWN,
                image=trace,
            )
        )
    return evidence


def _described(trace: ImageTrace, document: Document) -> str:
    where = document.publisher or document.domain
    when = f"on {day(_aware_required(trace.published_at))}" if trace.published_at else "earlier"
    caption = f', captioned "{caption_excerpt(trace.caption)}"' if trace.caption else ""
    found = f"The post's image appeared {when} on {where}{caption}."
    return f"{found} It conflicts with the post: {trace.detail}." if trace.conflict else found


def caption_excerpt(text: str) -> str:
    """Return an earlier caption as quoted: one line, at most MAX_CAPTION characters."""
    text = " ".join(text.split())
    return text if len(text) <= MAX_CAPTION else text[: MAX_CAPTION - 1].rstrip() + "…"
