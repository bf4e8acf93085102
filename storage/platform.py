"""What the platform bots keep: rate-limit buckets, requests, opt-outs, and forgetting them.

Token buckets live in the database so limits survive restarts and hold across worker
processes: a bucket of capacity C refills at R tokens a second; a request takes one token from
every bucket that applies (user, channel, workspace) or from none. `refused_at` marks that the
one friendly refusal of the current empty spell was sent; it clears when a request is admitted.

`platform_requests` has one row a request that became a check: the workspace, the channel,
the requester's and author's pseudonyms, the check and its cost. Budgets count and sum it;
retention redacts what it points to; `forget` deletes everything of a user or a channel.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlite_utils import Database

from pipeline.util.clock import SYSTEM, Clock
from storage.codec import dt_out
from storage.details import redact_check_details
from storage.tx import immediate


@dataclass(frozen=True)
class Bucket:
    """A token bucket: its key, how many tokens it holds at most, how fast it refills."""

    key: str
    capacity: float
    per_second: float


@dataclass(frozen=True)
class Taken:
    """The result of taking a token from buckets."""

    allowed: bool
    empty: str | None = None  # the key of the first bucket that had no token
    first_refusal: bool = False  # no refusal was sent yet in this empty spell


@dataclass(frozen=True)
class PlatformRequestRow:
    """A platform request as stored."""

    id: str
    platform: str
    event_key: str
    workspace_id: str
    channel_id: str
    requester: str
    author: str | None
    message_id: str | None
    post_id: str | None
    check_id: str | None
    check_job_id: str | None
    reply_job_id: str | None
    created_at: str


@dataclass(frozen=True)
class Forgotten:
    """What `forget` deleted."""

    requests: int
    posts: int
    checks: int


class PlatformRepo:
    """Buckets, requests and opt-outs of the platform bots."""

    def __init__(self, db: Database, *, clock: Clock = SYSTEM) -> None:
        self.db = db
        self.clock = clock

    # -- rate limits ---------------------------------------------------------------------

    def take(self, buckets: Sequence[Bucket]) -> Taken:
        """Take one token from every bucket, or from none when one is empty."""
        now = self.clock.now()
        with immediate(self.db, scope="buckets"):  # on PostgreSQL: storage/pg.py
            levels: list[tuple[Bucket, float, str | None]] = []
            for bucket in buckets:
                row = self.db.execute(
                    "SELECT tokens, updated_at, refused_at FROM buckets WHERE key = ?",
                    [bucket.key],
                ).fetchone()
                if row is None:
                    tokens, refused = bucket.capacity, None
                else:
                    elapsed = max(0.0, (now - datetime.fromisoformat(row[1])).total_seconds())
                    tokens = min(bucket.capacity, float(row[0]) + elapsed * bucket.per_second)
                    refused = row[2]
                levels.append((bucket, tokens, refused))
            empty = next(((b, r) for b, t, r in levels if t < 1.0), None)
            stamp = dt_out(now)
            for bucket, tokens, refused in levels:
                left = tokens - 1.0 if empty is None else tokens
                mark = None if empty is None else refused
                if empty is not None and bucket.key == empty[0].key:
                    mark = refused or stamp
                self.db.execute(
                    "INSERT INTO buckets (key, tokens, updated_at, refused_at) VALUES (?,?,?,?) "
                    "ON CONFLICT(key) DO UPDATE SET tokens = excluded.tokens, "
                    "updated_at = excluded.updated_at, refused_at = excluded.refused_at",
                    [bucket.key, left, stamp, mark],
                )
        if empty is None:
            return Taken(allowed=True)
        return Taken(allowed=False, empty=empty[0].key, first_refusal=empty[1] is None)

    # -- requests ------------------------------------------------------------------------

    def add(self, row: dict[str, Any]) -> bool:
        """Store a request (inside the caller's transaction); False when its event is known."""
        cursor = self.db.execute(
            "INSERT OR IGNORE INTO platform_requests (id, platform, event_key, workspace_id, "
            "channel_id, requester, author, message_id, post_id, check_id, check_job_id, "
            "reply_job_id, created_at) VALUES (:id, :platform, :event_key, :workspace_id, "
            ":channel_id, :requester, :author, :message_id, :post_id, :check_id, :check_job_id, "
            ":reply_job_id, :created_at)",
            row,
        )
        return cursor.rowcount == 1

    def find(self, platform: str, event_key: str) -> PlatformRequestRow | None:
        """Return the request stored for an event, if any."""
        rows = list(
            self.db.query(
                "SELECT * FROM platform_requests WHERE platform = ? AND event_key = ?",
                [platform, event_key],
            )
        )
        return _request(rows[0]) if rows else None

    def for_check(self, check_id: str) -> list[PlatformRequestRow]:
        """Return the platform requests that asked for a check, oldest first."""
        rows = self.db.query(
            "SELECT * FROM platform_requests WHERE check_id = ? ORDER BY created_at, id",
            [check_id],
        )
        return [_request(r) for r in rows]

    def record_cost(self, platform: str, event_key: str, cost_usd: float) -> None:
        """Record what the request's check cost."""
        self.db.execute(
            "UPDATE platform_requests SET cost_usd = ? WHERE platform = ? AND event_key = ?",
            [cost_usd, platform, event_key],
        )

    def usage_since(self, platform: str, workspace_id: str, since: datetime) -> tuple[int, float]:
        """Return the checks asked for in a workspace since a time, and what they cost.

        The cost includes what the platform's API billed meanwhile (`api_costs`: X charges
        every post read and written).
        """
        row = self.db.execute(
            "SELECT count(*), coalesce(sum(cost_usd), 0) FROM platform_requests "
            "WHERE platform = ? AND workspace_id = ? AND created_at >= ?",
            [platform, workspace_id, dt_out(since)],
        ).fetchone()
        api = self.db.execute(
            "SELECT coalesce(sum(cost_usd), 0) FROM api_costs "
            "WHERE platform = ? AND workspace_id = ? AND at >= ?",
            [platform, workspace_id, dt_out(since)],
        ).fetchone()
        return int(row[0]), float(row[1]) + float(api[0])

    # -- opt-outs ------------------------------------------------------------------------

    def set_opt_out(self, platform: str, scope: str, subject: str, out: bool) -> None:
        """Opt a user or a channel out of factbot (or back in)."""
        if out:
            self.db.execute(
                "INSERT OR IGNORE INTO optouts (platform, scope, subject, created_at) "
                "VALUES (?,?,?,?)",
                [platform, scope, subject, dt_out(self.clock.now())],
            )
        else:
            self.db.execute(
                "DELETE FROM optouts WHERE platform = ? AND scope = ? AND subject = ?",
                [platform, scope, subject],
            )

    def opted_out(self, platform: str, scope: str, subjects: Sequence[str]) -> bool:
        """Return whether any of the subjects of this scope opted out."""
        if not subjects:
            return False
        marks = ",".join("?" * len(subjects))
        row = self.db.execute(
            f"SELECT 1 FROM optouts WHERE platform = ? AND scope = ? AND subject IN ({marks})",
            [platform, scope, *subjects],
        ).fetchone()
        return row is not None

    # -- retention and forgetting --------------------------------------------------------

    def redact_before(self, cutoff: datetime) -> int:
        """Delete the text and evidence of platform checks asked for before cutoff.

        The check's verdict, its correction (already public in the thread) and its references
        stay; the post's text, links and images, what was read in the images, the evidence
        passages, the claims' text, the judge's rationales, the reuse fingerprint and the jobs'
        payloads go. Returns how many requests were redacted.
        """
        stamp = dt_out(self.clock.now())
        with immediate(self.db):
            rows = self.db.execute(
                "SELECT id, post_id, check_id, check_job_id, reply_job_id FROM platform_requests "
                "WHERE redacted_at IS NULL AND created_at < ?",
                [dt_out(cutoff)],
            ).fetchall()
            for request_id, post_id, check_id, check_job, reply_job in rows:
                if post_id:
                    self.db.execute(
                        "UPDATE posts SET text = '', links = '[]', image_refs = '[]', "
                        "leads = '[]', url = NULL WHERE id = ?",
                        [post_id],
                    )
                if check_id:
                    self.db.execute("DELETE FROM evidence WHERE check_id = ?", [check_id])
                    self.db.execute(
                        "UPDATE claims SET text = '', rationale = '' WHERE check_id = ?",
                        [check_id],
                    )
                    self.db.execute("DELETE FROM reuse_fingerprints WHERE check_id = ?", [check_id])
                    redact_check_details(self.db, check_id)
                for job_id in (check_job, reply_job):
                    if job_id:
                        self.db.execute(
                            "UPDATE jobs SET payload = json_remove(payload, '$.destination') "
                            "WHERE id = ?",
                            [job_id],
                        )
                self.db.execute(
                    "UPDATE platform_requests SET redacted_at = ? WHERE id = ?", [stamp, request_id]
                )
        return len(rows)

    def forget(
        self, platform: str, *, requester: str | None = None, channel_id: str | None = None
    ) -> Forgotten:
        """Delete every request of a user (pseudonym or raw id) or a channel, and their data."""
        if (requester is None) == (channel_id is None):
            raise ValueError("forget a user or a channel, not both or neither")
        params: list[str] = [platform]
        if requester is not None:
            where = "platform = ? AND (requester = ? OR author = ?)"
            params += [requester, requester]
        else:
            assert channel_id is not None
            where = "platform = ? AND channel_id = ?"
            params.append(channel_id)
        with immediate(self.db):
            rows = self.db.execute(
                f"SELECT id, post_id, check_job_id, reply_job_id FROM platform_requests "
                f"WHERE {where}",
                params,
            ).fetchall()
            posts = {r[1] for r in rows if r[1]}
            jobs = {j for r in rows for j in (r[2], r[3]) if j}
            checks = 0
            for post_id in posts:
                ids = [
                    c[0]
                    for c in self.db.execute(
                        "SELECT id FROM checks WHERE post_id = ?", [post_id]
                    ).fetchall()
                ]
                for check_id in ids:
                    for table in ("evidence", "claims", "reuse_fingerprints"):
                        self.db.execute(f"DELETE FROM {table} WHERE check_id = ?", [check_id])
                    self.db.execute("DELETE FROM checks WHERE id = ?", [check_id])
                checks += len(ids)
                jobs |= {
                    j[0]
                    for j in self.db.execute(
                        "SELECT id FROM jobs WHERE post_id = ?", [post_id]
                    ).fetchall()
                }
            for job_id in jobs:
                self.db.execute("DELETE FROM jobs WHERE id = ?", [job_id])
            for post_id in posts:
                self.db.execute("DELETE FROM posts WHERE id = ?", [post_id])
            # An opt-out stays: it is the user's wish to be left alone, kept as a pseudonym.
            self.db.execute(f"DELETE FROM platform_requests WHERE {where}", params)
        return Forgotten(requests=len(rows), posts=len(posts), checks=checks)


def _request(r: dict[str, Any]) -> PlatformRequestRow:
    return PlatformRequestRow(**{name: r[name] for name in PlatformRequestRow.__dataclass_fields__})
