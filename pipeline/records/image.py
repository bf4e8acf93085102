"""Records of the image stage: where an image came from, what was read from it, what failed.

They live outside the `pipeline.image` package so that `pipeline.records.domain` can hold a check's
image report without importing the stage (which imports evidence, which imports records).

Each reader (OCR, hashes, metadata, caption) returns its own frozen record; the describer
(`pipeline.image.describe`) merges them into one `ImageDescription` per image, and the stage's
answer is an `ImageReport`: the descriptions plus the images that could not be read, each with
its reason, so a reply can say so while the post's text is still checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image


class ImageOrigin(StrEnum):
    """How an image came with a post."""

    ATTACHMENT = "attachment"  # Post.image_refs
    LINK = "link"  # a link in the post that points at an image
    OG_IMAGE = "og:image"  # the main image a linked page declares
    INLINE = "inline"  # bytes handed over directly (benchmarks, local files)
    PAGE = "page"  # a main image of an ingested or searched page (the image index)


@dataclass(frozen=True)
class ImageSource:
    """Where one image of a post is to be had."""

    ref: str  # the image URL (or a name for inline bytes)
    origin: ImageOrigin
    page_url: str | None = None  # the page that declared it (og:image)


@dataclass(frozen=True, eq=False)
class LoadedImage:
    """A decoded image: its first frame as RGB, the raw bytes it came from, and its shape."""

    id: str  # sha256 of the bytes: the same file gets the same id
    source: ImageSource
    url: str  # where it was fetched from after redirects (the ref for inline bytes)
    format: str  # Pillow's format name: JPEG, PNG, GIF, WEBP, HEIF, ...
    width: int
    height: int
    frames: int  # 1 for a still image
    data: bytes = field(repr=False)
    image: Image.Image = field(repr=False)


@dataclass(frozen=True)
class ImageFailure:
    """An image that could not be read, and why (said in the reply)."""

    source: ImageSource
    reason: str


@dataclass(frozen=True)
class OcrLine:
    """One line of text read from an image."""

    text: str
    confidence: float  # 0..1, the mean of its words


@dataclass(frozen=True)
class OcrText:
    """The text read from an image, line by line."""

    engine: str
    lines: tuple[OcrLine, ...] = ()

    @property
    def text(self) -> str:
        """Return the lines joined by newlines."""
        return "\n".join(line.text for line in self.lines)


@dataclass(frozen=True)
class ImageHashes:
    """Perceptual hashes of an image, as hex strings (imagehash's own encoding)."""

    phash: str  # 64-bit DCT hash of the whole picture
    phash_core: str  # the same of the picture with its borders and bars trimmed
    windows: tuple[str, ...] = ()  # pHashes of crops of the core, for crop tolerance
    segments: tuple[str, ...] = ()  # crop-resistant hash: one 64-bit hash per region (optional)
    # the core trimmed with a near-exact border colour (a screenshot's frame around a picture
    # whose own edge is nearly that colour); "" in hashes made before it existed
    phash_tight: str = ""


@dataclass(frozen=True)
class ExifInfo:
    """What a photo's EXIF says about its capture."""

    captured_at: datetime | None = None  # naive when the camera gave no offset
    latitude: float | None = None
    longitude: float | None = None
    camera: str | None = None  # make and model
    software: str | None = None  # the editing or producing software


@dataclass(frozen=True)
class ContentCredentials:
    """A C2PA manifest: who signed the image and what was done to it."""

    signer: str | None
    claim_generator: str | None
    actions: tuple[str, ...]  # c2pa action names, e.g. "c2pa.created", "c2pa.edited"
    ai_generated: bool  # an action's digital source type is trained algorithmic media
    valid: bool  # the signature and hashes check out
    trusted: bool  # ... and the certificate chains to a trusted root
    problems: tuple[str, ...] = ()  # validation status codes when not valid


@dataclass(frozen=True)
class ImageMetadata:
    """Embedded metadata of an image."""

    exif: ExifInfo | None = None
    credentials: ContentCredentials | None = None


@dataclass(frozen=True)
class Caption:
    """A description of the picture written by a vision model."""

    text: str
    model: str


@dataclass(frozen=True)
class FaceBox:
    """Where a face is in an image, in the image's pixels (right and bottom exclusive)."""

    left: int
    top: int
    right: int
    bottom: int

    @property
    def area(self) -> int:
        """Return the box's area in pixels."""
        return max(0, self.right - self.left) * max(0, self.bottom - self.top)


@dataclass(frozen=True)
class Face:
    """A face found in an image: its box, the detector's score and its 128-d embedding.

    The embedding is biometric data: it stays in memory while the image is read and is never
    stored for a post's image (only gallery photos the operator imports are stored).
    """

    box: FaceBox
    score: float  # the HOG detector's confidence; higher is surer (0 is its usual cut-off)
    embedding: tuple[float, ...] = field(repr=False)


@dataclass(frozen=True)
class SeenFace:
    """A face in an image as the description keeps it: a gallery name or no name, no embedding.

    `name` is set only when the face matched a public figure the operator imported, closer than
    the threshold and clearly closer than any other name; other faces stay anonymous.
    """

    box: FaceBox
    score: float
    name: str | None = None
    distance: float | None = None  # to the nearest photo of `name` (when named)


@dataclass(frozen=True)
class ImageDescription:
    """Everything read from one image, and the text the claims stage reads for it."""

    image_id: str
    url: str
    origin: ImageOrigin
    width: int
    height: int
    frames: int
    hashes: ImageHashes
    ocr: OcrText | None
    metadata: ImageMetadata
    caption: Caption | None
    terms: tuple[str, ...]  # named people, places and other names: extra query terms
    text: str  # the merged description (MUSE's describer)
    faces: tuple[SeenFace, ...] = ()  # faces found; named only when they match the gallery


@dataclass(frozen=True)
class ImageReport:
    """What the image stage found in one post."""

    descriptions: tuple[ImageDescription, ...] = ()
    failures: tuple[ImageFailure, ...] = ()

    @property
    def ocr_text(self) -> str:
        """Return the text read from every image, one image per paragraph.

        An image's lines are joined by spaces: a headline broken over three lines is one
        sentence.
        """
        texts = [
            " ".join(d.ocr.text.split())
            for d in self.descriptions
            if d.ocr is not None and d.ocr.text.strip()
        ]
        return "\n\n".join(texts)

    @property
    def terms(self) -> tuple[str, ...]:
        """Return the query terms of every image, without repeats."""
        return tuple(dict.fromkeys(t for d in self.descriptions for t in d.terms))

    @property
    def note(self) -> str:
        """Return what the reply should say about images that could not be read, or ''."""
        if not self.failures:
            return ""
        if len(self.failures) == 1:
            return f"The image could not be read ({self.failures[0].reason})."
        reasons = "; ".join(dict.fromkeys(f.reason for f in self.failures))
        return f"{len(self.failures)} images could not be read ({reasons})."


@dataclass(frozen=True)
class IndexedImage:
    """An image seen on a page (an ingested page or an earlier check), kept for provenance."""

    image_id: str  # sha256 of the image bytes
    image_url: str
    page_url: str
    hashes: ImageHashes
    publisher: str | None = None
    published_at: datetime | None = None
    caption: str = ""  # the page's title or the image's alt text: what the page said it shows
