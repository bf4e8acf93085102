"""Search several providers at once: cached, budgeted, merged and de-duplicated.

`MultiSearch.search` asks every provider concurrently. Each provider's answer is read from and
written to the search cache (`WebCache`), so a repeated query costs no request until the entry
expires. Results are merged by `canonical_url`: one `MergedResult` per page, keeping the
best-ranked hit (its missing date, publisher or ClaimReview filled from the others) and the names
of every provider that found it, ordered by reciprocal-rank fusion, score = sum of 1/(k + rank).

Request budgets are per check: wrap a check's searches in `with multi.check_budget():` and each
provider may send at most its budget of requests inside the block (see `pipeline.search.http`).

Failure policy: a provider that raises `SearchError` (budget spent included) is logged and left
out, and `SearchOutcome.reports` says so; a provider that cannot honour `query.sites` is skipped.
Results published on or after `query.before` are dropped (undated ones are kept: their pages'
dates are checked after fetching). `search` itself raises nothing on purpose.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pipeline.errors import BudgetExceededError, SearchError
from pipeline.ports import SearchCache
from pipeline.records.codec import from_plain, to_plain
from pipeline.search.base import SearchProvider, SearchQuery, SearchResult
from pipeline.search.cache import cache_key, normalise_text
from pipeline.search.http import Budget, request_budgets
from pipeline.search.parsing import on_sites, site_domain
from pipeline.search.urls import canonical_url
from pipeline.util.dates import to_utc

log = logging.getLogger(__name__)


class Outcome(StrEnum):
    """What became of one provider's part in a search."""

    OK = "ok"
    CACHED = "cached"
    FAILED = "failed"
    OVER_BUDGET = "over budget"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class ProviderReport:
    """One provider's part in a search, for logs and dashboards."""

    provider: str
    outcome: Outcome
    results: int = 0
    reason: str | None = None
    status: int | None = None
    retry_after: float | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class MergedResult:
    """One page found by one or more providers."""

    result: SearchResult  # the best-ranked hit, gaps filled from the others
    providers: tuple[str, ...]  # every provider that returned the page, best rank first
    score: float  # reciprocal-rank fusion score
    key: str  # canonical URL


@dataclass(frozen=True)
class SearchOutcome:
    """The merged results of a search and what each provider did."""

    results: tuple[MergedResult, ...]  # every merged result, best first (callers cut)
    reports: tuple[ProviderReport, ...]

    @property
    def hits(self) -> list[SearchResult]:
        """Return the merged results' representative hits, best first."""
        return [merged.result for merged in self.results]


class _Named(Protocol):
    @property
    def name(self) -> str: ...


P = TypeVar("P", bound=_Named)
R = TypeVar("R")


class ProviderPool(Generic[P, R]):
    """Providers behind one cached, budgeted look-up: what web and reverse image search share.

    A subclass names what it looks up (`what`, for logs), its default cache time and per-check
    budget, and the record type of its results (`record`, stored in the search cache through
    `pipeline.records.codec`); `_answer`
    reads the cache, calls the provider, times it, turns a `SearchError` into a report and
    writes the answer back.
    """

    what: ClassVar[str]
    record: ClassVar[type[Any]]
    default_ttl: ClassVar[timedelta]
    default_budget: ClassVar[int]

    def __init__(
        self,
        providers: Sequence[P],
        *,
        cache: SearchCache | None,
        ttl: timedelta | None = None,
        budgets: Mapping[str, int] | None = None,
        default_budget: int | None = None,
    ) -> None:
        names = [provider.name for provider in providers]
        if len(set(names)) != len(names):
            raise ValueError(f"provider names must be unique: {names}")
        self.providers = tuple(providers)
        self.cache = cache
        self.ttl = self.default_ttl if ttl is None else ttl
        each = self.default_budget if default_budget is None else default_budget
        self.budgets = {name: (budgets or {}).get(name, each) for name in names}

    def _dump(self, result: R) -> dict[str, Any]:
        data: dict[str, Any] = to_plain(result, kind=self.record)
        return data

    def _load(self, data: dict[str, Any]) -> R:
        result: R = from_plain(self.record, data)
        return result

    def check_budget(self) -> AbstractContextManager[Mapping[str, Budget]]:
        """Open fresh per-provider request budgets for one check's look-ups."""
        return request_budgets(self.budgets)

    async def _answer(
        self,
        name: str,
        key: str,
        ask: Callable[[], Awaitable[list[R]]],
        *,
        query: str,
        before: datetime | None,
    ) -> tuple[list[R], ProviderReport]:
        cached = self._cached(name, key)
        if cached is not None:
            return cached, ProviderReport(name, Outcome.CACHED, results=len(cached))
        started = time.perf_counter()
        try:
            results = await ask()
        except SearchError as exc:
            seconds = time.perf_counter() - started
            over = isinstance(exc, BudgetExceededError)
            outcome = Outcome.OVER_BUDGET if over else Outcome.FAILED
            log.warning(
                f"{self.what} provider failed",
                extra={"provider": name, "reason": exc.reason, "status": exc.status},
            )
            report = ProviderReport(
                name, outcome, 0, exc.reason, exc.status, exc.retry_after, seconds
            )
            return [], report
        seconds = time.perf_counter() - started
        if self.cache is not None:
            self.cache.put_search(
                key,
                provider=name,
                query=query,
                before=before,
                results=[self._dump(result) for result in results],
                ttl=self.ttl,
            )
        return results, ProviderReport(name, Outcome.OK, results=len(results), seconds=seconds)

    def _cached(self, provider: str, key: str) -> list[R] | None:
        if self.cache is None:
            return None
        stored = self.cache.get_search(key)
        if stored is None:
            return None
        try:
            return [self._load(item) for item in stored]
        except (KeyError, TypeError, ValueError) as exc:
            log.warning(
                f"unreadable {self.what} cache entry", extra={"provider": provider, "err": exc}
            )
            return None


class MultiSearch(ProviderPool[SearchProvider, SearchResult]):
    """Several search providers behind one cached, budgeted, merging search."""

    what = "search"
    record = SearchResult
    default_ttl = timedelta(hours=24)
    default_budget = 10
    rrf_k: ClassVar[int] = 60

    async def search(self, query: SearchQuery) -> SearchOutcome:
        """Search every provider for query; return merged results and per-provider reports."""
        answers = await asyncio.gather(*(self._ask(p, query) for p in self.providers))
        reports = tuple(report for _, report in answers)
        hits = [self._keep(hit, query) for hits, _ in answers for hit in hits]
        return SearchOutcome(self._merge([hit for hit in hits if hit is not None]), reports)

    async def _ask(
        self, provider: SearchProvider, query: SearchQuery
    ) -> tuple[list[SearchResult], ProviderReport]:
        name = provider.name
        if query.sites and not provider.supports_sites:
            return [], ProviderReport(name, Outcome.SKIPPED, reason="cannot restrict to sites")
        return await self._answer(
            name,
            cache_key(name, query),
            lambda: provider.search(query),
            query=normalise_text(query.text),
            before=query.before,
        )

    @staticmethod
    def _keep(hit: SearchResult, query: SearchQuery) -> SearchResult | None:
        before, published = query.before, hit.published_at
        if before is not None and published is not None and to_utc(published) >= to_utc(before):
            return None
        if query.sites and not on_sites(hit.publisher_domain or site_domain(hit.url), query.sites):
            return None
        return hit

    def _merge(self, hits: list[SearchResult]) -> tuple[MergedResult, ...]:
        order = {provider.name: i for i, provider in enumerate(self.providers)}
        groups: dict[str, list[SearchResult]] = {}
        for hit in hits:
            groups.setdefault(canonical_url(hit.url), []).append(hit)
        merged = []
        for key, group in groups.items():
            group.sort(key=lambda hit: (hit.rank, order.get(hit.provider, len(order))))
            providers = tuple(dict.fromkeys(hit.provider for hit in group))
            # A provider listing the same page twice counts once, at its best rank.
            best_ranks = {hit.provider: hit.rank for hit in reversed(group)}
            score = sum(1.0 / (self.rrf_k + rank) for rank in best_ranks.values())
            merged.append(MergedResult(_fill(group), providers, score, key))
        merged.sort(key=lambda m: (-m.score, m.result.rank, order.get(m.result.provider, 0)))
        return tuple(merged)


def _fill(group: list[SearchResult]) -> SearchResult:
    """Return the first hit with its empty fields taken from the later ones."""
    best = group[0]
    changes = {}
    for field in ("published_at", "publisher", "publisher_domain", "claim_review", "snippet"):
        if not getattr(best, field):
            found = next((getattr(hit, field) for hit in group[1:] if getattr(hit, field)), None)
            if found:
                changes[field] = found
    return dataclasses.replace(best, **changes) if changes else best
