"""The search interface every provider implements, and the records it returns.

A provider turns a `SearchQuery` into ranked `SearchResult`s. Providers speak HTTP through an
`httpx.AsyncClient` they are given (base URLs and keys come from settings), raise `SearchError`
for failures (with `status` and `retry_after` when the provider said so), and never fetch the
result pages themselves: that is the SSRF-safe fetcher's job.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from pipeline.records.domain import ClaimReview


@dataclass(frozen=True)
class SearchQuery:
    """One search request."""

    text: str
    before: datetime | None = None  # only results published before this, where supported
    sites: tuple[str, ...] = ()  # restrict to these domains (`site:`), where supported
    limit: int = 10
    language: str | None = None  # ISO 639-1, e.g. "en"


@dataclass(frozen=True)
class SearchResult:
    """One hit as the provider gave it."""

    url: str
    title: str
    snippet: str
    provider: str
    rank: int  # 1-based position in this provider's answer
    published_at: datetime | None = None
    publisher: str | None = None
    claim_review: ClaimReview | None = None  # fact-check search providers fill this
    # The publisher's host when the provider names it: the only trace of the publisher when `url`
    # is an aggregator's redirect (Google News), so credibility can rate the right site.
    publisher_domain: str | None = None


class SearchProvider(Protocol):
    """A web search backend."""

    name: str
    supports_sites: bool  # whether `SearchQuery.sites` is honoured (e.g. `site:` operators)

    async def search(self, query: SearchQuery) -> list[SearchResult]:
        """Return results for query, best first; raise SearchError on failure."""
        ...
