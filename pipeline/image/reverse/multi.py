"""Ask every reverse image provider about a picture: cached, budgeted, merged by page.

`ReverseSearch.search` asks each provider that can take the picture (by URL or by bytes, see
`ImageQuery.carriers`) concurrently. Each answer is read from and written to the search cache
(`pipeline.ports.SearchCache`, the same table web search uses) under a key made of the provider
and the picture's content hash, so the same picture costs no request until the entry expires,
however it was sent. Matches are merged by `canonical_url` of their page, keeping the
best-ranked one (exact before partial before similar).

Request budgets are per check, as for web search: wrap a check's look-ups in
`with reverse.check_budget():` (see `pipeline.search.http`).

Failure policy: a provider that raises `SearchError` (budget spent included) is logged and
left out, with a `ProviderReport` saying why; one that cannot take the picture is skipped.
`search` itself raises nothing on purpose.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import timedelta

from pipeline.errors import BudgetExceededError, SearchError
from pipeline.image.reverse.base import (
    ImageQuery,
    MatchKind,
    ReverseImageProvider,
    ReverseMatch,
    cache_key,
    match_from_dict,
    match_to_dict,
)
from pipeline.ports import SearchCache
from pipeline.search.http import Budget, request_budgets
from pipeline.search.merge import Outcome, ProviderReport
from pipeline.search.urls import canonical_url

log = logging.getLogger(__name__)

_KIND_ORDER = {MatchKind.EXACT: 0, MatchKind.PARTIAL: 1, MatchKind.SIMILAR: 2}


@dataclass(frozen=True)
class ReverseOutcome:
    """The merged matches for one picture and what each provider did."""

    matches: tuple[ReverseMatch, ...]
    reports: tuple[ProviderReport, ...]


class ReverseSearch:
    """Several reverse image providers behind one cached, budgeted, merging look-up."""

    def __init__(
        self,
        providers: Sequence[ReverseImageProvider],
        *,
        cache: SearchCache | None,
        ttl: timedelta = timedelta(hours=72),
        budgets: Mapping[str, int] | None = None,
        default_budget: int = 4,
    ) -> None:
        names = [provider.name for provider in providers]
        if len(set(names)) != len(names):
            raise ValueError(f"provider names must be unique: {names}")
        self.providers = tuple(providers)
        self.cache = cache
        self.ttl = ttl
        self.budgets = {name: (budgets or {}).get(name, default_budget) for name in names}

    def check_budget(self) -> AbstractContextManager[Mapping[str, Budget]]:
        """Open fresh per-provider request budgets for one check's look-ups."""
        return request_budgets(self.budgets)

    async def search(self, query: ImageQuery) -> ReverseOutcome:
        """Ask every provider about the picture; return merged matches and their reports."""
        answers = await asyncio.gather(*(self._ask(p, query) for p in self.providers))
        reports = tuple(report for _, report in answers)
        order = {provider.name: i for i, provider in enumerate(self.providers)}
        merged: dict[str, ReverseMatch] = {}
        every = [match for matches, _ in answers for match in matches]
        every.sort(key=lambda m: (_KIND_ORDER[m.kind], m.rank, order.get(m.provider, 0)))
        for match in every:
            merged.setdefault(canonical_url(match.page_url), match)
        return ReverseOutcome(tuple(merged.values()), reports)

    async def _ask(
        self, provider: ReverseImageProvider, query: ImageQuery
    ) -> tuple[list[ReverseMatch], ProviderReport]:
        name = provider.name
        if not set(provider.carriers) & set(query.carriers()):
            wants = " or ".join(c.value for c in provider.carriers)
            return [], ProviderReport(name, Outcome.SKIPPED, reason=f"needs the image by {wants}")
        # A provider whose answer depends on its own options (Lens's result type) names them.
        key = cache_key(name, query, variant=str(getattr(provider, "cache_variant", "")))
        cached = self._cached(name, key)
        if cached is not None:
            return cached, ProviderReport(name, Outcome.CACHED, results=len(cached))
        started = time.perf_counter()
        try:
            matches = await provider.search(query)
        except SearchError as exc:
            seconds = time.perf_counter() - started
            over = isinstance(exc, BudgetExceededError)
            log.warning(
                "reverse image provider failed",
                extra={"provider": name, "reason": exc.reason, "status": exc.status},
            )
            outcome = Outcome.OVER_BUDGET if over else Outcome.FAILED
            return [], ProviderReport(
                name, outcome, 0, exc.reason, exc.status, exc.retry_after, seconds
            )
        seconds = time.perf_counter() - started
        if self.cache is not None:
            self.cache.put_search(
                key,
                provider=name,
                query=f"image:{query.image_id}",
                before=None,
                results=[match_to_dict(match) for match in matches],
                ttl=self.ttl,
            )
        return matches, ProviderReport(name, Outcome.OK, results=len(matches), seconds=seconds)

    def _cached(self, provider: str, key: str) -> list[ReverseMatch] | None:
        if self.cache is None:
            return None
        stored = self.cache.get_search(key)
        if stored is None:
            return None
        try:
            return [match_from_dict(item) for item in stored]
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("unreadable reverse image cache entry", extra={"provider": provider})
            log.debug("cache entry error", extra={"err": str(exc)})
            return None


@dataclass(frozen=True)
class ReverseDeps:
    """What the trace step needs, built once by the composition root."""

    search: ReverseSearch
    pages_per_image: int = 5  # pages fetched and verified per picture
    results_per_provider: int = 20  # matches asked of each provider
    upload: bool = True  # send the bytes of a picture without a public URL
