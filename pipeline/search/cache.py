"""Search cache keys (the results are stored as their records' JSON: `pipeline.records.codec`).

A provider's answer to a query is cached under sha256 of the provider name, the normalised query
text (lower-case, whitespace collapsed), the sorted sites, the `before` bound (UTC, ISO 8601),
the limit and the language, so two spellings of one query share an entry and any parameter that
changes the answer gets its own. A `v1` prefix lets a change of the stored form start afresh.
"""

from __future__ import annotations

import hashlib

from pipeline.search.base import SearchQuery
from pipeline.util.dates import to_utc

_VERSION = "v1"


def normalise_text(text: str) -> str:
    """Return text lower-cased with its whitespace collapsed."""
    return " ".join(text.lower().split())


def cache_key(provider: str, query: SearchQuery) -> str:
    """Return the cache key of provider's answer to query."""
    parts = (
        _VERSION,
        provider,
        normalise_text(query.text),
        ",".join(sorted({site.strip().lower() for site in query.sites})),
        to_utc(query.before).isoformat() if query.before is not None else "",
        str(query.limit),
        (query.language or "").lower(),
    )
    return hashlib.sha256("|".join(parts).encode("utf-8")).hexdigest()
