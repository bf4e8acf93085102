"""The proactive monitor's tables: the scheduler lease, the candidates, the actions per thread.

Three guarantees live in SQL, not in memory, so restarts and a second process cannot break them:

- one scheduler: `take_lease` succeeds for the holder of an unexpired lease or for anyone once
  it expired, in one immediate transaction (`monitor_lease`);
- a post is a candidate once: `add_candidate` is INSERT OR IGNORE on UNIQUE(platform, post_id);
- a thread is answered once: `take_action` is INSERT OR IGNORE on UNIQUE(platform, thread_key,
  action) — the reply, note or review proposal is enqueued only by the caller that got the row.

Budgets read the candidates: checks started since a time, and money spent since a time (the
recorded cost of finished checks, an estimate for the ones still running).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlite_utils import Database

from pipeline.records.domain import new_id
from pipeline.util.clock import SYSTEM, Clock
from storage.codec import dt_in, dt_out
from storage.details import redact_check_details
from storage.tx import immediate

CHECKING = "checking"  # a check job was started for it
REUSED = "reused"  # answered from a stored check
SKIPPED = "skipped"  # not checked (reason says why: score, budget, author, thread)


@dataclass(frozen=True)
class CandidateRow:
    """One stored candidate and what became of it."""

    id: str
    platform: str
    post_id: str
    source: str
    thread_key: str
    author: str | None
    workspace_id: str
    channel_id: str
    mentions_bot: bool
    score: float
    parts: dict[str, float]
    status: str
    reason: str
    post: dict[str, Any]
    destination: dict[str, Any]
    check_id: str | None
    check_job_id: str | None
    route_job_id: str | None
    cost_usd: float | None
    outcome: str | None
    created_at: datetime
    routed_at: datetime | None


class MonitorRepo:
    """Lease, candidates and actions of the monitor."""

    def __init__(self, db: Database, *, clock: Clock = SYSTEM) -> None:
        self.db = db
        self.clock = clock

    # -- the scheduler lease ------------------------------------------------------------------

    def take_lease(self, name: str, holder: str, *, seconds: float) -> bool:
        """Take or renew the lease for holder; return False while another holds it unexpired."""
        now = self.clock.now()
        until = dt_out(now + timedelta(seconds=seconds))
        with immediate(self.db):
            cursor = self.db.execute(
                "INSERT INTO monitor_lease (name, holder, expires_at, renewed_at) "
                "VALUES (?,?,?,?) ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, "
                "expires_at = excluded.expires_at, renewed_at = excluded.renewed_at "
                "WHERE monitor_lease.holder = excluded.holder OR monitor_lease.expires_at < ?",
                [name, holder, until, dt_out(now), dt_out(now)],
            )
            return cursor.rowcount == 1

    def holds_lease(self, name: str, holder: str) -> bool:
        """Return whether holder holds the unexpired lease now."""
        row = self.db.execute(
            "SELECT holder, expires_at FROM monitor_lease WHERE name = ?", [name]
        ).fetchone()
        if row is None:
            return False
        expires = dt_in(row[1])
        return row[0] == holder and expires is not None and expires >= self.clock.now()

    def release_lease(self, name: str, holder: str) -> None:
        """Give the lease up at once (a clean stop), so a standby need not wait for it to lapse."""
        self.db.execute("DELETE FROM monitor_lease WHERE name = ? AND holder = ?", [name, holder])

    # -- candidates ---------------------------------------------------------------------------

    def known(self, platform: str, post_id: str) -> bool:
        """Return whether the post is already a candidate."""
        row = self.db.execute(
            "SELECT 1 FROM monitor_candidates WHERE platform = ? AND post_id = ?",
            [platform, post_id],
        ).fetchone()
        return row is not None

    def add_candidate(self, row: dict[str, Any]) -> bool:
        """Store a candidate row unless its post is one already; return whether it was new."""
        values = {
            **row,
            "parts": json.dumps(row.get("parts") or {}),
            "post": json.dumps(row["post"], default=str),
            "destination": json.dumps(row["destination"], default=str),
            "mentions_bot": int(bool(row.get("mentions_bot"))),
            "created_at": dt_out(row.get("created_at") or self.clock.now()),
        }
        columns = ", ".join(values)
        marks = ",".join("?" * len(values))
        cursor = self.db.execute(
            f"INSERT OR IGNORE INTO monitor_candidates ({columns}) VALUES ({marks})",
            list(values.values()),
        )
        return cursor.rowcount == 1

    def candidate(self, candidate_id: str) -> CandidateRow | None:
        """Return one candidate."""
        rows = list(self.db.query("SELECT * FROM monitor_candidates WHERE id = ?", [candidate_id]))
        return _candidate(rows[0]) if rows else None

    def candidates(self, *, status: str | None = None, limit: int = 100) -> list[CandidateRow]:
        """Return the newest candidates, optionally of one status."""
        sql, params = "SELECT * FROM monitor_candidates", []
        if status is not None:
            sql, params = sql + " WHERE status = ?", [status]
        rows = self.db.query(sql + " ORDER BY created_at DESC, id LIMIT ?", [*params, limit])
        return [_candidate(r) for r in rows]

    def set_route_job(self, candidate_id: str, job_id: str) -> None:
        """Record the routing job of a candidate."""
        self.db.execute(
            "UPDATE monitor_candidates SET route_job_id = ? WHERE id = ?", [job_id, candidate_id]
        )

    def routed(self, candidate_id: str, outcome: str, *, cost_usd: float | None) -> None:
        """Record what routing did with a candidate, and its check's recorded cost."""
        self.db.execute(
            "UPDATE monitor_candidates SET outcome = ?, cost_usd = coalesce(?, cost_usd), "
            "routed_at = ? WHERE id = ?",
            [outcome, cost_usd, dt_out(self.clock.now()), candidate_id],
        )

    def checks_started(self, since: datetime) -> int:
        """Return how many checks the monitor started since a time."""
        row = self.db.execute(
            "SELECT count(*) FROM monitor_candidates WHERE status = ? AND created_at >= ?",
            [CHECKING, dt_out(since)],
        ).fetchone()
        return int(row[0])

    def spent(self, since: datetime, *, estimate: float) -> float:
        """Return the money of the checks started since a time: recorded, else estimated."""
        row = self.db.execute(
            "SELECT coalesce(sum(coalesce(cost_usd, ?)), 0) FROM monitor_candidates "
            "WHERE status = ? AND created_at >= ?",
            [estimate, CHECKING, dt_out(since)],
        ).fetchone()
        return float(row[0])

    def recorded_cost(self, since: datetime) -> float:
        """Return the recorded cost of the monitor's finished checks since a time."""
        row = self.db.execute(
            "SELECT coalesce(sum(cost_usd), 0) FROM monitor_candidates "
            "WHERE status = ? AND created_at >= ? AND cost_usd IS NOT NULL",
            [CHECKING, dt_out(since)],
        ).fetchone()
        return float(row[0])

    def counts(self) -> dict[str, int]:
        """Return how many candidates have each status (and reason, for skipped ones)."""
        rows = self.db.execute(
            "SELECT CASE WHEN status = ? THEN status || ': ' || reason ELSE status END, count(*) "
            "FROM monitor_candidates GROUP BY 1",
            [SKIPPED],
        ).fetchall()
        return {str(k): int(v) for k, v in rows}

    def redact_before(self, cutoff: datetime) -> int:
        """Delete the text of candidates found before cutoff (and of their stored posts).

        The score, the status and what routing did stay; the post's text, links and images go,
        from the candidate row and from the posts table, and what was read in the images from
        the checks of those posts. Returns how many were redacted.
        """
        with immediate(self.db):
            rows = self.db.execute(
                "SELECT id, platform, post_id FROM monitor_candidates WHERE created_at < ? "
                "AND json_extract(post, '$.text') != ''",
                [dt_out(cutoff)],
            ).fetchall()
            for candidate_id, platform, post_id in rows:
                # Edited here, not by SQL JSON functions: the same on both engines.
                (raw,) = self.db.execute(
                    "SELECT post FROM monitor_candidates WHERE id = ?", [candidate_id]
                ).fetchone()
                post = {**json.loads(raw), "text": "", "links": [], "image_refs": [], "url": None}
                post["leads"] = []
                self.db.execute(
                    "UPDATE monitor_candidates SET post = ? WHERE id = ?",
                    [json.dumps(post), candidate_id],
                )
                self.db.execute(
                    "UPDATE posts SET text = '', links = '[]', image_refs = '[]', leads = '[]', "
                    "url = NULL "
                    "WHERE platform = ? AND platform_id = ?",
                    [platform, post_id],
                )
                for (check_id,) in self.db.execute(
                    "SELECT c.id FROM checks AS c JOIN posts AS p ON p.id = c.post_id "
                    "WHERE p.platform = ? AND p.platform_id = ?",
                    [platform, post_id],
                ).fetchall():
                    redact_check_details(self.db, check_id)  # text read in its images
        return len(rows)

    # -- actions ------------------------------------------------------------------------------

    def take_action(
        self,
        platform: str,
        thread_key: str,
        action: str,
        *,
        route: str,
        candidate_id: str,
        author: str | None,
        job_id: str | None = None,
    ) -> bool:
        """Record an action in a thread unless it was taken there already; return whether new."""
        cursor = self.db.execute(
            "INSERT OR IGNORE INTO monitor_actions (id, platform, thread_key, action, route, "
            "candidate_id, author, job_id, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
            [
                new_id(),
                platform,
                thread_key,
                action,
                route,
                candidate_id,
                author,
                job_id,
                dt_out(self.clock.now()),
            ],
        )
        return cursor.rowcount == 1

    def set_action_job(self, platform: str, thread_key: str, action: str, job_id: str) -> None:
        """Record the job that carries out an action."""
        self.db.execute(
            "UPDATE monitor_actions SET job_id = ? WHERE platform = ? AND thread_key = ? "
            "AND action = ?",
            [job_id, platform, thread_key, action],
        )

    def action_taken(self, platform: str, thread_key: str, action: str) -> bool:
        """Return whether the action was taken in the thread."""
        row = self.db.execute(
            "SELECT 1 FROM monitor_actions WHERE platform = ? AND thread_key = ? AND action = ?",
            [platform, thread_key, action],
        ).fetchone()
        return row is not None

    def author_actions(self, platform: str, author: str, action: str, since: datetime) -> int:
        """Return how many times the action was taken towards an author since a time."""
        row = self.db.execute(
            "SELECT count(*) FROM monitor_actions WHERE platform = ? AND author = ? "
            "AND action = ? AND created_at >= ?",
            [platform, author, action, dt_out(since)],
        ).fetchone()
        return int(row[0])

    def actions(self, *, route: str | None = None) -> list[dict[str, Any]]:
        """Return every action, oldest first (optionally of one route)."""
        sql, params = "SELECT * FROM monitor_actions", []
        if route is not None:
            sql, params = sql + " WHERE route = ?", [route]
        return list(self.db.query(sql + " ORDER BY created_at, id", params))


def _candidate(r: dict[str, Any]) -> CandidateRow:
    created = dt_in(r["created_at"])
    assert created is not None
    return CandidateRow(
        id=r["id"],
        platform=r["platform"],
        post_id=r["post_id"],
        source=r["source"],
        thread_key=r["thread_key"],
        author=r["author"],
        workspace_id=r["workspace_id"],
        channel_id=r["channel_id"],
        mentions_bot=bool(r["mentions_bot"]),
        score=float(r["score"]),
        parts=json.loads(r["parts"]),
        status=r["status"],
        reason=r["reason"],
        post=json.loads(r["post"]),
        destination=json.loads(r["destination"]),
        check_id=r["check_id"],
        check_job_id=r["check_job_id"],
        route_job_id=r["route_job_id"],
        cost_usd=r["cost_usd"],
        outcome=r["outcome"],
        created_at=created,
        routed_at=dt_in(r["routed_at"]),
    )
