"""What goes into the image index besides a check's matching: pages' images and checks' images.

`ingest` keeps each page's main images (`page_keeper`), a check keeps the og:image of the pages
its web search fetched (the same keeper, one image a page), and every check's own images are
added afterwards (`keep_check_images`) with the post's URL and time, so a picture reused by a
later post is found. A post is not a publisher: its page URL is never a stored document, so the
provenance step never cites it (`pipeline.image.provenance.find_earlier`).
"""

from __future__ import annotations

import logging

from pipeline.fetch.fetcher import Fetcher
from pipeline.image.intake import ImageLimits
from pipeline.image.page_images import PageImages
from pipeline.image.provenance import ImageIndex
from pipeline.records.domain import Check
from pipeline.records.image import IndexedImage
from pipeline.util.cpu import CpuPool

log = logging.getLogger(__name__)

MAX_CAPTION = 300


def page_keeper(
    index: ImageIndex,
    fetcher: Fetcher,
    *,
    per_page: int,
    limits: ImageLimits,
    cpu: CpuPool | None,
) -> PageImages | None:
    """Return the keeper of pages' main images, or None when no image is kept a page."""
    if per_page <= 0:
        return None
    return PageImages(index, fetcher, per_page=per_page, limits=limits, cpu=cpu)


def post_page(check: Check) -> str:
    """Return the page a post's images were seen on: its URL, else a factbot post address."""
    post = check.post
    return post.url or f"factbot:post/{post.platform}/{post.platform_id}"


def keep_check_images(index: ImageIndex, check: Check) -> int:
    """Add a check's images to the index with the post's page and time; return how many."""
    kept = 0
    caption = " ".join(check.post.text.split())[:MAX_CAPTION]
    for description in check.images.descriptions:
        # Inline bytes (data: URIs) have no address: named by their digest instead.
        url = description.url
        image_url = f"inline:{description.image_id}" if url.startswith("data:") else url
        kept += index.add(
            IndexedImage(
                image_id=description.image_id,
                image_url=image_url,
                page_url=post_page(check),
                hashes=description.hashes,
                publisher=None,
                published_at=check.post.created_at or check.created_at,
                caption=caption,
            )
        )
    if kept:
        log.info("check images indexed", extra={"check_id": check.id, "images": kept})
    return kept
