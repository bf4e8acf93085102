"""The reply ledger: at most one reply per (platform, target post, kind), whatever happens.

A reply is reserved *before* the platform call and marked sent after it:

    reserve ──> pending ──mark_sent──> sent
                   │
                   └──mark_failed──> failed ──reserve (a later attempt)──> pending

`reserve` succeeds only for a key that has no reply yet, or whose last attempt failed for sure
(the platform refused it before posting). A `pending` reply whose sender crashed stays pending:
factbot cannot know whether the platform posted it, so it never sends it again on its own (an
operator can look at it); that is what makes retries, redeliveries and restarts safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlite_utils import Database

from pipeline.records.domain import new_id
from pipeline.util.clock import SYSTEM, Clock
from storage.codec import dt_in, dt_out
from storage.tx import immediate


@dataclass(frozen=True)
class Reply:
    """A reply factbot posted, is posting, or failed to post."""

    id: str
    platform: str
    target_id: str
    kind: str
    check_id: str | None
    job_id: str | None
    status: str  # pending, sent or failed
    platform_reply_id: str | None
    error: str | None
    created_at: datetime | None
    updated_at: datetime | None


class ReplyLedger:
    """Reserve, confirm and look up replies."""

    def __init__(self, db: Database, *, clock: Clock = SYSTEM) -> None:
        self.db = db
        self.clock = clock

    def reserve(
        self,
        platform: str,
        target_id: str,
        kind: str,
        *,
        check_id: str | None = None,
        job_id: str | None = None,
    ) -> Reply | None:
        """Reserve the reply for this key; return it, or None when one exists (do not send)."""
        now = dt_out(self.clock.now())
        with immediate(self.db):
            row = self.db.execute(
                "SELECT id, status FROM replies WHERE platform = ? AND target_id = ? AND kind = ?",
                [platform, target_id, kind],
            ).fetchone()
            if row is None:
                reply_id = new_id()
                self.db.execute(
                    "INSERT INTO replies (id, platform, target_id, kind, check_id, job_id, "
                    "status, created_at, updated_at) VALUES (?,?,?,?,?,?,'pending',?,?)",
                    [reply_id, platform, target_id, kind, check_id, job_id, now, now],
                )
            elif row[1] == "failed":
                reply_id = row[0]
                self.db.execute(
                    "UPDATE replies SET status = 'pending', check_id = ?, job_id = ?, "
                    "error = NULL, updated_at = ? WHERE id = ?",
                    [check_id, job_id, now, reply_id],
                )
            else:
                return None
        return self.get(reply_id)

    def mark_sent(self, reply_id: str, *, platform_reply_id: str | None = None) -> None:
        """Record that the platform accepted the reply."""
        self.db.execute(
            "UPDATE replies SET status = 'sent', platform_reply_id = ?, updated_at = ? "
            "WHERE id = ?",
            [platform_reply_id, dt_out(self.clock.now()), reply_id],
        )

    def mark_failed(self, reply_id: str, error: str) -> None:
        """Record that the platform surely did not post the reply (a later attempt may)."""
        self.db.execute(
            "UPDATE replies SET status = 'failed', error = ?, updated_at = ? WHERE id = ?",
            [error[:2000], dt_out(self.clock.now()), reply_id],
        )

    def get(self, reply_id: str) -> Reply | None:
        """Return one reply."""
        rows = list(self.db.query("SELECT * FROM replies WHERE id = ?", [reply_id]))
        return _reply(rows[0]) if rows else None

    def for_check(self, check_id: str) -> list[Reply]:
        """Return the replies that carried a check, oldest first."""
        rows = self.db.query(
            "SELECT * FROM replies WHERE check_id = ? ORDER BY created_at, id", [check_id]
        )
        return [_reply(r) for r in rows]

    def find(self, platform: str, target_id: str, kind: str) -> Reply | None:
        """Return the reply for a key, if any."""
        rows = list(
            self.db.query(
                "SELECT * FROM replies WHERE platform = ? AND target_id = ? AND kind = ?",
                [platform, target_id, kind],
            )
        )
        return _reply(rows[0]) if rows else None


def _reply(r: dict[str, object]) -> Reply:
    return Reply(
        id=str(r["id"]),
        platform=str(r["platform"]),
        target_id=str(r["target_id"]),
        kind=str(r["kind"]),
        check_id=_opt(r["check_id"]),
        job_id=_opt(r["job_id"]),
        status=str(r["status"]),
        platform_reply_id=_opt(r["platform_reply_id"]),
        error=_opt(r["error"]),
        created_at=dt_in(_opt(r["created_at"])),
        updated_at=dt_in(_opt(r["updated_at"])),
    )


def _opt(value: object) -> str | None:
    return None if value is None else str(value)
