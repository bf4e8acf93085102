"""Caches of the live web, each entry with an expiry: search responses, fetched pages and
reachability checks of cited URLs. Expired entries are ignored on read and purged on demand.

Every reading of the time comes from the injected `Clock`, so tests expire entries by moving a
clock instead of sleeping or back-dating rows.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlite_utils import Database

from pipeline.records.domain import Reachability
from pipeline.util.clock import SYSTEM, Clock
from storage.codec import dt_in, dt_out
from storage.tx import immediate


def _replace_sql(table: str, key: str, columns: tuple[str, ...]) -> str:
    """An insert that replaces the row with the same key (SQLite and PostgreSQL alike)."""
    sets = ", ".join(f"{c} = excluded.{c}" for c in columns if c != key)
    marks = ",".join("?" for _ in columns)
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}) "
        f"ON CONFLICT({key}) DO UPDATE SET {sets}"
    )


_PUT_SEARCH_CACHE = _replace_sql(
    "search_cache",
    "key",
    ("key", "provider", "query", "before", "results", "created_at", "expires_at"),
)
_PUT_PAGE_CACHE = _replace_sql(
    "page_cache",
    "url",
    (
        "url",
        "final_url",
        "status",
        "content_type",
        "charset",
        "body",
        "redirects",
        "fetched_at",
        "expires_at",
    ),
)
_PUT_URL_CHECKS = _replace_sql(
    "url_checks", "url", ("url", "reachable", "reason", "checked_at", "expires_at")
)


@dataclass(frozen=True)
class CachedPage:
    """A fetched page as stored (the body is kept compressed on disk)."""

    url: str
    final_url: str
    status: int
    content_type: str
    charset: str | None
    body: bytes
    redirects: tuple[str, ...]
    fetched_at: datetime


class WebCache:
    """Search, page and reachability caches in one database."""

    def __init__(self, db: Database, *, clock: Clock = SYSTEM) -> None:
        self.db = db
        self.clock = clock

    def _now(self) -> str | None:
        return dt_out(self.clock.now())

    def _expiry(self, since: datetime, ttl: timedelta) -> str | None:
        """Return when an entry observed at since expires: ttl later."""
        # Counted from no later than now: a timestamp from the future (or from another clock)
        # must not keep an entry alive past ttl from now.
        aware = since if since.tzinfo is not None else since.replace(tzinfo=UTC)
        return dt_out(min(aware, self.clock.now()) + ttl)

    def get_search(self, key: str) -> list[dict[str, Any]] | None:
        """Return the cached results for key unless they expired."""
        row = self.db.execute(
            "SELECT results FROM search_cache WHERE key = ? AND expires_at > ?",
            [key, self._now()],
        ).fetchone()
        return json.loads(row[0]) if row else None

    def put_search(
        self,
        key: str,
        *,
        provider: str,
        query: str,
        before: datetime | None,
        results: list[dict[str, Any]],
        ttl: timedelta,
    ) -> None:
        """Store results for key for ttl."""
        now = self.clock.now()
        self.db.execute(
            _PUT_SEARCH_CACHE,
            [
                key,
                provider,
                query,
                dt_out(before),
                json.dumps(results, default=str),
                dt_out(now),
                dt_out(now + ttl),
            ],
        )

    def get_page(self, url: str) -> CachedPage | None:
        """Return the cached page fetched from url unless it expired."""
        rows = list(
            self.db.query(
                "SELECT * FROM page_cache WHERE url = ? AND expires_at > ?",
                [url, self._now()],
            )
        )
        if not rows:
            return None
        r = rows[0]
        return CachedPage(
            url=r["url"],
            final_url=r["final_url"],
            status=r["status"],
            content_type=r["content_type"],
            charset=r["charset"],
            body=zlib.decompress(r["body"]),
            redirects=tuple(json.loads(r["redirects"])),
            fetched_at=dt_in(r["fetched_at"]) or self.clock.now(),
        )

    def put_page(self, page: CachedPage, *, ttl: timedelta) -> None:
        """Store a fetched page for ttl."""
        self.db.execute(
            _PUT_PAGE_CACHE,
            [
                page.url,
                page.final_url,
                page.status,
                page.content_type,
                page.charset,
                zlib.compress(page.body, 6),
                json.dumps(list(page.redirects)),
                dt_out(page.fetched_at),
                self._expiry(page.fetched_at, ttl),
            ],
        )

    def get_reachability(self, url: str) -> Reachability | None:
        """Return the last reachability check of url unless it expired."""
        row = self.db.execute(
            "SELECT reachable, reason, checked_at FROM url_checks WHERE url = ? AND expires_at > ?",
            [url, self._now()],
        ).fetchone()
        if row is None:
            return None
        return Reachability(url, bool(row[0]), row[1], dt_in(row[2]) or self.clock.now())

    def put_reachability(self, check: Reachability, *, ttl: timedelta) -> None:
        """Store a reachability check for ttl."""
        self.db.execute(
            _PUT_URL_CHECKS,
            [
                check.url,
                int(check.reachable),
                check.reason,
                dt_out(check.checked_at),
                self._expiry(check.checked_at, ttl),
            ],
        )

    def purge_expired(self) -> int:
        """Delete expired entries of every cache; return how many."""
        now = self._now()
        removed = 0
        with immediate(self.db, scope="web"):
            for table in ("search_cache", "page_cache", "url_checks"):
                cursor = self.db.execute(f"DELETE FROM {table} WHERE expires_at <= ?", [now])
                removed += int(cursor.rowcount)
        return removed
