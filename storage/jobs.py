"""A durable job queue over the jobs table, deduplicated by key.

Workers claim the oldest runnable job atomically; a job that fails is retried with a delay until
its attempts run out. The platform runtime builds on this.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlite_utils import Database

from pipeline.records import new_id, utcnow
from storage.codec import dt_in, dt_out


@dataclass(frozen=True)
class Job:
    """One unit of queued work."""

    id: str
    kind: str
    payload: dict[str, Any]
    status: str
    attempts: int
    dedupe_key: str | None
    result_id: str | None
    last_error: str | None
    created_at: datetime | None


class JobQueue:
    """Enqueue, claim and finish jobs."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def enqueue(
        self, kind: str, payload: dict[str, Any], *, dedupe_key: str | None = None
    ) -> tuple[Job, bool]:
        """Add a job unless one with the same dedupe key exists; return it and whether it is new."""
        now = dt_out(utcnow())
        job_id = new_id()
        with self.db.atomic():
            cursor = self.db.execute(
                "INSERT OR IGNORE INTO jobs "
                "(id, kind, dedupe_key, payload, created_at, updated_at) "
                "VALUES (?,?,?,?,?,?)",
                [job_id, kind, dedupe_key, json.dumps(payload, default=str), now, now],
            )
            created = cursor.rowcount == 1
        if created:
            job = self.get(job_id)
        else:
            row = self.db.execute(
                "SELECT id FROM jobs WHERE dedupe_key = ?", [dedupe_key]
            ).fetchone()
            job = self.get(row[0])
        assert job is not None
        return job, created

    def claim(self, *, kinds: tuple[str, ...] | None = None) -> Job | None:
        """Mark the oldest runnable job as running and return it."""
        now = dt_out(utcnow())
        sql = (
            "SELECT id FROM jobs WHERE status = 'queued' AND (run_after IS NULL OR run_after <= ?)"
        )
        params: list[Any] = [now]
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            params.extend(kinds)
        sql += " ORDER BY created_at LIMIT 1"
        with self.db.atomic():
            row = self.db.execute(sql, params).fetchone()
            if row is None:
                return None
            self.db.execute(
                "UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = ? "
                "WHERE id = ? AND status = 'queued'",
                [now, row[0]],
            )
        return self.get(row[0])

    def finish(self, job_id: str, *, result_id: str | None = None) -> None:
        """Mark a job done."""
        self.db.execute(
            "UPDATE jobs SET status = 'done', result_id = ?, updated_at = ? WHERE id = ?",
            [result_id, dt_out(utcnow()), job_id],
        )

    def fail(
        self, job_id: str, error: str, *, max_attempts: int = 3, retry_in: float = 30.0
    ) -> None:
        """Record a failure; requeue with a delay until attempts run out."""
        job = self.get(job_id)
        if job is None:
            return
        now = utcnow()
        status = "queued" if job.attempts < max_attempts else "failed"
        self.db.execute(
            "UPDATE jobs SET status = ?, last_error = ?, run_after = ?, updated_at = ? "
            "WHERE id = ?",
            [status, error, dt_out(now + timedelta(seconds=retry_in)), dt_out(now), job_id],
        )

    def requeue_stale(self) -> int:
        """Put jobs left running by a crashed worker back in the queue; return how many."""
        cursor = self.db.execute(
            "UPDATE jobs SET status = 'queued', updated_at = ? WHERE status = 'running'",
            [dt_out(utcnow())],
        )
        return int(cursor.rowcount)

    def get(self, job_id: str) -> Job | None:
        """Return one job."""
        rows = list(self.db.query("SELECT * FROM jobs WHERE id = ?", [job_id]))
        if not rows:
            return None
        r = rows[0]
        return Job(
            id=r["id"],
            kind=r["kind"],
            payload=json.loads(r["payload"]),
            status=r["status"],
            attempts=r["attempts"],
            dedupe_key=r["dedupe_key"],
            result_id=r["result_id"],
            last_error=r["last_error"],
            created_at=dt_in(r["created_at"]),
        )
