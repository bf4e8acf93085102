"""Where an image has been: its earlier appearances in the local image index.

The index holds the main images of ingested pages and of earlier checks, with their page,
publisher, date and caption. An image of a post that matches an indexed one (`pipeline.image.
hashing`) has appeared before; the earliest dated appearance is what matters (CRAVE's image
provenance, RAV's date conflicts): when it predates the event the post describes by more than
`MARGIN`, the photo is older than the story it illustrates.

Failure policy: never raises.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from pipeline.image.records import ImageDescription, ImageHashes, IndexedImage

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
