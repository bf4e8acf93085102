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
from dataclasses import dataclass
from datetime import timedelta

from pipeline.image.reverse.interface import (
    ImageQuery,
    MatchKind,
    ReverseImageProvider,
    ReverseMatch,
    cache_key,
)
from pipeline.search.merge import Outcome, ProviderPool, ProviderReport
from pipeline.search.urls import canonical_url

_KIND_ORDER = {MatchKind.EXACT: 0, MatchKind.PARTIAL: 1, MatchKind.SIMILAR: 2}


@dataclass(frozen=True)
class ReverseOutcome:
    """The merged matches for one picture and what each provider did."""

    matches: tuple[ReverseMatch, ...]
    reports: tuple[ProviderReport, ...]


class ReverseSearch(ProviderPool[ReverseImageProvider, ReverseMatch]):
    """Several reverse image providers behind one cached, budgeted, merging look-up."""

    what = "reverse image"
    record = ReverseMatch
    default_ttl = timedelta(hours=72)
    default_budget = 4

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
        return await self._answer(
            name, key, lambda: provider.search(query), query=f"image:{query.image_id}", before=None
        )


@dataclass(frozen=True)
class ReverseDeps:
    """What the trace step needs, built once by the composition root."""

    search: ReverseSearch
    pages_per_image: int = 5  # pages fetched and verified per picture
    results_per_provider: int = 20  # matches asked of each provider
    upload: bool = True  # send the bytes of a picture without a public URL
