"""The sources table: one credibility entry per normalised domain (or domain/path)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from sqlite_utils import Database

from pipeline.records.domain import SourceRating, Tier, utcnow
from storage.codec import dt_out
from storage.tx import immediate


class SourceTable:
    """Read and write source ratings."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def upsert_many(self, ratings: Iterable[SourceRating]) -> int:
        """Insert or replace ratings in one transaction; return how many were written."""
        now = dt_out(utcnow())
        rows = [
            {
                "domain": r.domain,
                "tier": r.tier.value,
                "reason": r.reason,
                "origin": r.origin,
                "details": json.dumps(r.details, sort_keys=True, default=str),
                "updated_at": now,
            }
            for r in ratings
        ]
        # Immediate: every process refreshes the seed list when it opens the database, and a
        # deferred transaction that reads the schema first fails at once when another writes.
        with immediate(self.db):
            self.db.table("sources").upsert_all(rows, pk="domain")
        return len(rows)

    def get(self, domain: str) -> SourceRating | None:
        """Return the rating stored for exactly this key."""
        rows = list(self.db.query("SELECT * FROM sources WHERE domain = ?", [domain]))
        return _from_row(rows[0]) if rows else None

    def get_many(self, domains: Iterable[str]) -> dict[str, SourceRating]:
        """Return the ratings stored for exactly these keys."""
        keys = list(dict.fromkeys(domains))
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        rows = self.db.query(f"SELECT * FROM sources WHERE domain IN ({marks})", keys)
        return {row["domain"]: _from_row(row) for row in rows}

    def all(self, *, tier: Tier | None = None) -> list[SourceRating]:
        """Return every rating, optionally of one tier, sorted by domain."""
        if tier is None:
            rows = self.db.query("SELECT * FROM sources ORDER BY domain")
        else:
            rows = self.db.query(
                "SELECT * FROM sources WHERE tier = ? ORDER BY domain", [tier.value]
            )
        return [_from_row(r) for r in rows]

    def count(self) -> int:
        """Return the number of rated sources."""
        return int(self.db.execute("SELECT count(*) FROM sources").fetchone()[0])


def _from_row(row: dict[str, Any]) -> SourceRating:
    return SourceRating(
        domain=row["domain"],
        tier=Tier(row["tier"]),
        reason=row["reason"],
        origin=row["origin"],
        details=json.loads(row["details"]),
    )
