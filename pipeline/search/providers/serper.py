"""Serper, Google results as JSON.

`POST https://google.serper.dev/search` with the key in `X-API-KEY` and a JSON body
`{"q", "num", "hl", "tbs"}`; `site:` works in `q`, and `before` becomes Google's custom date
range `tbs=cdr:1,cd_max:MM/DD/YYYY` (inclusive, so the last day before it). The answer's
`organic[]` carry `link`, `title`, `snippet`, `position` and sometimes `date` ("Mar 3, 2024" or
"3 days ago"). Knowledge graph, answer box and "people also ask" are not results here.
"""

from __future__ import annotations

from pipeline.search.base import SearchQuery, SearchResult
from pipeline.search.parsing import last_day, parse_date, plain_text, with_sites
from pipeline.search.providers._common import Answer, KeyedProvider, validate

DEFAULT_URL = "https://google.serper.dev"
MAX_NUM = 100


class _Hit(Answer):
    link: str
    title: str = ""
    snippet: str | None = ""
    date: str | None = None


class _Answer(Answer):
    organic: tuple[_Hit, ...] = ()


class SerperSearch(KeyedProvider):
    """The Serper Google search API."""

    name = "serper"
    supports_sites = True
    default_url = DEFAULT_URL

    async def search(self, query: SearchQuery) -> list[SearchResult]:
        """Return Google's organic results for query through Serper, best first."""
        body: dict[str, str | int] = {
            "q": with_sites(query.text, query.sites),
            "num": min(query.limit, MAX_NUM),
        }
        if query.language:
            body["hl"] = query.language
        if query.before is not None:
            body["tbs"] = f"cdr:1,cd_max:{last_day(query.before).strftime('%m/%d/%Y')}"
        headers = {"X-API-KEY": self.api_key.get_secret_value()}
        data = await self.client.post_json(f"{self.base_url}/search", body=body, headers=headers)
        answer = validate(_Answer, data, self.name)
        return [
            SearchResult(
                url=hit.link,
                title=plain_text(hit.title),
                snippet=plain_text(hit.snippet),
                provider=self.name,
                rank=rank,
                published_at=parse_date(hit.date),
            )
            for rank, hit in enumerate(answer.organic[: query.limit], start=1)
        ]
