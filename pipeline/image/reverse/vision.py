"""Google Cloud Vision web detection: pages on the web that carry the picture.

`POST https://vision.googleapis.com/v1/images:annotate` with the key in `x-goog-api-key` and one
request: `image.source.imageUri` (a public URL, which Google fetches) or `image.content` (the
bytes, base64), and `features: [{"type": "WEB_DETECTION", "maxResults": n}]`.

Fields relied on (the documented `AnnotateImageResponse`):
- `responses[0].webDetection.pagesWithMatchingImages[]`: `url`, `pageTitle` (may carry HTML
  markup), `fullMatchingImages[].url` and `partialMatchingImages[].url`: the copies on that
  page. Only a page with a full or partial match is an appearance (full: `exact`, partial
  only: `partial`); a page listed without either is dropped.
- `fullMatchingImages`, `partialMatchingImages`, `visuallySimilarImages` and `bestGuessLabels`
  at the top level name images or labels without a page: nothing to cite, so not read here
  (visually similar images are not appearances at all).
- `responses[0].error` (`code`, `message`): a per-image failure inside an HTTP 200 answer.
Vision gives no dates: the page's own date is read when the page is fetched.
"""

from __future__ import annotations

import base64
from typing import Any

from pydantic import ConfigDict, Field

from pipeline.errors import SearchError
from pipeline.image.reverse._common import KeyedReverseProvider
from pipeline.image.reverse.interface import Carrier, ImageQuery, MatchKind, ReverseMatch
from pipeline.search.parsing import plain_text
from pipeline.search.providers._common import Answer, validate

DEFAULT_URL = "https://vision.googleapis.com"


class _Camel(Answer):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class _Image(_Camel):
    url: str


class _Page(_Camel):
    url: str
    page_title: str = Field(default="", alias="pageTitle")
    full: tuple[_Image, ...] = Field(default=(), alias="fullMatchingImages")
    partial: tuple[_Image, ...] = Field(default=(), alias="partialMatchingImages")


class _Web(_Camel):
    pages: tuple[_Page, ...] = Field(default=(), alias="pagesWithMatchingImages")


class _Error(_Camel):
    code: int | None = None
    message: str = ""


class _Response(_Camel):
    web: _Web | None = Field(default=None, alias="webDetection")
    error: _Error | None = None


class _Answer(_Camel):
    responses: tuple[_Response, ...] = ()


class VisionWebDetection(KeyedReverseProvider):
    """Google Cloud Vision's web detection."""

    name = "vision"
    default_url = DEFAULT_URL
    carriers: tuple[Carrier, ...] = (Carrier.URL, Carrier.BYTES)

    async def search(self, query: ImageQuery) -> list[ReverseMatch]:
        """Return the pages Vision lists with a full or partial copy of the picture."""
        image: dict[str, Any]
        if self.carrier(query) is Carrier.URL:
            image = {"source": {"imageUri": query.url}}
        else:
            image = {"content": base64.b64encode(query.data or b"").decode("ascii")}
        body = {
            "requests": [
                {
                    "image": image,
                    "features": [{"type": "WEB_DETECTION", "maxResults": query.limit}],
                }
            ]
        }
        headers = {"x-goog-api-key": self.api_key.get_secret_value()}
        data = await self.client.post_json(
            f"{self.base_url}/v1/images:annotate", body=body, headers=headers
        )
        answer = validate(_Answer, data, self.name)
        if not answer.responses:
            return []
        first = answer.responses[0]
        if first.error is not None and (first.error.code or first.error.message):
            reason = f"error {first.error.code}: {first.error.message}"[:200]
            raise SearchError(self.name, self.client.redact(reason))
        pages = first.web.pages if first.web is not None else ()
        found: list[ReverseMatch] = []
        for page in pages:
            copies = page.full or page.partial
            if not copies:
                continue  # listed without a matching image: not an appearance
            found.append(
                ReverseMatch(
                    page_url=page.url,
                    title=plain_text(page.page_title),
                    image_url=copies[0].url,
                    provider=self.name,
                    rank=len(found) + 1,
                    kind=MatchKind.EXACT if page.full else MatchKind.PARTIAL,
                )
            )
        return found[: query.limit]
