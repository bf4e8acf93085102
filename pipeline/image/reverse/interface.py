"""The reverse image search interface every provider implements, and the records it returns.

A provider turns an `ImageQuery` (a picture, by public URL or by its bytes) into the pages where
the picture appears, each a `ReverseMatch`: the page URL, its title, the URL of the copy of the
image on that page, and the date and source when the provider gives them. Providers speak HTTP
through a `pipeline.search.http.ProviderClient` (the same budgets, backoff, timeouts and key
redaction as web search), raise `SearchError` for every failure, and never fetch the pages or
images they return: the trace step does that through the SSRF-safe fetcher.

What a provider calls a match is not taken on trust: `kind` says what the provider claimed
(an exact copy, a partial copy such as a crop, or only a visually similar picture), and the trace
step hashes every matched image itself before counting it as an appearance.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Protocol

_VERSION = "v1"


class MatchKind(StrEnum):
    """What the provider says the matched picture is to the query."""

    EXACT = "exact"  # the same picture, maybe resized or recompressed
    PARTIAL = "partial"  # shares key points: a crop, an edit
    SIMILAR = "similar"  # only looks alike (never an appearance by itself)


class Carrier(StrEnum):
    """How the picture is sent to a provider."""

    URL = "url"  # the provider fetches the public URL itself
    BYTES = "bytes"  # the image bytes are uploaded


@dataclass(frozen=True)
class ImageQuery:
    """One picture to look up: by its public URL, or by its bytes."""

    image_id: str  # sha256 of the image bytes: the cache key does not depend on the URL
    url: str | None = None  # a public http(s) URL of the image
    data: bytes | None = field(default=None, repr=False)  # the image bytes
    limit: int = 20

    def carriers(self) -> tuple[Carrier, ...]:
        """Return how this picture can be sent, the URL first."""
        found = []
        if self.url:
            found.append(Carrier.URL)
        if self.data:
            found.append(Carrier.BYTES)
        return tuple(found)


@dataclass(frozen=True)
class ReverseMatch:
    """One page on which a provider found the picture."""

    page_url: str
    title: str
    image_url: str | None  # the copy on that page (or the provider's copy of it)
    provider: str
    rank: int  # 1-based position in this provider's answer
    kind: MatchKind = MatchKind.EXACT
    published_at: datetime | None = None  # when the page says it was published
    seen_at: datetime | None = None  # when the provider first saw it there (TinEye's crawl)
    source: str | None = None  # the site's name as the provider gives it
    score: float | None = None  # the provider's own match score, when it gives one


class ReverseImageProvider(Protocol):
    """A reverse image search backend."""

    name: str
    carriers: tuple[Carrier, ...]  # what it accepts, preferred first

    async def search(self, query: ImageQuery) -> list[ReverseMatch]:
        """Return the pages where the picture appears, best first; raise SearchError."""
        ...


def cache_key(provider: str, query: ImageQuery, *, variant: str = "") -> str:
    """Return the cache key of provider's answer for a picture (by content, not by URL)."""
    parts = (_VERSION, "reverse-image", provider, query.image_id, str(query.limit), variant)
    return hashlib.sha256("|".join(parts).encode("utf-8")).hexdigest()
