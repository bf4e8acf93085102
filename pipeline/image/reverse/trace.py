"""The trace step: where else each picture of a post appears, as evidence the check can cite.

For each image the image stage read: ask the configured reverse image providers (by its public
URL, or by its bytes when it has none and uploads are allowed); keep at most `pages_per_image`
of the pages they name, dropping pages whose publisher may not be cited from the web (an unrated
one under the default `local` policy, as for web search) and pages the provider
says were published after the time bound (a late crawl of an old page is kept); fetch the
matched image on each page through the SSRF-safe fetcher and hash it, dropping a page whose
picture is not the same (`pipeline.image.hashing.compare`: "visually similar" is not an
appearance); fetch the page and index it into the evidence index like a web search result (so
it is retrieved, rated and cited like any page); and add the appearance to the local image index
(page URL, publisher, the page's date, or the provider's when the page has none, and the page's
or provider's title as its caption), where `pipeline.image.provenance.find_earlier` finds it.
A page with instructions to the checker in it is dropped: provenance cites pages directly.

Failure policy: never raises for a provider, page or image. A provider failure is a
`ProviderReport` in the returned `TraceReport` (and logged); every dropped page is counted with
its reason. Requests are bounded by the providers' per-check budgets.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from ipaddress import ip_address
from urllib.parse import urlsplit

from pipeline.embedding.embedder import Embedder
from pipeline.errors import FactbotError
from pipeline.evidence.ingest import Ingester
from pipeline.evidence.pages import fetch_page
from pipeline.evidence.ranking import Rater
from pipeline.fetch.fetcher import Fetcher
from pipeline.image.hashing import compare, hash_image
from pipeline.image.intake import IMAGE_TYPES, ImageLimits, decode_image, load_image
from pipeline.image.provenance import ImageIndex
from pipeline.image.reverse.interface import ImageQuery, MatchKind, ReverseMatch
from pipeline.image.reverse.multi import ReverseDeps
from pipeline.inputs.injection import find_instructions
from pipeline.ports import EvidenceIndex
from pipeline.records.domain import Document, Post
from pipeline.records.image import (
    ImageDescription,
    ImageHashes,
    ImageOrigin,
    ImageReport,
    ImageSource,
    IndexedImage,
    LoadedImage,
)
from pipeline.records.search_status import ProviderStatus, SearchStatus
from pipeline.search.merge import Outcome, ProviderReport
from pipeline.search.urls import canonical_url
from pipeline.util.cpu import CpuPool, run_cpu
from pipeline.util.dates import to_utc

log = logging.getLogger(__name__)

DEFAULT_LIMITS = ImageLimits()  # frozen, so one shared default is safe


@dataclass
class TraceReport:
    """What the trace step did for one check."""

    images: int = 0  # pictures looked up
    matches: int = 0  # pages the providers named
    verified: int = 0  # pages whose picture is the same (hashes)
    indexed: int = 0  # appearances added to the image index
    skipped: Counter[str] = field(default_factory=Counter)
    providers: list[ProviderReport] = field(default_factory=list)

    def statuses(self) -> tuple[ProviderStatus, ...]:
        """Return whether each provider answered, for the check's `SearchStatus`.

        A provider only skipped (it cannot take the picture) or over its budget says nothing
        about whether it answers, so it is left out; one that answered once answered.
        """
        answered: dict[str, bool] = {}
        reasons: dict[str, tuple[str, float]] = {}
        for report in self.providers:
            if report.outcome in (Outcome.OK, Outcome.CACHED):
                answered[report.provider] = True
            elif report.outcome is Outcome.FAILED:
                answered.setdefault(report.provider, False)
                reasons[report.provider] = (report.reason or "", round(report.seconds, 3))
        return tuple(
            ProviderStatus(name, True)
            if ok
            else ProviderStatus(name, False, reasons[name][0], reasons[name][1])
            for name, ok in answered.items()
        )


@dataclass(frozen=True)
class _Deps:
    fetcher: Fetcher
    limits: ImageLimits


@dataclass(frozen=True)
class _Found:
    match: ReverseMatch
    document: Document
    image: LoadedImage
    hashes: ImageHashes
    distance: int


def with_reverse_image(status: SearchStatus, trace: TraceReport | None) -> SearchStatus:
    """Return the check's search status with what its reverse image look-ups did."""
    if trace is None or not trace.providers:
        return status
    return replace(status, reverse_image=trace.statuses())


async def search_image_copies(
    report: ImageReport,
    *,
    post: Post,
    reverse: ReverseDeps,
    fetcher: Fetcher,
    images: ImageIndex | None,
    documents: EvidenceIndex,
    embedder: Embedder,
    rater: Rater,
    before: datetime | None,
    limits: ImageLimits = DEFAULT_LIMITS,
    cpu: CpuPool | None = None,
) -> TraceReport:
    """Look every picture up, index its verified appearances, and return what happened."""
    trace = TraceReport()
    if not report.descriptions:
        return trace
    deps = _Deps(fetcher, limits)
    ingester = Ingester(documents, embedder, cpu=cpu)
    own = frozenset(canonical_url(u) for u in (post.url, *post.links) if u)
    with reverse.search.check_budget():
        traced = await asyncio.gather(
            *(
                _trace_one(
                    d,
                    post=post,
                    deps=deps,
                    reverse=reverse,
                    rater=rater,
                    before=before,
                    own=own,
                    trace=trace,
                    cpu=cpu,
                )
                for d in report.descriptions
            )
        )
    for description, found in zip(report.descriptions, traced, strict=True):
        for item in found:
            await ingester.add_document(
                item.document,
                {
                    "reverse_image_provider": item.match.provider,
                    "reverse_image_rank": item.match.rank,
                },
            )
            if images is not None and images.add(_indexed(item)):
                trace.indexed += 1
            log.info(
                "image appearance found",
                extra={
                    "image_id": description.image_id,
                    "provider": item.match.provider,
                    "page_url": item.document.url,
                    "distance": item.distance,
                },
            )
    await ingester.finish()
    log.info(
        "images traced",
        extra={
            "images": trace.images,
            "matches": trace.matches,
            "verified": trace.verified,
            "indexed": trace.indexed,
            "skipped": dict(trace.skipped),
            "providers": [(r.provider, r.outcome.value, r.reason) for r in trace.providers],
        },
    )
    return trace


async def _trace_one(
    description: ImageDescription,
    *,
    post: Post,
    deps: _Deps,
    reverse: ReverseDeps,
    rater: Rater,
    before: datetime | None,
    own: frozenset[str],
    trace: TraceReport,
    cpu: CpuPool | None,
) -> list[_Found]:
    query = await _query(description, post=post, deps=deps, reverse=reverse, cpu=cpu)
    if query is None:
        trace.skipped["no public URL and uploads are off"] += 1
        return []
    trace.images += 1
    outcome = await reverse.search.search(query)
    trace.providers.extend(outcome.reports)
    trace.matches += len(outcome.matches)
    picked: list[ReverseMatch] = []
    for match in outcome.matches:
        reason = _skip_reason(match, rater=rater, before=before, own=own)
        if reason is None and len(picked) >= reverse.pages_per_image:
            reason = "over the pages-per-image limit"
        if reason:
            trace.skipped[reason] += 1
            continue
        picked.append(match)
    checked = await asyncio.gather(*(_verify(description, m, deps=deps, cpu=cpu) for m in picked))
    found: list[_Found] = []
    for outcome_or_reason in checked:
        if isinstance(outcome_or_reason, str):
            trace.skipped[outcome_or_reason] += 1
        else:
            trace.verified += 1
            found.append(outcome_or_reason)
    return found


async def _query(
    description: ImageDescription,
    *,
    post: Post,
    deps: _Deps,
    reverse: ReverseDeps,
    cpu: CpuPool | None,
) -> ImageQuery | None:
    """Return the look-up of a picture: its public URL, or its bytes when allowed."""
    limit = reverse.results_per_provider
    if public_url(description.url):
        return ImageQuery(image_id=description.image_id, url=description.url, limit=limit)
    if not reverse.upload:
        return None
    ref = description.url
    if ref.startswith("data:"):  # a description keeps only the start of a data: URI
        ref = next((r for r in post.image_refs if r.startswith(description.url)), "")
    if not ref:
        return None
    loaded = await load_image(
        ImageSource(ref, ImageOrigin(description.origin)),
        fetcher=deps.fetcher,
        limits=deps.limits,
        cpu=cpu,
    )
    if not isinstance(loaded, LoadedImage) or loaded.id != description.image_id:
        return None  # gone, or no longer the picture that was read
    return ImageQuery(image_id=description.image_id, data=loaded.data, limit=limit)


def public_url(url: str) -> bool:
    """Return whether url is an http(s) URL a third party could fetch (not a private host)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host:
        return False
    if host == "localhost" or host.endswith((".localhost", ".local", ".internal")):
        return False
    try:
        address = ip_address(host)
    except ValueError:
        return "." in host
    return address.is_global


def _skip_reason(
    match: ReverseMatch, *, rater: Rater, before: datetime | None, own: frozenset[str]
) -> str | None:
    if not match.image_url:
        return "no image URL to compare"
    if canonical_url(match.page_url) in own:
        return "the post's own page"
    rating = rater.rate(match.page_url)
    if not rater.citable(rating, web=True):
        return f"publisher not citable ({rating.tier.value})"
    published = match.published_at
    if before is not None and published is not None and to_utc(published) >= to_utc(before):
        return "published after the time bound"
    return None


async def _verify(
    description: ImageDescription, match: ReverseMatch, *, deps: _Deps, cpu: CpuPool | None
) -> _Found | str:
    """Return the page with its copy of the picture, or why it is not an appearance."""
    fetcher = deps.fetcher
    source = ImageSource(match.image_url or "", ImageOrigin.LINK, page_url=match.page_url)
    try:
        media = await fetcher.fetch_media(
            source.ref, content_types=IMAGE_TYPES, max_bytes=deps.limits.max_bytes
        )
        image = await run_cpu(
            cpu, decode_image, media.body, source=source, url=media.url, limits=deps.limits
        )
    except FactbotError as exc:
        log.info("matched image not read", extra={"url": source.ref[:200], "reason": str(exc)})
        return "matched image not read"
    except ValueError:
        return "matched image not read"
    hashes = await hash_image(image, cpu=cpu)
    same = compare(description.hashes, hashes)
    if not same.same:
        kind = "similar" if match.kind is MatchKind.SIMILAR else "claimed match"
        return f"not the same picture ({kind})"
    fetched = await fetch_page(match.page_url, fetcher=fetcher, cpu=cpu)
    if isinstance(fetched, str):
        return fetched
    document = fetched[0].document
    # Provenance cites an appearance's page directly: one that speaks to the checker is
    # never evidence (as `PageScreen` drops it from retrieval).
    if await run_cpu(cpu, find_instructions, f"{document.title}\n{document.text}"):
        return "the page carries instructions to the checker"
    return _Found(match, document, image, hashes, same.phash_distance)


def _indexed(found: _Found) -> IndexedImage:
    document, match = found.document, found.match
    return IndexedImage(
        image_id=found.image.id,
        image_url=found.image.url,
        page_url=document.url,
        hashes=found.hashes,
        publisher=document.publisher or match.source,
        # The page's own date first; else the provider's: a crawl date is when the picture was
        # already there, so the appearance is at least that old.
        published_at=document.published_at or match.published_at or match.seen_at,
        caption=document.title if document.title != document.url else match.title,
    )
