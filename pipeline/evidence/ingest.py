"""Filling the local evidence index: JSONL records, HTML files, feeds, sitemaps and URLs.

Each document is chunked into passages, embedded (in batches across documents) and stored with
its content hash, so re-ingesting the same URL with the same content does nothing. A record or
page that cannot be read becomes an `IngestError` naming its line or URL; the rest go on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pipeline.credibility.domains import registrable_domain
from pipeline.embedding.embedder import Embedder
from pipeline.errors import ExtractionError, FactbotError, IngestError
from pipeline.evidence.chunking import chunk_text, embedding_input
from pipeline.evidence.pages import extract_fetched
from pipeline.evidence.sourcerecords import canonical_url, record_from_json
from pipeline.fetch.extract import ExtractedPage, extract_page
from pipeline.fetch.feeds import parse_feed, parse_sitemap, sniff_kind
from pipeline.fetch.fetcher import FetchedPage, Fetcher
from pipeline.ports import EvidenceIndex
from pipeline.records.domain import Document, content_hash, utcnow
from pipeline.util.cpu import CpuPool, run_cpu

log = logging.getLogger(__name__)

MAX_SITEMAP_DEPTH = 2


class PageImageKeeper(Protocol):
    """Keeps a page's main images in the image index (`pipeline.image.page_images.PageImages`)."""

    async def keep(
        self, page: str | FetchedPage, document: Document, *, limit: int | None = None
    ) -> int:
        """Fetch, hash and index the main images of a page; return how many were kept."""
        ...


@dataclass
class IngestReport:
    """What an ingest did."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    passages: int = 0
    errors: list[IngestError] = field(default_factory=list)
    images: int = 0  # main images of the pages kept in the image index

    @property
    def documents(self) -> int:
        """Return how many documents were read successfully."""
        return self.added + self.updated + self.unchanged


@dataclass(frozen=True)
class _Pending:
    document: Document
    passages: list[str]
    digest: str
    extra: dict[str, Any]


class Ingester:
    """Reads sources and writes documents into the index."""

    def __init__(
        self,
        index: EvidenceIndex,
        embedder: Embedder,
        *,
        fetcher: Fetcher | None = None,
        batch_passages: int = 256,
        max_pages: int = 500,
        concurrency: int = 4,
        on_document: Callable[[], object] | None = None,
        cpu: CpuPool | None = None,
        images: PageImageKeeper | None = None,
    ) -> None:
        self.index = index
        self.embedder = embedder
        self.fetcher = fetcher
        self.batch_passages = batch_passages
        self.max_pages = max_pages
        self.concurrency = concurrency
        self.on_document = on_document
        self.cpu = cpu
        self.images = images  # None: pages' images are not kept
        self.report = IngestReport()
        self._pending: list[_Pending] = []

    async def ingest(self, sources: list[str]) -> IngestReport:
        """Ingest every path or URL and return the report."""
        for source in sources:
            if source.startswith(("http://", "https://")):
                await self._ingest_url(source, depth=0)
            else:
                await self._ingest_path(Path(source))
        return await self.finish()

    async def finish(self) -> IngestReport:
        """Embed and store whatever is still queued; return the report."""
        await self._flush()
        return self.report

    async def add_document(self, document: Document, extra: dict[str, Any] | None = None) -> bool:
        """Queue one document for embedding and storage; return False when it is unchanged
        or has no text."""
        text = document.text
        review = document.claim_review
        if review and review.claim_reviewed and review.claim_reviewed not in text:
            # Fact-check pages show the claim they rate; keep it searchable with the text.
            text = f"Claim: {review.claim_reviewed}\nRating: {review.rating}\n\n{text}"
        digest = content_hash(f"{document.title}\n{text}\n{document.published_at}\n{review}")
        if self.index.stored_hash(document.url) == digest:
            self.report.unchanged += 1
            self._tick()
            return False
        passages = chunk_text(text)
        if not passages:
            self._error(IngestError(document.url, "the document has no text"))
            return False
        # The stored text is exactly what the passages were cut from, so every quote of a
        # passage can be found again in the stored document (the citation check relies on it).
        pending = _Pending(dataclasses.replace(document, text=text), passages, digest, extra or {})
        self._pending.append(pending)
        if sum(len(p.passages) for p in self._pending) >= self.batch_passages:
            await self._flush()
        return True

    async def _flush(self) -> None:
        if not self._pending:
            return
        # Vectors of another model must not join the index (EmbeddingMismatchError says how).
        self.index.require_model(self.embedder.name, record=True)
        batch, self._pending = self._pending, []
        inputs = [embedding_input(p.document.title, text) for p in batch for text in p.passages]
        vectors = await self.embedder.embed(inputs)
        offset = 0
        for p in batch:
            vecs = vectors[offset : offset + len(p.passages)]
            offset += len(p.passages)
            status = self.index.upsert(
                p.document,
                list(zip(p.passages, vecs, strict=True)),
                content_hash=p.digest,
                extra=p.extra,
            )
            if status == "added":
                self.report.added += 1
            elif status == "updated":
                self.report.updated += 1
            else:
                self.report.unchanged += 1
            self.report.passages += len(p.passages)
            self._tick()

    async def reembed(self, *, batch: int = 512) -> int:
        """Re-embed every stored passage with this embedder, then name it the index's model.

        Run after changing FACTBOT_EMBEDDING__BACKEND or __MODEL; returns the passages done.
        Until it has finished, the index still names the old model, so an interrupted run
        leaves checks failing with EmbeddingMismatchError (never mixed vectors) until rerun.
        """
        done, after = 0, 0
        while rows := self.index.passage_texts(after=after, limit=batch):
            ids = [pid for pid, _ in rows]
            vectors = await self.embedder.embed([text for _, text in rows])
            self.index.replace_vectors(ids, vectors)
            done, after = done + len(rows), ids[-1]
            for _ in rows:
                self._tick()
        self.index.set_model(self.embedder.name)
        return done

    def _tick(self) -> None:
        if self.on_document is not None:
            self.on_document()

    def _error(self, error: IngestError) -> None:
        log.warning("ingest skipped a record", extra={"source": error.source, "line": error.line})
        self.report.errors.append(error)
        self._tick()

    async def _ingest_path(self, path: Path) -> None:
        if not path.exists():
            self._error(IngestError(str(path), "no such file"))
            return
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if child.is_file() and child.suffix.lower() in _FILE_KINDS:
                    await self._ingest_path(child)
            return
        suffix = path.suffix.lower()
        if suffix in (".jsonl", ".ndjson", ".json"):
            for item in read_jsonl(path):
                if isinstance(item, IngestError):
                    self._error(item)
                else:
                    await self.add_document(*item)
            return
        body = path.read_bytes()
        kind = sniff_kind(body, None)
        if kind == "html":
            html = body.decode("utf-8", errors="replace")
            url = canonical_url(html)
            if url is None:
                self._error(
                    IngestError(str(path), "the page names no canonical URL (link rel=canonical)")
                )
                return
            await self._add_html(html, url=url, source=str(path))
        elif kind in ("feed", "sitemap"):
            await self._follow(body, kind=kind, base_url=path.as_uri(), source=str(path), depth=0)
        else:
            self._error(IngestError(str(path), "not JSONL, HTML, a feed or a sitemap"))

    async def _ingest_url(self, url: str, *, depth: int) -> None:
        if self.fetcher is None:
            self._error(IngestError(url, "fetching is not available here"))
            return
        try:
            page = await self.fetcher.fetch(url)
        except FactbotError as exc:
            self._error(IngestError(url, str(exc)))
            return
        kind = sniff_kind(page.body, page.content_type)
        if kind == "html":
            await self._add_html(page, url=page.url, source=url)
        elif kind in ("feed", "sitemap"):
            await self._follow(page.body, kind=kind, base_url=page.url, source=url, depth=depth)
        else:
            self._error(IngestError(url, f"unsupported content type {page.content_type}"))

    async def _follow(
        self, body: bytes, *, kind: str, base_url: str, source: str, depth: int
    ) -> None:
        try:
            # Feeds and sitemaps run to megabytes of XML: parsed in the CPU pool.
            if kind == "feed":
                items = await run_cpu(self.cpu, parse_feed, body, base_url=base_url)
                urls = [item.url for item in items]
                nested: list[str] = []
            else:
                sitemap = await run_cpu(self.cpu, parse_sitemap, body)
                urls = [u for u, _ in sitemap.pages]
                nested = list(sitemap.sitemaps)
        except ExtractionError as exc:
            self._error(IngestError(source, exc.reason))
            return
        urls = urls[: self.max_pages]
        gate = asyncio.Semaphore(self.concurrency)

        async def one(u: str) -> None:
            async with gate:
                await self._ingest_url(u, depth=depth + 1)

        await asyncio.gather(*(one(u) for u in urls))
        if depth < MAX_SITEMAP_DEPTH:
            for child in nested[:20]:
                await self._ingest_url(child, depth=depth + 1)

    async def _add_html(self, html: str | FetchedPage, *, url: str, source: str) -> None:
        """Extract a page (decoded once, parsed once, in the CPU pool) and queue it."""
        try:
            extracted: ExtractedPage
            if isinstance(html, FetchedPage):
                extracted = await extract_fetched(html, cpu=self.cpu, fetched_at=utcnow())
            else:
                extracted = await run_cpu(
                    self.cpu,
                    extract_page,
                    html,
                    url=url,
                    domain=registrable_domain(url),
                    fetched_at=utcnow(),
                )
        except (ExtractionError, ValueError) as exc:
            self._error(IngestError(source, str(exc)))
            return
        author = extracted.metadata.author
        if await self.add_document(extracted.document, {"source": source, "author": author}):
            await self.keep_images(html, extracted.document)  # an unchanged page's are kept

    async def keep_images(
        self, page: str | FetchedPage, document: Document, *, limit: int | None = None
    ) -> None:
        """Keep the page's main images in the image index, when set up (never raises)."""
        if self.images is not None:
            self.report.images += await self.images.keep(page, document, limit=limit)


_FILE_KINDS = (".jsonl", ".ndjson", ".json", ".html", ".htm", ".xml", ".rss", ".atom")


def read_jsonl(path: Path) -> Iterator[tuple[Document, dict[str, Any]] | IngestError]:
    """Yield a document (with its extra fields) or an error for each non-blank line."""
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                data = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                yield IngestError(str(path), "the line is not valid UTF-8", line=number)
                continue
            except json.JSONDecodeError as exc:
                yield IngestError(str(path), f"malformed JSON: {exc.msg}", line=number)
                continue
            try:
                yield record_from_json(data)
            except ValueError as exc:
                yield IngestError(str(path), str(exc), line=number)
