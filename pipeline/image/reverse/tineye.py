"""The TinEye API: where copies (and edits) of a picture were crawled, and since when.

`GET https://api.tineye.com/rest/search/?image_url=<URL>` or, with the bytes, a multipart
`POST` of `image_upload` to the same path; the key in the `x-api-key` header; `limit`, `offset`,
and `sort=crawl_date&order=asc` so the earliest copies come first (what provenance needs).

Fields relied on (the documented answer, as TinEye's own client `pytineye` reads it):
- `code` (200 on success) and `messages[]` (the reasons otherwise, also in an HTTP error's body);
- `results.matches[]`: `image_url` (TinEye's copy of the match), `domain`, `score` (0-100),
  `overlay` (a comparison link, not used), and `backlinks[]`, one per page: `url` (the image
  on that page), `backlink` (the page) and `crawl_date` (`YYYY-MM-DD`, when TinEye first saw it
  there). Each backlink is one appearance; TinEye only matches copies and edits of the picture,
  never look-alikes. TinEye gives no page titles.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pipeline.errors import SearchError
from pipeline.image.reverse._common import KeyedReverseProvider
from pipeline.image.reverse.interface import Carrier, ImageQuery, MatchKind, ReverseMatch
from pipeline.search.providers._common import Answer, validate

DEFAULT_URL = "https://api.tineye.com"


class _Backlink(Answer):
    backlink: str
    url: str | None = None
    crawl_date: str | None = None


class _Match(Answer):
    image_url: str | None = None
    domain: str | None = None
    score: float | None = None
    backlinks: tuple[_Backlink, ...] = ()


class _Results(Answer):
    matches: tuple[_Match, ...] = ()


class _Answer(Answer):
    code: int = 200
    messages: tuple[str, ...] = ()
    results: _Results | None = None


class TinEyeSearch(KeyedReverseProvider):
    """The TinEye reverse image search API."""

    name = "tineye"
    default_url = DEFAULT_URL
    carriers: tuple[Carrier, ...] = (Carrier.URL, Carrier.BYTES)

    async def search(self, query: ImageQuery) -> list[ReverseMatch]:
        """Return every page TinEye crawled a copy of the picture on, earliest first."""
        url = f"{self.base_url}/rest/search/"
        params: dict[str, str | int] = {
            "limit": query.limit,
            "offset": 0,
            "sort": "crawl_date",
            "order": "asc",
        }
        headers = {"x-api-key": self.api_key.get_secret_value()}
        if self.carrier(query) is Carrier.URL:
            data = await self.client.get_json(
                url, params={**params, "image_url": query.url or ""}, headers=headers
            )
        else:
            files = {"image_upload": ("image", query.data or b"", "application/octet-stream")}
            form = {key: str(value) for key, value in params.items()}
            data = await self.client.post_files(url, files=files, data=form, headers=headers)
        answer = validate(_Answer, data, self.name)
        if answer.code != 200:
            reason = f"code {answer.code}: {'; '.join(answer.messages)}"[:200]
            raise SearchError(self.name, self.client.redact(reason), status=answer.code)
        matches = answer.results.matches if answer.results is not None else ()
        found: list[ReverseMatch] = []
        for match in matches:
            for link in match.backlinks:
                found.append(
                    ReverseMatch(
                        page_url=link.backlink,
                        title="",
                        image_url=link.url or match.image_url,
                        provider=self.name,
                        rank=len(found) + 1,
                        kind=MatchKind.EXACT,
                        seen_at=_crawl_date(link.crawl_date),
                        source=match.domain,
                        score=match.score,
                    )
                )
        return found[: query.limit]


def _crawl_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.strptime(value[:10], "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        return None
