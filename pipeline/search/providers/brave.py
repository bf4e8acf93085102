"""Brave Search API, web results.

`GET https://api.search.brave.com/res/v1/web/search` with the key in `X-Subscription-Token`;
`q` (where `site:` works), `count` (at most 20), `search_lang`, and `freshness`, which besides
`pd`/`pw`/`pm`/`py` takes a range `YYYY-MM-DDtoYYYY-MM-DD`: `before` becomes
`1970-01-01to<last day before it>`. The answer's `web.results[]` carry `url`, `title`,
`description` (with `<strong>` highlights), `page_age` (ISO 8601, preferred) and `age`
(a display date or "2 days ago"), `profile.name` (the site's name) and `meta_url.hostname`.
An answer without a `web` section has no web results.
"""

from __future__ import annotations

from pipeline.search.base import SearchQuery, SearchResult
from pipeline.search.parsing import last_day, parse_date, plain_text, site_domain, with_sites
from pipeline.search.providers._common import Answer, KeyedProvider, validate

DEFAULT_URL = "https://api.search.brave.com"
MAX_COUNT = 20


class _Profile(Answer):
    name: str | None = None


class _MetaUrl(Answer):
    hostname: str | None = None


class _Hit(Answer):
    url: str
    title: str = ""
    description: str | None = ""
    page_age: str | None = None
    age: str | None = None
    profile: _Profile | None = None
    meta_url: _MetaUrl | None = None


class _Web(Answer):
    results: tuple[_Hit, ...] = ()


class _Answer(Answer):
    web: _Web | None = None


class BraveSearch(KeyedProvider):
    """The Brave Search API."""

    name = "brave"
    supports_sites = True
    default_url = DEFAULT_URL

    async def search(self, query: SearchQuery) -> list[SearchResult]:
        """Return Brave's web results for query, best first."""
        params: dict[str, str | int] = {
            "q": with_sites(query.text, query.sites),
            "count": min(query.limit, MAX_COUNT),
        }
        if query.language:
            params["search_lang"] = query.language
        if query.before is not None:
            params["freshness"] = f"1970-01-01to{last_day(query.before).isoformat()}"
        headers = {
            "Accept": "application/json",
            "X-Subscription-Token": self.api_key.get_secret_value(),
        }
        data = await self.client.get_json(
            f"{self.base_url}/res/v1/web/search", params=params, headers=headers
        )
        answer = validate(_Answer, data, self.name)
        hits = answer.web.results if answer.web is not None else []
        return [
            SearchResult(
                url=hit.url,
                title=plain_text(hit.title),
                snippet=plain_text(hit.description),
                provider=self.name,
                rank=rank,
                published_at=parse_date(hit.page_age) or parse_date(hit.age),
                publisher=hit.profile.name if hit.profile else None,
                publisher_domain=site_domain(hit.meta_url.hostname) if hit.meta_url else None,
            )
            for rank, hit in enumerate(hits[: query.limit], start=1)
        ]
