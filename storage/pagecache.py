"""The page cache the fetcher consults before the network (`PageCache`), kept in the database.

Pages are keyed by the URL that was requested; the final URL, status, type, charset, body and
redirects come back as they were fetched, with `from_cache` set.

Failure policy: `StorePageCache` never raises: a database error on read is a miss and on write
a page not kept, both logged.
"""

from __future__ import annotations

import logging
import sqlite3
import zlib
from datetime import timedelta

from pipeline.fetch.fetcher import FetchedPage
from pipeline.records.domain import utcnow
from storage.webcache import CachedPage, WebCache

log = logging.getLogger(__name__)


class StorePageCache:
    """Pages kept in the store's page_cache table for ttl."""

    def __init__(self, web: WebCache, *, ttl: timedelta) -> None:
        self.web = web
        self.ttl = ttl

    def get(self, url: str) -> FetchedPage | None:
        """Return the page fetched from url unless it is missing or expired."""
        try:
            cached = self.web.get_page(url)
        except (sqlite3.Error, zlib.error, ValueError) as exc:
            log.warning("page cache read failed", extra={"url": url, "error": str(exc)})
            return None
        if cached is None:
            return None
        return FetchedPage(
            url=cached.final_url,
            requested_url=url,
            status=cached.status,
            content_type=cached.content_type,
            charset=cached.charset,
            body=cached.body,
            redirects=cached.redirects,
            fetched_at=cached.fetched_at,
            from_cache=True,
        )

    def put(self, page: FetchedPage) -> None:
        """Keep a successful page for ttl from when it was fetched."""
        if not 200 <= page.status < 300:
            return
        record = CachedPage(
            url=page.requested_url,
            final_url=page.url,
            status=page.status,
            content_type=page.content_type,
            charset=page.charset,
            body=page.body,
            redirects=page.redirects,
            fetched_at=page.fetched_at or utcnow(),
        )
        try:
            self.web.put_page(record, ttl=self.ttl)
        except sqlite3.Error as exc:
            log.warning("page cache write failed", extra={"url": page.url, "error": str(exc)})
