"""The main images of ingested pages, kept in the image index for provenance.

A page's main images are what it declares (og:image, twitter:image) and the pictures of its
content: `<img>` inside `<figure>`, `<article>` or `<main>`, minus icons, logos, avatars, tracking
pixels and vector files. Each is fetched through the one SSRF-safe fetcher (`Fetcher.fetch_media`,
image types, the intake's size cap), decoded with the intake's limits (`pipeline.image.intake`),
hashed, and kept with the page URL, publisher, the page's date and what the page says it shows:
its figcaption, else its alt text (og:image:alt), else the page title.

Parsing, decoding and hashing run in the CPU pool; at most `per_page` images a page, fetched
`concurrency` at a time.

Failure policy: never raises for an image or a page; a picture that cannot be fetched or read is
logged and skipped, and the ingest goes on.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from pipeline.fetch.fetcher import FetchedPage, Fetcher
from pipeline.image.hashing import hash_picture
from pipeline.image.intake import ImageLimits, load_image
from pipeline.image.provenance import ImageIndex
from pipeline.records.domain import Document
from pipeline.records.image import ImageOrigin, ImageSource, IndexedImage, LoadedImage
from pipeline.util.cpu import CpuPool, run_cpu

log = logging.getLogger(__name__)

_OG_KEYS = ("og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src")
_NOT_MAIN = ("logo", "icon", "avatar", "sprite", "pixel", "badge", "spacer", "emoji", "banner-ad")
_MIN_SIDE = 100  # an <img> declared smaller than this on a side is decoration
MAX_CAPTION = 300
_LIMITS = ImageLimits()  # frozen, so one shared default is safe


@dataclass(frozen=True)
class PageImage:
    """A main image a page shows, and what the page says it shows ("" when it says nothing)."""

    url: str
    caption: str


def main_images(html: str, base_url: str, *, limit: int) -> list[PageImage]:
    """Return up to limit main images of a page: declared ones first, then content pictures."""
    from lxml import html as lxml_html
    from lxml.etree import ParserError

    if limit <= 0:
        return []
    try:
        root = lxml_html.fromstring(html[:2_000_000])
    except (ParserError, ValueError):
        return []
    found: dict[str, PageImage] = {}

    def add(src: str, caption: str) -> None:
        url = urljoin(base_url, src.strip())
        path = urlsplit(url).path.lower()
        if urlsplit(url).scheme not in ("http", "https") or path.endswith(".svg"):
            return
        if any(word in path for word in _NOT_MAIN) or url in found:
            return
        found[url] = PageImage(url, " ".join(caption.split())[:MAX_CAPTION])

    metas: dict[str, str] = {}
    for meta in root.iter("meta"):
        key = (meta.get("property") or meta.get("name") or "").strip().lower()
        metas.setdefault(key, (meta.get("content") or "").strip())
    alt = metas.get("og:image:alt", "") or metas.get("twitter:image:alt", "")
    for key in _OG_KEYS:
        if metas.get(key):
            add(metas[key], alt)
    for img in root.xpath("//figure//img | //article//img | //main//img"):
        src = img.get("src") or img.get("data-src") or ""
        if not src or src.startswith("data:") or _small(img.get("width"), img.get("height")):
            continue
        figure = next((a for a in img.iterancestors("figure")), None)
        captions = figure.xpath(".//figcaption") if figure is not None else []
        text = captions[0].text_content() if captions else ""
        add(src, text.strip() or (img.get("alt") or "").strip())
    return list(found.values())[:limit]


def _images_of(page: str | FetchedPage, base_url: str, limit: int) -> list[PageImage]:
    html = page if isinstance(page, str) else page.text()
    return main_images(html, base_url, limit=limit)


def _small(width: str | None, height: str | None) -> bool:
    for side in (width, height):
        if side and side.strip().isdigit() and int(side) < _MIN_SIDE:
            return True
    return False


class PageImages:
    """Keep the main images of pages in the image index (built once, shared by an ingest)."""

    def __init__(
        self,
        index: ImageIndex,
        fetcher: Fetcher,
        *,
        per_page: int = 4,
        limits: ImageLimits = _LIMITS,
        concurrency: int = 4,
        cpu: CpuPool | None = None,
    ) -> None:
        self.index = index
        self.fetcher = fetcher
        self.per_page = per_page
        self.limits = limits
        self.cpu = cpu
        self._gate = asyncio.Semaphore(concurrency)
        self.kept = 0
        self.failed = 0

    async def keep(
        self, page: str | FetchedPage, document: Document, *, limit: int | None = None
    ) -> int:
        """Fetch, hash and index the main images of a page; return how many were kept."""
        limit = self.per_page if limit is None else min(limit, self.per_page)
        if limit <= 0:
            return 0
        images = await run_cpu(self.cpu, _images_of, page, document.url, limit)
        kept = await asyncio.gather(*(self._one(image, document) for image in images))
        return sum(kept)

    async def _one(self, image: PageImage, document: Document) -> bool:
        source = ImageSource(image.url, ImageOrigin.PAGE, page_url=document.url)
        async with self._gate:
            loaded = await load_image(
                source, fetcher=self.fetcher, limits=self.limits, cpu=self.cpu
            )
        if not isinstance(loaded, LoadedImage):
            self.failed += 1
            log.info(
                "page image not kept",
                extra={"page": document.url, "image": image.url, "reason": loaded.reason},
            )
            return False
        caption = image.caption or document.title
        added = await run_cpu(self.cpu, self._add, loaded, document, caption)
        self.kept += added
        return added

    def _add(self, loaded: LoadedImage, document: Document, caption: str) -> bool:
        return self.index.add(
            IndexedImage(
                image_id=loaded.id,
                image_url=loaded.url,
                page_url=document.url,
                hashes=hash_picture(loaded.image),
                publisher=document.publisher or document.domain,
                published_at=document.published_at,
                caption=caption,
            )
        )
