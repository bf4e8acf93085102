"""Google Fact Check Tools API: published fact-checks (ClaimReview) matching a query.

`GET https://factchecktools.googleapis.com/v1alpha1/claims:search` with `query`,
`languageCode`, `pageSize`, `maxAgeDays` and `reviewPublisherSiteFilter` (one site). The key goes
in the `X-Goog-Api-Key` header, which every googleapis.com API accepts in place of `?key=`, so it
never appears in a URL or in httpx's request log. The answer's `claims[]` have `text`,
`claimant`, `claimDate` and `claimReview[]` with `publisher.name/site`, `url`, `title`,
`reviewDate`, `textualRating` and `languageCode`; each review becomes one result carrying a
`ClaimReview` whose label comes from `rating_to_label`. Several sites are filtered here, after
the answer, since the API takes only one. Given a `sink`, every review of every answer is also
handed to it as a `FactCheck` (pipeline/factchecks/reviewitems.py), so the answers can be kept
in the fact-check index. The sink is called inline: it hands the reviews on (a queue) and
returns, and never raises.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import httpx
from pydantic import Field, SecretStr

from pipeline.factchecks.ratings import rating_to_label
from pipeline.factchecks.reviewitems import fact_checks_from_google
from pipeline.records.domain import ClaimReview
from pipeline.records.factchecks import FactCheck
from pipeline.search.base import SearchQuery, SearchResult
from pipeline.search.http import ProviderClient
from pipeline.search.parsing import on_sites, parse_date, site_domain
from pipeline.search.providers._common import Answer, KeyedProvider, validate

DEFAULT_URL = "https://factchecktools.googleapis.com"
# Where the reviews of each answer go besides the results (the fact-check index's cache).
FactCheckSink = Callable[[Sequence[FactCheck]], None]
MAX_PAGE = 100


class _Publisher(Answer):
    name: str | None = None
    site: str | None = None


class _Review(Answer):
    url: str | None = None
    title: str | None = None
    publisher: _Publisher | None = None
    review_date: str | None = Field(default=None, alias="reviewDate")
    textual_rating: str | None = Field(default=None, alias="textualRating")
    language_code: str | None = Field(default=None, alias="languageCode")


class _Claim(Answer):
    text: str = ""
    claimant: str | None = None
    claim_date: str | None = Field(default=None, alias="claimDate")
    claim_review: tuple[_Review, ...] = Field(default=(), alias="claimReview")


class _Answer(Answer):
    claims: tuple[_Claim, ...] = ()


class FactCheckSearch(KeyedProvider):
    """The Google Fact Check Tools claim search."""

    name = "factcheck"
    supports_sites = True
    default_url = DEFAULT_URL

    def __init__(
        self,
        client: ProviderClient | httpx.AsyncClient,
        *,
        api_key: SecretStr | None,
        base_url: str = DEFAULT_URL,
        max_age_days: int | None = None,
        sink: FactCheckSink | None = None,
    ) -> None:
        super().__init__(client, api_key=api_key, base_url=base_url)
        self.max_age_days = max_age_days
        self.sink = sink

    async def search(self, query: SearchQuery) -> list[SearchResult]:
        """Return one result per fact-check review matching query, best first."""
        params: dict[str, str | int] = {"query": query.text, "pageSize": min(query.limit, MAX_PAGE)}
        if query.language:
            params["languageCode"] = query.language
        if self.max_age_days is not None:
            params["maxAgeDays"] = self.max_age_days
        if len(query.sites) == 1:
            params["reviewPublisherSiteFilter"] = query.sites[0]
        headers = {"X-Goog-Api-Key": self.api_key.get_secret_value()}
        data = await self.client.get_json(
            f"{self.base_url}/v1alpha1/claims:search", params=params, headers=headers
        )
        answer = validate(_Answer, data, self.name)
        if self.sink is not None:
            self._keep(data)
        results: list[SearchResult] = []
        for claim in answer.claims:
            for review in claim.claim_review:
                result = self._result(claim, review, rank=len(results) + 1)
                if result is None or (query.sites and not self._on(result, query.sites)):
                    continue
                results.append(result)
        return results[: query.limit]

    def _result(self, claim: _Claim, review: _Review, *, rank: int) -> SearchResult | None:
        if not review.url or not review.url.startswith(("http://", "https://")):
            return None
        rating = (review.textual_rating or "").strip()
        publisher = review.publisher or _Publisher()
        reviewed = parse_date(review.review_date)
        claimant = f"{claim.claimant}: " if claim.claimant else ""
        return SearchResult(
            url=review.url,
            title=review.title or claim.text,
            snippet=f"{claimant}{claim.text}" + (f" — rated {rating}" if rating else ""),
            provider=self.name,
            rank=rank,
            published_at=reviewed,
            publisher=publisher.name,
            publisher_domain=site_domain(publisher.site),
            claim_review=ClaimReview(
                claim_reviewed=claim.text,
                rating=rating,
                label=rating_to_label(rating) if rating else None,
                reviewer=publisher.name,
                url=review.url,
                date_published=reviewed,
            ),
        )

    def _keep(self, data: object) -> None:
        assert self.sink is not None
        found = [item for item in fact_checks_from_google(data) if isinstance(item, FactCheck)]
        if not found:
            return
        self.sink(found)

    @staticmethod
    def _on(result: SearchResult, sites: tuple[str, ...]) -> bool:
        return on_sites(result.publisher_domain or site_domain(result.url), sites)
