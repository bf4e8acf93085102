"""Web retrieval: search the live web for each claim and feed credible pages into the index.

For every claim two searches run (the claim itself, and the claim restricted to fact-checkers
with `site:` where a provider supports it). Results from publishers that may not be cited are
dropped before anything is fetched; so are results the provider dates after the time bound.
The best remaining pages are fetched through the SSRF-safe fetcher (a query's pages as soon as
its searches and those of the queries before it have answered, while later searches still run;
which pages are picked does not depend on timing), extracted, and ingested into the local
index, where the ordinary hybrid retrieval, relevance filter, credibility ranking and time
bound treat them like any other document. A fact-check result's ClaimReview (from a
fact-check search API) is attached to its page when the page itself carries none.

Failure policy: never raises for one provider, result or page; every skip is counted with its
reason in the returned report.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import Counter
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from pipeline.claims.queries import Query
from pipeline.credibility.domains import registrable_domain
from pipeline.evidence.ingest import Ingester
from pipeline.evidence.pages import fetch_page
from pipeline.evidence.ranking import Rater
from pipeline.fetch.fetcher import FetchedPage, Fetcher
from pipeline.records.domain import Document
from pipeline.search.base import SearchQuery, SearchResult
from pipeline.search.locales import ENGLISH
from pipeline.search.merge import MultiSearch, Outcome, ProviderReport
from pipeline.util.cpu import CpuPool

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_QUERY_WORDS = 32


@dataclass(frozen=True)
class WebDeps:
    """What web retrieval needs, built once by the composition root."""

    search: MultiSearch
    fetcher: Fetcher
    pages_per_claim: int = 6
    results_per_provider: int = 8
    fact_check_sites: tuple[str, ...] = ()
    # The fact-checkers of each other language (pipeline/search/locales.py).
    sites_by_language: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class WebReport:
    """What web retrieval did for one check."""

    searches: int = 0
    results: int = 0
    fetched: int = 0
    added: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    providers: list[ProviderReport] = field(default_factory=list)  # one per provider a search

    def outcomes(self) -> list[tuple[str, bool, str, float]]:
        """Return (provider, answered, reason, seconds) of every provider request that counts.

        A provider skipped (it cannot restrict to sites) or over its budget says nothing about
        whether it is reachable, so it is left out.
        """
        return [
            (r.provider, r.outcome in (Outcome.OK, Outcome.CACHED), r.reason or "", r.seconds)
            for r in self.providers
            if r.outcome in (Outcome.OK, Outcome.CACHED, Outcome.FAILED)
        ]


def _query_text(query: Query) -> str:
    return " ".join(query.text.split()[:MAX_QUERY_WORDS])


async def gather_web_evidence(
    queries: list[Query],
    *,
    search: MultiSearch,
    fetcher: Fetcher,
    rater: Rater,
    ingester: Ingester,
    before: datetime | None = None,
    pages_per_claim: int = 6,
    fact_check_sites: tuple[str, ...] = (),
    sites_by_language: Mapping[str, tuple[str, ...]] | None = None,
    limit: int = 8,
    cpu: CpuPool | None = None,
) -> WebReport:
    """Search, filter, fetch and ingest pages for every query; return what happened."""
    by_language = sites_by_language or {}
    report = WebReport()
    stored_before = ingester.report.added + ingester.report.updated
    picked: set[str] = set()
    started: list[asyncio.Future[Any]] = []

    def start(work: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
        task = asyncio.ensure_future(work)
        started.append(task)
        return task

    try:
        # Every search of every query starts at once (providers bound their own concurrency).
        # Results are picked query by query in the original order, so the outcome does not
        # depend on timing; a query's pages are fetched as soon as it and every query before
        # it have their answers, while later searches are still in flight.
        plans = [
            [
                start(search.search(ask))
                for ask in _asks(query, before, fact_check_sites, limit, by_language)
            ]
            for query in queries
        ]
        fetches: list[asyncio.Future[tuple[Document, dict[str, Any], FetchedPage] | str]] = []
        images: list[asyncio.Future[None]] = []
        for searches in plans:
            answers = [await s for s in searches]
            report.searches += len(answers)
            report.providers.extend(r for a in answers for r in a.reports)
            chosen = 0
            for result in _interleave([a.hits for a in answers]):
                report.results += 1
                reason = _skip_reason(result, rater=rater, before=before)
                if reason:
                    report.skipped[reason] += 1
                    continue
                if result.url in picked:
                    continue
                if chosen >= pages_per_claim:
                    break
                picked.add(result.url)
                chosen += 1
                fetches.append(start(_fetch_one(result, fetcher=fetcher, cpu=cpu)))
        for fetch in fetches:  # in the order picked, whatever order they finish in
            outcome = await fetch
            if isinstance(outcome, str):
                report.skipped[outcome] += 1
                continue
            report.fetched += 1
            document, extra, page = outcome
            if await ingester.add_document(document, extra):
                # Its declared image (og:image) into the image index, beside the other fetches.
                images.append(start(ingester.keep_images(page, document, limit=1)))
        for kept in images:
            await kept
    finally:
        for task in started:  # only after a failure or a cancellation is any still running
            if not task.done():
                task.cancel()
            elif not task.cancelled():
                task.exception()  # retrieved: one failure is reported once, not per task
    await ingester.finish()
    report.added = ingester.report.added + ingester.report.updated - stored_before
    log.info(
        "web retrieval",
        extra={
            "searches": report.searches,
            "results": report.results,
            "fetched": report.fetched,
            "skipped": dict(report.skipped),
        },
    )
    return report


def _asks(
    query: Query,
    before: datetime | None,
    fact_check_sites: tuple[str, ...],
    limit: int,
    sites_by_language: Mapping[str, tuple[str, ...]],
) -> list[SearchQuery]:
    """Return the searches of one query: as written, and restricted to fact-checkers.

    A claim in another language than English is searched in its language (with that
    language's fact-checkers) and then for English results (with the English ones).
    """
    text = _query_text(query)
    language = query.language
    if language is None or language == ENGLISH:
        asks = [SearchQuery(text=text, before=before, limit=limit)]
        if fact_check_sites:
            asks.append(SearchQuery(text=text, before=before, sites=fact_check_sites, limit=limit))
        return asks
    asks = [SearchQuery(text=text, before=before, limit=limit, language=language)]
    own = sites_by_language.get(language, ())
    if own:
        asks.append(
            SearchQuery(text=text, before=before, sites=own, limit=limit, language=language)
        )
    asks.append(SearchQuery(text=text, before=before, limit=limit, language=ENGLISH))
    if fact_check_sites:
        asks.append(
            SearchQuery(
                text=text, before=before, sites=fact_check_sites, limit=limit, language=ENGLISH
            )
        )
    return asks


def _interleave(lists: list[list[SearchResult]]) -> list[SearchResult]:
    """Alternate between answers so fact-check results are not all behind general ones."""
    out: list[SearchResult] = []
    for i in range(max((len(x) for x in lists), default=0)):
        out.extend(x[i] for x in lists if i < len(x))
    return out


def _skip_reason(result: SearchResult, *, rater: Rater, before: datetime | None) -> str | None:
    rating = rater.rate(_rated_target(result))
    if not rater.citable(rating, web=True):
        return f"publisher not citable ({rating.tier.value})"
    if before is not None and result.published_at is not None and result.published_at >= before:
        return "published after the time bound"
    return None


def _rated_target(result: SearchResult) -> str:
    """Return what to rate: the URL, or the publisher when an aggregator's redirect hides it."""
    if not result.publisher_domain:
        return result.url
    try:
        same = registrable_domain(result.url) == registrable_domain(result.publisher_domain)
    except ValueError:
        same = False
    return result.url if same else result.publisher_domain


async def _fetch_one(
    result: SearchResult, *, fetcher: Fetcher, cpu: CpuPool | None
) -> tuple[Document, dict[str, Any], FetchedPage] | str:
    fetched = await fetch_page(result.url, fetcher=fetcher, cpu=cpu)
    if isinstance(fetched, str):
        return fetched
    extracted, page = fetched
    document = extracted.document
    if document.claim_review is None and result.claim_review is not None:
        document = dataclasses.replace(document, claim_review=result.claim_review)
    if document.published_at is None and result.published_at is not None:
        document = dataclasses.replace(document, published_at=result.published_at)
    extra: dict[str, Any] = {
        "search_provider": result.provider,
        "search_rank": result.rank,
        "author": extracted.metadata.author,
    }
    return document, extra, page
