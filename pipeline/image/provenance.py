"""Where an image has been: its earlier appearances in the local image index.

The index holds the main images of ingested pages and of earlier checks, with their page,
publisher, date and caption. An image of a post that matches an indexed one (`pipeline.image.
hashing`) has appeared before; the earliest dated appearance is what matters (CRAVE's image
provenance, RAV's date conflicts): when it predates the event the post describes by more than
`MARGIN`, the photo is older than the story it illustrates.

Failure policy: never raises.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Protocol

from pipeline.evidence.ranking import Rater
from pipeline.image.records import ImageDescription, ImageHashes, ImageReport, IndexedImage
from pipeline.ports import EvidenceIndex
from pipeline.records import (
    Correction,
    Document,
    Evidence,
    Passage,
    Reference,
    Stance,
    Tier,
    document_id_for,
    new_id,
)

MARGIN = timedelta(days=2)  # an appearance this much before the post is from another event


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
        if hit.image_url != description.url
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
    """An earlier appearance of a post's image on a stored, citable page."""

    appearance: Appearance
    document: Document
    tier: Tier


def find_earlier(
    report: ImageReport,
    *,
    index: ImageIndex,
    documents: EvidenceIndex,
    rater: Rater,
    when: datetime | None,
) -> list[ProvenanceFinding]:
    """Return, per image, its earliest appearance before when on a stored, citable page."""
    findings: list[ProvenanceFinding] = []
    for description in report.descriptions:
        found = appearances(description, index)
        citable = []
        for appearance in found:
            document = documents.get(document_id_for(appearance.indexed.page_url))
            rating = rater.rate(appearance.indexed.page_url)
            if document is not None and rater.citable(rating):
                citable.append((appearance, document, rating.tier))
        earliest = older_than([a for a, _, _ in citable], when)
        if earliest is not None:
            _, document, tier = next(c for c in citable if c[0] is earliest)
            findings.append(ProvenanceFinding(earliest, document, tier))
    return findings


def cite_findings(
    correction: Correction,
    evidence: list[Evidence],
    findings: list[ProvenanceFinding],
    *,
    claim_id: str,
) -> tuple[Correction, list[Evidence]]:
    """Return the correction with a note citing each earlier appearance, and its evidence.

    Each finding's page becomes an Evidence item (context for the post's first claim) and a
    numbered reference, so the reply cites only what the pipeline retrieved.
    """
    references = list(correction.references)
    notes = [correction.note] if correction.note else []
    evidence = list(evidence)
    for finding in findings:
        indexed = finding.appearance.indexed
        document = finding.document
        number = next(
            (r.number for r in references if r.document_id == document.id), len(references) + 1
        )
        if number > len(references):
            references.append(Reference(number, document.id, document.url, document.title))
            evidence.append(
                Evidence(
                    id=new_id(),
                    claim_id=claim_id,
                    passage=Passage(
                        id=f"{document.id}:image",
                        document_id=document.id,
                        position=0,
                        text=indexed.caption or document.title,
                    ),
                    document=document,
                    relevance=round(1 - finding.appearance.distance / 64, 3),
                    tier=finding.tier,
                    stance=Stance.CONTEXT,
                )
            )
        published = indexed.published_at
        day = f"{published:%d %B %Y}".lstrip("0") if published else "earlier"
        said = f', captioned "{indexed.caption}"' if indexed.caption else ""
        notes.append(
            f"This image appeared on {day} [{number}]{said}, before the post; "
            "it may be shown out of context."
        )
    return replace(correction, note=" ".join(notes), references=tuple(references)), evidence
