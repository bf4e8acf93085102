"""The image stage's entry point: a post in, an `ImageReport` out.

intake -> for each image, in parallel: OCR, perceptual hashes, metadata, caption, faces ->
describe.
Every reader runs in the CPU pool (or behind the model client, for captions), so the event loop
never decodes or reads a pixel.

Failure policy: never raises for an image. An image that cannot be fetched or decoded is an
`ImageFailure` in the report (the reply says it could not be read, the text is still checked);
a reader that fails (OCR engine missing, caption model down) leaves its part empty and is
logged; the other parts stand.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Protocol

from pipeline.errors import FactbotError
from pipeline.fetch.fetcher import Fetcher
from pipeline.image.describe import describe
from pipeline.image.faces import FaceDeps, read_faces
from pipeline.image.hashing import hash_image
from pipeline.image.intake import ImageLimits, collect_images
from pipeline.image.metadata import read_metadata
from pipeline.image.ocr import OcrEngine, TesseractOcr, read_text
from pipeline.image.page_images import PageImages
from pipeline.image.provenance import ImageIndex
from pipeline.image.reverse.multi import ReverseDeps
from pipeline.records.domain import Post
from pipeline.records.image import (
    Caption,
    ImageDescription,
    ImageReport,
    LoadedImage,
    OcrText,
    SeenFace,
)
from pipeline.util.cpu import CpuPool

log = logging.getLogger(__name__)


class Captioner(Protocol):
    """Writes a short description of a picture (a vision model)."""

    name: str

    async def caption(self, image: LoadedImage, *, cpu: CpuPool | None) -> Caption:
        """Return a caption of image; raise a FactbotError when none can be had."""
        ...


@dataclass(frozen=True)
class ImageDeps:
    """What the image stage needs, built once by the composition root."""

    fetcher: Fetcher | None  # None: only data: URIs are read
    ocr: OcrEngine | None = field(default_factory=TesseractOcr)  # None: no OCR
    captioner: Captioner | None = None
    limits: ImageLimits = field(default_factory=ImageLimits)
    index: ImageIndex | None = None  # earlier appearances (provenance); None skips them
    faces: FaceDeps | None = None  # None: faces are not looked for
    reverse: ReverseDeps | None = None  # reverse image search (`pipeline.image.reverse`)
    # Keeps the og:image of pages web search fetches in the index; None keeps none.
    page_images: PageImages | None = None


async def read_images(post: Post, *, deps: ImageDeps, cpu: CpuPool | None = None) -> ImageReport:
    """Return what the images of a post show, and which of them could not be read."""
    loaded, failures = await collect_images(post, fetcher=deps.fetcher, limits=deps.limits, cpu=cpu)
    unique = list({image.id: image for image in loaded}.values())
    descriptions = await asyncio.gather(*(read_one(image, deps=deps, cpu=cpu) for image in unique))
    log.info(
        "images read",
        extra={"post_id": post.id, "images": len(descriptions), "failures": len(failures)},
    )
    return ImageReport(descriptions=tuple(descriptions), failures=tuple(failures))


async def read_one(
    image: LoadedImage, *, deps: ImageDeps, cpu: CpuPool | None = None
) -> ImageDescription:
    """Run every reader on one decoded image and return its description."""
    hashes, metadata, ocr, caption, faces = await asyncio.gather(
        hash_image(image, cpu=cpu),
        read_metadata(image, cpu=cpu),
        _ocr(image, deps.ocr, cpu),
        _caption(image, deps.captioner, cpu),
        _faces(image, deps.faces, cpu),
    )
    return describe(image, hashes=hashes, ocr=ocr, metadata=metadata, caption=caption, faces=faces)


async def _faces(
    image: LoadedImage, deps: FaceDeps | None, cpu: CpuPool | None
) -> tuple[SeenFace, ...]:
    if deps is None:
        return ()
    return await read_faces(image, deps=deps, cpu=cpu)


async def _ocr(image: LoadedImage, engine: OcrEngine | None, cpu: CpuPool | None) -> OcrText | None:
    if engine is None:
        return None
    try:
        return await read_text(image, engine=engine, cpu=cpu)
    except FactbotError as exc:
        log.warning("OCR failed", extra={"image_id": image.id, "reason": str(exc)})
        return None


async def _caption(
    image: LoadedImage, captioner: Captioner | None, cpu: CpuPool | None
) -> Caption | None:
    if captioner is None:
        return None
    try:
        return await captioner.caption(image, cpu=cpu)
    except FactbotError as exc:
        log.warning(
            "caption failed",
            extra={"image_id": image.id, "captioner": captioner.name, "reason": str(exc)},
        )
        return None
