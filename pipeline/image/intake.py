"""Image intake: find a post's images, fetch them safely and decode them defensively.

Images come from the post's attachments (`Post.image_refs`: URLs or `data:` URIs), from links
that point at an image, and from the `og:image` / `twitter:image` a linked page declares. Every
byte comes through the one SSRF-safe fetcher (`Fetcher.fetch_media`) with image content types and
a size cap. Decoding treats every file as hostile:

- only raster formats are opened (Pillow's `formats=` allow-list: no EPS, which would run
  Ghostscript, no TIFF or the rarer plugins); SVG, HTML and PDF are refused by their first bytes
  with a reason (an SVG can carry scripts and external references);
- the declared size is checked against a pixel cap before a pixel is decoded (a PNG of
  30,000 x 30,000 is a few hundred bytes), and Pillow's own decompression-bomb limit stays on;
- animations give their first frame; EXIF orientation is applied; the result is RGB, at most
  `MAX_SIDE` pixels on a side (a 40-megapixel photo would hold 120 MB per image otherwise);
- HEIC/HEIF is read through pillow-heif.

Decoding is CPU work and runs in the CPU pool.

Failure policy: `collect_images` never raises for one image: each image that cannot be fetched
or decoded becomes an `ImageFailure` with its reason, and a linked page that cannot be fetched
or declares no image is skipped (it is checked as a link, not as an image). `decode_image`
raises `ImageError` with the reason.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import io
import logging
import struct
import threading
from dataclasses import dataclass, replace
from urllib.parse import unquote_to_bytes, urljoin, urlsplit

from PIL import Image, ImageOps, UnidentifiedImageError

from pipeline.errors import FactbotError, ImageError
from pipeline.fetch.fetcher import Fetcher
from pipeline.records.domain import Post
from pipeline.records.image import ImageFailure, ImageOrigin, ImageSource, LoadedImage
from pipeline.util.cpu import CpuPool, run_cpu

log = logging.getLogger(__name__)

IMAGE_TYPES = (
    "image/jpeg",
    "image/pjpeg",
    "image/png",
    "image/gif",
    "image/webp",
    "image/heic",
    "image/heif",
    "image/avif",
    "image/bmp",
    # Fetched so that the refusal can say what it is, never decoded:
    "image/svg+xml",
)
# Pillow format names that may be opened: raster formats the web uses.
RASTER_FORMATS = ("JPEG", "PNG", "GIF", "WEBP", "HEIF", "AVIF", "BMP")
DATA_PREFIX = 64  # of a data: URI, what a description or failure keeps as its address
MAX_SIDE = 4096  # decoded pictures are kept at most this many pixels on a side (memory)
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".heic", ".heif", ".avif", ".bmp")
# Links that are neither images nor pages worth reading for an og:image.
_NOT_PAGES = (".pdf", ".zip", ".mp4", ".mov", ".mp3", ".svg", ".exe", ".dmg", ".apk")
_OG_KEYS = ("og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src")

_heif_lock = threading.Lock()
_heif_ready = False


@dataclass(frozen=True)
class ImageLimits:
    """How many images of a post are read, and how big one may be."""

    max_images: int = 4
    max_bytes: int = 10_000_000
    max_pixels: int = 40_000_000  # width x height of the declared size
    max_pages: int = 2  # linked pages read for their og:image


def image_sources(post: Post, *, limits: ImageLimits) -> tuple[list[ImageSource], list[str]]:
    """Return the post's image sources (attachments, image links) and pages to read for one."""
    sources = [ImageSource(ref, ImageOrigin.ATTACHMENT) for ref in post.image_refs]
    pages: list[str] = []
    for link in dict.fromkeys(filter(None, (post.url, *post.links))):
        path = urlsplit(link).path.lower()
        if path.endswith(IMAGE_SUFFIXES):
            sources.append(ImageSource(link, ImageOrigin.LINK))
        elif not path.endswith(_NOT_PAGES):
            pages.append(link)
    unique = list({s.ref: s for s in reversed(sources)}.values())[::-1]
    return unique[: limits.max_images], pages[: limits.max_pages]


async def collect_images(
    post: Post,
    *,
    fetcher: Fetcher | None,
    limits: ImageLimits = ImageLimits(),  # frozen, so one shared default is safe
    cpu: CpuPool | None = None,
) -> tuple[list[LoadedImage], list[ImageFailure]]:
    """Fetch and decode the images of a post; each failure is kept with its reason."""
    sources, pages = image_sources(post, limits=limits)
    if fetcher is not None and len(sources) < limits.max_images:
        declared = await asyncio.gather(*(_page_image(page, fetcher, cpu) for page in pages))
        known = {s.ref for s in sources}
        for source in declared:
            if source is not None and source.ref not in known:
                known.add(source.ref)
                sources.append(source)
        sources = sources[: limits.max_images]
    results = await asyncio.gather(*(_load(s, fetcher, limits, cpu) for s in sources))
    loaded = [r for r in results if isinstance(r, LoadedImage)]
    failures = [r for r in results if isinstance(r, ImageFailure)]
    return loaded, failures


async def load_image(
    source: ImageSource,
    *,
    fetcher: Fetcher | None,
    limits: ImageLimits = ImageLimits(),
    cpu: CpuPool | None = None,
) -> LoadedImage | ImageFailure:
    """Fetch (or unpack) and decode one image, or return why it cannot be read."""
    return await _load(source, fetcher, limits, cpu)


async def _load(
    source: ImageSource, fetcher: Fetcher | None, limits: ImageLimits, cpu: CpuPool | None
) -> LoadedImage | ImageFailure:
    try:
        if source.ref.startswith("data:"):
            data, url = _data_uri(source.ref, limits.max_bytes), source.ref[:DATA_PREFIX]
        elif fetcher is None:
            raise ImageError(source.ref, "images are not fetched in this set-up")
        else:
            page = await fetcher.fetch_media(
                source.ref, content_types=IMAGE_TYPES, max_bytes=limits.max_bytes
            )
            data, url = page.body, page.url
        return await run_cpu(cpu, decode_image, data, source=source, url=url, limits=limits)
    except ImageError as exc:
        reason = exc.reason
    except FactbotError as exc:  # FetchError, UnsafeURLError: their reason is the reason
        reason = str(getattr(exc, "reason", exc))
    log.info("image not read", extra={"ref": source.ref[:200], "reason": reason})
    if source.ref.startswith("data:"):
        # The failure is stored with the check: keep the start of the URI (its type and the
        # upload's name), as a description does, never the uploaded bytes themselves.
        source = replace(source, ref=source.ref[:DATA_PREFIX])
    return ImageFailure(source=source, reason=reason)


def decode_image(
    data: bytes, *, source: ImageSource, url: str, limits: ImageLimits = ImageLimits()
) -> LoadedImage:
    """Decode image bytes into a LoadedImage (first frame, RGB), refusing what is not safe."""
    if len(data) > limits.max_bytes:
        raise ImageError(url, f"the file is {len(data):,} bytes; the limit is {limits.max_bytes:,}")
    refusal = _refusal(data)
    if refusal:
        raise ImageError(url, refusal)
    _register_heif()
    try:
        opened = Image.open(io.BytesIO(data), formats=_openable())
    except Image.DecompressionBombError as exc:
        raise ImageError(url, f"the image declares too many pixels: {exc}") from exc
    except UnidentifiedImageError as exc:
        raise ImageError(url, "the file is not a supported raster image") from exc
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        raise ImageError(url, f"the image is truncated or corrupt: {exc}") from exc
    with opened:
        width, height = opened.size
        if width * height > limits.max_pixels:
            raise ImageError(
                url,
                f"the image declares {width:,} x {height:,} pixels; "
                f"the limit is {limits.max_pixels:,} pixels",
            )
        fmt = opened.format or "unknown"
        try:
            frames = int(getattr(opened, "n_frames", 1))
            opened.seek(0)
            if fmt == "JPEG":
                opened.draft("RGB", (MAX_SIDE, MAX_SIDE))  # decode big JPEGs at a reduced scale
            opened.load()
            picture = _rgb(ImageOps.exif_transpose(opened))
            if max(picture.size) > MAX_SIDE:
                picture.thumbnail((MAX_SIDE, MAX_SIDE), Image.Resampling.LANCZOS)
        except (OSError, ValueError, SyntaxError, EOFError, struct.error) as exc:
            raise ImageError(url, f"the image is truncated or corrupt: {exc}") from exc
    return LoadedImage(
        id=hashlib.sha256(data).hexdigest(),
        source=source,
        url=url,
        format=fmt,
        width=picture.width,
        height=picture.height,
        frames=frames,
        data=data,
        image=picture,
    )


def _rgb(picture: Image.Image) -> Image.Image:
    """Return picture as RGB, transparent parts on white (as a page would show them)."""
    if picture.mode == "RGB":
        return picture.copy()
    if picture.mode in ("RGBA", "LA", "PA") or "transparency" in picture.info:
        rgba = picture.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, rgba).convert("RGB")
    return picture.convert("RGB")


def _refusal(data: bytes) -> str:
    """Return why bytes that are plainly not a raster image are refused, or ''."""
    head = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if not head:
        return "the file is empty"
    if head.startswith(b"<svg") or (
        head.startswith((b"<?xml", b"<!doctype svg", b"<!--")) and b"<svg" in head
    ):
        return "SVG is a vector format that can carry scripts; only raster images are read"
    if head.startswith((b"<!doctype html", b"<html", b"<head", b"<body")):
        return "the link is a web page, not an image"
    if head.startswith(b"%pdf"):
        return "the file is a PDF document, not an image"
    if head.startswith(b"%!ps"):
        return "PostScript is not read; only raster images are"
    return ""


def _openable() -> list[str]:
    """Return the allowed formats this Pillow can open (AVIF and HEIF depend on the build)."""
    Image.init()
    return [f for f in RASTER_FORMATS if f in Image.OPEN]


def _register_heif() -> None:
    """Register pillow-heif's opener once per process (it adds HEIF to Pillow's formats)."""
    global _heif_ready
    with _heif_lock:
        if not _heif_ready:
            from pillow_heif import register_heif_opener

            register_heif_opener()
            _heif_ready = True


def _data_uri(ref: str, max_bytes: int) -> bytes:
    """Return the bytes of a data: URI, refusing it beyond max_bytes."""
    header, comma, payload = ref.partition(",")
    if not comma:
        raise ImageError(ref[:64], "the data: URI has no data")
    if len(payload) > max_bytes * 4 // 3 + 4:
        raise ImageError(ref[:64], f"the image is over the {max_bytes:,}-byte limit")
    try:
        if header.endswith(";base64"):
            return base64.b64decode(payload, validate=False)
        return unquote_to_bytes(payload)
    except (binascii.Error, ValueError) as exc:
        raise ImageError(ref[:64], f"the data: URI is not valid base64 ({exc})") from exc


async def _page_image(page_url: str, fetcher: Fetcher, cpu: CpuPool | None) -> ImageSource | None:
    """Return the main image a page declares (og:image, twitter:image), or None."""
    try:
        page = await fetcher.fetch(page_url)
    except FactbotError as exc:
        log.info("page for og:image not fetched", extra={"url": page_url, "reason": str(exc)})
        return None
    if "html" not in page.content_type:
        return None
    found = await run_cpu(cpu, declared_images, page.text(), page.url)
    return ImageSource(found[0], ImageOrigin.OG_IMAGE, page_url=page.url) if found else None


def declared_images(html: str, base_url: str) -> list[str]:
    """Return the absolute http(s) URLs of the images a page's meta tags declare, in order."""
    from lxml import html as lxml_html
    from lxml.etree import ParserError

    try:
        root = lxml_html.fromstring(html[:2_000_000])
    except (ParserError, ValueError):
        return []
    urls: list[str] = []
    for meta in root.iter("meta"):
        key = (meta.get("property") or meta.get("name") or "").strip().lower()
        content = (meta.get("content") or "").strip()
        if key in _OG_KEYS and content:
            url = urljoin(base_url, content)
            if urlsplit(url).scheme in ("http", "https") and url not in urls:
                urls.append(url)
    return urls
