"""The review queue's tables: proposed corrections and the one decision each gets.

Lifecycle of a proposal (the `status` column):

    pending ──decide(approve/edit)──> approved ──the reply job posted it──> posted
       │                                  └──the reply job died──> failed
       ├──decide(reject)──> rejected
       ├──its check failed──> failed
       └──too old to decide (an operator's setting)──> expired

"Exactly once, whoever clicks": `decide` is one immediate transaction whose conditional UPDATE
(`WHERE status = 'pending'`) lets one caller through; the UNIQUE `proposal_id` of
`review_decisions` backs it. What the winning decision starts (the reply job) is written by
the caller's `then` inside that same transaction, so a decision without its job, or a job
without its decision, cannot be committed. Every other caller gets the first decision back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlite_utils import Database

from pipeline.records.domain import new_id
from pipeline.util.clock import SYSTEM, Clock
from storage.codec import dt_in, dt_out
from storage.tx import immediate

STATUSES = ("pending", "approved", "rejected", "posted", "failed", "expired")
ACTIONS = ("approve", "edit", "reject")


@dataclass(frozen=True)
class Decision:
    """What a reviewer decided about a proposal, and when."""

    id: str
    proposal_id: str
    action: str  # approve, edit (approved with an edited text) or reject
    reviewer: str  # a platform user's pseudonym, or the operator's login name
    at: datetime
    text: str | None = None  # the edited text (edit only)
    reason: str = ""  # why it was rejected (reject only; may be empty)


@dataclass(frozen=True)
class Proposal:
    """A correction factbot proposes to post, waiting for (or past) a human's decision."""

    id: str
    key: str  # the proposer's natural key, e.g. "monitor:<platform>:<post id>"
    check_id: str
    check_job_id: str | None
    platform: str  # where the correction would be posted
    destination: dict[str, Any]  # Destination.to_json() with the private part left out
    private: dict[str, str]  # the destination's private part; {} once posted or rejected
    reason: str  # why it needs a human (e.g. "X does not allow unsolicited replies")
    text: str | None  # the proposed correction as plain text (None until the check ended)
    status: str
    reply_job_id: str | None
    card_job_id: str | None
    card_platform: str | None
    card_message_id: str | None  # the message showing it in the review channel
    error: str | None
    created_at: datetime
    updated_at: datetime
    decision: Decision | None = None


class ReviewRepo:
    """Store proposals and decide them once."""

    def __init__(self, db: Database, *, clock: Clock = SYSTEM) -> None:
        self.db = db
        self.clock = clock

    def _now(self) -> str:
        return dt_out(self.clock.now()) or ""

    def add(
        self,
        *,
        key: str,
        check_id: str,
        check_job_id: str | None,
        platform: str,
        destination: dict[str, Any],
        private: dict[str, str],
        reason: str,
        text: str | None = None,
    ) -> tuple[Proposal, bool]:
        """Store a proposal unless one has this key; return it and whether it is new."""
        now = self._now()
        with immediate(self.db):
            cursor = self.db.execute(
                "INSERT OR IGNORE INTO review_proposals (id, key, check_id, check_job_id, "
                "platform, destination, private, reason, text, created_at, updated_at) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                [
                    new_id(),
                    key,
                    check_id,
                    check_job_id,
                    platform,
                    json.dumps(destination),
                    json.dumps(private),
                    reason,
                    text,
                    now,
                    now,
                ],
            )
            found = self.by_key(key)
        assert found is not None
        return found, cursor.rowcount == 1

    def get(self, proposal_id: str) -> Proposal | None:
        """Return one proposal with its decision, or None."""
        rows = list(self.db.query("SELECT * FROM review_proposals WHERE id = ?", [proposal_id]))
        return self._proposal(rows[0]) if rows else None

    def by_key(self, key: str) -> Proposal | None:
        """Return the proposal stored under a proposer's key, or None."""
        rows = list(self.db.query("SELECT * FROM review_proposals WHERE key = ?", [key]))
        return self._proposal(rows[0]) if rows else None

    def list(
        self, *, status: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[Proposal]:
        """Return proposals, oldest first, optionally of one status."""
        sql, params = "SELECT * FROM review_proposals", []
        if status is not None:
            sql, params = sql + " WHERE status = ?", [status]
        sql += " ORDER BY created_at, id LIMIT ? OFFSET ?"
        return [self._proposal(r) for r in self.db.query(sql, [*params, limit, offset])]

    def decision(self, proposal_id: str) -> Decision | None:
        """Return the decision made about a proposal, or None."""
        rows = list(
            self.db.query("SELECT * FROM review_decisions WHERE proposal_id = ?", [proposal_id])
        )
        return _decision(rows[0]) if rows else None

    def decide(
        self,
        proposal_id: str,
        *,
        action: str,
        reviewer: str,
        status: str,
        text: str | None = None,
        reason: str = "",
        then: Callable[[Decision], dict[str, Any]] | None = None,
    ) -> tuple[Decision, bool]:
        """Decide a pending proposal; return the decision that stands and whether it is this one.

        `then` runs in the same transaction when this decision wins; the columns it returns
        (e.g. `reply_job_id`) are set on the proposal. A rejection deletes the destination's
        private part. A proposal already decided returns the first decision, and writes nothing.
        """
        if action not in ACTIONS or status not in STATUSES:
            raise ValueError(f"unknown review action {action!r} or status {status!r}")
        now = self.clock.now()
        decision = Decision(new_id(), proposal_id, action, reviewer, now, text=text, reason=reason)
        with immediate(self.db):
            cursor = self.db.execute(
                "UPDATE review_proposals SET status = ?, updated_at = ?, "
                "private = CASE WHEN ? = 'rejected' THEN '{}' ELSE private END "
                "WHERE id = ? AND status = 'pending'",
                [status, dt_out(now), status, proposal_id],
            )
            if cursor.rowcount == 1:
                self.db.execute(
                    "INSERT INTO review_decisions (id, proposal_id, action, reviewer, text, "
                    "reason, at) VALUES (?,?,?,?,?,?,?)",
                    [decision.id, proposal_id, action, reviewer, text, reason, dt_out(now)],
                )
                if then is not None:
                    self.update(proposal_id, **then(decision))
                return decision, True
        first = self.decision(proposal_id)
        if first is None:  # not pending, yet undecided: failed or expired before anyone chose
            raise LookupError(proposal_id)
        return first, False

    def update(self, proposal_id: str, **columns: Any) -> None:
        """Set columns of a proposal (text, card ids, job ids, error)."""
        if not columns:
            return
        allowed = {
            "text", "reply_job_id", "card_job_id", "card_platform", "card_message_id", "error",
        }  # fmt: skip
        unknown = set(columns) - allowed
        if unknown:
            raise ValueError(f"not a settable proposal column: {sorted(unknown)}")
        sets = ", ".join(f"{name} = ?" for name in columns)
        self.db.execute(
            f"UPDATE review_proposals SET {sets}, updated_at = ? WHERE id = ?",
            [*columns.values(), self._now(), proposal_id],
        )

    def set_text_if_missing(self, proposal_id: str, text: str) -> None:
        """Store the proposed text unless one is stored."""
        self.db.execute(
            "UPDATE review_proposals SET text = ?, updated_at = ? WHERE id = ? AND text IS NULL",
            [text, self._now(), proposal_id],
        )

    def move(
        self, proposal_id: str, *, before: tuple[str, ...], after: str, error: str | None = None
    ) -> bool:
        """Move a proposal from one of `before` statuses to `after`; return whether it moved.

        Posted, rejected, failed and expired proposals lose the destination's private part.
        """
        if after not in STATUSES:
            raise ValueError(f"unknown proposal status {after!r}")
        marks = ",".join("?" * len(before))
        clear = ", private = '{}'" if after != "approved" else ""
        cursor = self.db.execute(
            f"UPDATE review_proposals SET status = ?, error = coalesce(?, error), "
            f"updated_at = ?{clear} WHERE id = ? AND status IN ({marks})",
            [after, error, self._now(), proposal_id, *before],
        )
        return cursor.rowcount == 1

    def counts(self) -> dict[str, int]:
        """Return how many proposals are in each status."""
        found = dict(
            self.db.execute(
                "SELECT status, count(*) FROM review_proposals GROUP BY status"
            ).fetchall()
        )
        return {status: int(found.get(status, 0)) for status in STATUSES}

    def _proposal(self, r: dict[str, Any]) -> Proposal:
        created = dt_in(r["created_at"])
        updated = dt_in(r["updated_at"])
        assert created is not None and updated is not None
        return Proposal(
            id=r["id"],
            key=r["key"],
            check_id=r["check_id"],
            check_job_id=r["check_job_id"],
            platform=r["platform"],
            destination=json.loads(r["destination"]),
            private=json.loads(r["private"] or "{}"),
            reason=r["reason"],
            text=r["text"],
            status=r["status"],
            reply_job_id=r["reply_job_id"],
            card_job_id=r["card_job_id"],
            card_platform=r["card_platform"],
            card_message_id=r["card_message_id"],
            error=r["error"],
            created_at=created,
            updated_at=updated,
            decision=self.decision(r["id"]),
        )


def _decision(r: dict[str, Any]) -> Decision:
    at = dt_in(r["at"])
    assert at is not None
    return Decision(
        id=r["id"],
        proposal_id=r["proposal_id"],
        action=r["action"],
        reviewer=r["reviewer"],
        at=at,
        text=r["text"],
        reason=r["reason"] or "",
    )
