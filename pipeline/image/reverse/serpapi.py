"""SerpApi's Google Lens engine: the pages Google Lens finds for a picture.

`GET https://serpapi.com/search.json?engine=google_lens&url=<image URL>&type=exact_matches` with
the key as `api_key` (SerpApi takes it only as a parameter; the client never logs URLs and
redacts the key from every message). Google Lens reads the picture from its URL, so only images
with a public URL are sent; there is no upload.

Fields relied on (SerpApi's documented JSON):
- `exact_matches[]` (with `type=exact_matches`): `position`, `title`, `link` (the page), `source`
  (the site's name), `thumbnail` (SerpApi's copy of the matched image) and sometimes `date`
  ("2 years ago", or an absolute date).
- `visual_matches[]` (with `type=visual_matches` or `all`): the same, plus `image` (the full-size
  image URL). They are only *visually similar* pictures: kept with `kind=similar`, so the trace
  step's own hash comparison decides.
- `error`: a message; "Google Lens hasn't returned any results for this query." is an empty
  answer, not a failure (SerpApi says so with HTTP 200).
Relative dates are not kept: "2 years ago" does not date a photo.

Because the key travels in the URL, httpx's own request log line would carry it: every key a
`SerpApiLens` is given is masked in the `httpx` logger's records (`_KeyMask`).
"""

from __future__ import annotations

import logging
import re
from typing import Literal

import httpx
from pydantic import SecretStr

from pipeline.errors import SearchError
from pipeline.image.reverse._common import KeyedReverseProvider
from pipeline.image.reverse.interface import Carrier, ImageQuery, MatchKind, ReverseMatch
from pipeline.search.http import ProviderClient
from pipeline.search.parsing import parse_date, plain_text
from pipeline.search.providers._common import Answer, validate

DEFAULT_URL = "https://serpapi.com"
LensType = Literal["exact_matches", "visual_matches", "all"]
_NO_RESULTS = "hasn't returned any results"
_YEAR = re.compile(r"\b(1[89]|20)\d\d\b")


class _KeyMask(logging.Filter):
    """Mask SerpApi keys in httpx's request log lines."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep the record, with every known key replaced by ***."""
        if self.secrets:
            message = record.getMessage()
            masked = message
            for secret in self.secrets:
                masked = masked.replace(secret, "***")
            if masked != message:
                record.msg, record.args = masked, ()
        return True


_MASK = _KeyMask()


def _mask_in_httpx_log(secret: str) -> None:
    _MASK.secrets.add(secret)
    logger = logging.getLogger("httpx")
    if _MASK not in logger.filters:
        logger.addFilter(_MASK)


class _Hit(Answer):
    link: str
    title: str = ""
    position: int | None = None
    source: str | None = None
    thumbnail: str | None = None
    image: str | None = None
    date: str | None = None


class _Answer(Answer):
    exact_matches: tuple[_Hit, ...] = ()
    visual_matches: tuple[_Hit, ...] = ()
    error: str | None = None


class SerpApiLens(KeyedReverseProvider):
    """Google Lens through SerpApi."""

    name = "serpapi"
    default_url = DEFAULT_URL
    carriers: tuple[Carrier, ...] = (Carrier.URL,)

    def __init__(
        self,
        client: ProviderClient | httpx.AsyncClient,
        *,
        api_key: SecretStr | None,
        base_url: str | None = None,
        lens_type: LensType = "exact_matches",
    ) -> None:
        super().__init__(client, api_key=api_key, base_url=base_url)
        self.lens_type = lens_type
        _mask_in_httpx_log(self.api_key.get_secret_value())

    @property
    def cache_variant(self) -> str:
        """Return what besides the picture changes the answer: the Lens result type."""
        return self.lens_type

    async def search(self, query: ImageQuery) -> list[ReverseMatch]:
        """Return the pages Google Lens lists for the picture, exact matches first."""
        self.carrier(query)
        params: dict[str, str | int] = {
            "engine": "google_lens",
            "url": query.url or "",
            "type": self.lens_type,
            "api_key": self.api_key.get_secret_value(),
        }
        data = await self.client.get_json(f"{self.base_url}/search.json", params=params)
        answer = validate(_Answer, data, self.name)
        if answer.error and _NO_RESULTS not in answer.error:
            raise SearchError(self.name, self.client.redact(answer.error[:200]))
        hits = [(h, MatchKind.EXACT) for h in answer.exact_matches]
        hits += [(h, MatchKind.SIMILAR) for h in answer.visual_matches]
        return [
            ReverseMatch(
                page_url=hit.link,
                title=plain_text(hit.title),
                image_url=hit.image or hit.thumbnail,
                provider=self.name,
                rank=rank,
                kind=kind,
                published_at=parse_date(hit.date) if hit.date and _YEAR.search(hit.date) else None,
                source=hit.source,
            )
            for rank, (hit, kind) in enumerate(hits[: query.limit], start=1)
        ]
