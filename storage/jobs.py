"""The durable job queue: jobs claimed with a lease, kept alive by heartbeats, retried, then dead.

Lifecycle of a job (the `status` column):

    queued ──claim──> running ──complete──> done
      ▲                  │ ├──fail (attempts left)──> queued (run_after = now + backoff)
      │                  │ └──fail (no attempts left, or a permanent error)──> dead
      └──release─────────┤   (a worker stopping hands its job back; the attempt is not counted)
                         └──lease expires (the worker died)──> claimed again by the next worker,
                             or dead when its attempts are spent

Every transition is one SQL statement or one transaction, so two worker processes on one
database never run the same lease: `claim` picks and takes a job in a single UPDATE, and the
statements that end a job (`complete`, `fail`, `release`) only act while the caller still holds
the lease (same owner, same attempt). `complete` stores the result in the same transaction that
marks the job done, so a result is written at most once per job, whatever crashes or restarts.

Time comes from a `Clock`, so tests expire leases and back-off delays without sleeping.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlite_utils import Database

from pipeline.records.domain import MAX_LEADS, Post, new_id
from pipeline.util.clock import SYSTEM, Clock
from storage.codec import dt_in, dt_out, post_from_row, post_row
from storage.tx import immediate

STATUSES = ("queued", "running", "done", "dead")

# A job a worker may take now: queued and due, the job it waits for (if any) done or dead; or
# running with an expired lease (its worker died). Parameters: now, now.
_RUNNABLE = (
    "((status = 'queued' AND (run_after IS NULL OR run_after <= ?) AND "
    "(waits_for IS NULL OR (SELECT w.status FROM jobs w WHERE w.id = jobs.waits_for) "
    "IN ('done', 'dead'))) OR (status = 'running' AND lease_expires_at < ?))"
)
_TAKE = (
    "UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_owner = ?, "
    "lease_expires_at = ?, started_at = ?, updated_at = ? "
)


@dataclass(frozen=True)
class Job:
    """One unit of queued work."""

    id: str
    kind: str
    payload: dict[str, Any]
    status: str
    attempts: int
    max_attempts: int
    dedupe_key: str | None
    post_id: str | None
    result_id: str | None
    last_error: str | None
    lease_owner: str | None
    lease_expires_at: datetime | None
    run_after: datetime | None
    created_at: datetime | None
    started_at: datetime | None  # when the current (or last) attempt was claimed
    finished_at: datetime | None
    waits_for: str | None = None  # a job that must be done or dead before this one runs
    updated_at: datetime | None = None  # the last change of any kind (a queue engine's marker)


@dataclass(frozen=True)
class JobEvent:
    """One step of a job's progress: a stage started or ended, or the job changed status."""

    seq: int
    job_id: str
    stage: str
    status: str  # "started", "done", or a job status ("running", "done", "dead", "queued")
    at: datetime
    detail: dict[str, Any]


@dataclass(frozen=True)
class Backoff:
    """Delay before attempt n+1 after n failures: initial * factor**(n-1), at most maximum."""

    initial: float = 5.0
    factor: float = 4.0
    maximum: float = 600.0

    def delay(self, failures: int) -> float:
        """Return the seconds to wait after this many failures."""
        return float(min(self.maximum, self.initial * self.factor ** max(0, failures - 1)))


class LeaseLostError(Exception):
    """The caller no longer holds the job's lease (it expired and another worker took it)."""


class JobQueue:
    """Enqueue, claim, heartbeat and end jobs."""

    def __init__(self, db: Database, *, clock: Clock = SYSTEM) -> None:
        self.db = db
        self.clock = clock
        self.pg = getattr(db, "dialect", "sqlite") == "postgresql"

    def _row_tx(self) -> AbstractContextManager[Any]:
        """The transaction of a claim or a job's end: immediate on SQLite; on PostgreSQL a plain
        one, since each of their statements re-checks its row under the row's lock (and the
        claim skips rows another claimer holds), so they need not wait for every other writer."""
        return self.db.atomic() if self.pg else immediate(self.db)

    def _now(self) -> str:
        return dt_out(self.clock.now()) or ""

    def enqueue(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        dedupe_key: str | None = None,
        post: Post | None = None,
        max_attempts: int = 3,
        waits_for: str | None = None,
    ) -> tuple[Job, bool]:
        """Store a job (and its post) unless its dedupe key exists; return it and whether it is new.

        The post is stored first in the same transaction, so an acknowledged request always has
        both; a replayed dedupe key stores neither. A post already stored under the same
        platform key is reused, not duplicated.
        A job that `waits_for` another is not claimed before that one is done or dead.
        """
        now = self._now()
        job_id = new_id()
        with immediate(self.db):
            if dedupe_key is not None:  # a replay: nothing stored, not even its post
                row = self.db.execute(
                    "SELECT id FROM jobs WHERE dedupe_key = ?", [dedupe_key]
                ).fetchone()
                if row is not None:
                    return self._existing(row[0]), False
            post_id = self._store_post(post) if post is not None else None
            cursor = self.db.execute(
                "INSERT OR IGNORE INTO jobs (id, kind, dedupe_key, payload, created_at, "
                "updated_at, max_attempts, post_id, waits_for) VALUES (?,?,?,?,?,?,?,?,?)",
                [
                    job_id,
                    kind,
                    dedupe_key,
                    json.dumps(payload, default=str),
                    now,
                    now,
                    max_attempts,
                    post_id,
                    waits_for,
                ],
            )
            created = cursor.rowcount == 1
            if not created:
                row = self.db.execute(
                    "SELECT id FROM jobs WHERE dedupe_key = ?", [dedupe_key]
                ).fetchone()
                job_id = row[0]
            else:
                self._event(job_id, "job", "queued", {}, now)
        job = self.get(job_id)
        assert job is not None
        return job, created

    def _existing(self, job_id: str) -> Job:
        job = self.get(job_id)
        assert job is not None
        return job

    def _store_post(self, post: Post) -> str:
        row = self.db.execute(
            "SELECT id FROM posts WHERE platform = ? AND platform_id = ?",
            [post.platform, post.platform_id],
        ).fetchone()
        if row is not None:
            if post.leads:
                self._add_leads(str(row[0]), post.leads)
            return str(row[0])
        self.db.table("posts").insert(post_row(post))
        return post.id

    def _add_leads(self, post_id: str, leads: tuple[str, ...]) -> None:
        """Add the leads a later request brings to the stored post's (the first MAX_LEADS)."""
        (stored,) = self.db.execute("SELECT leads FROM posts WHERE id = ?", [post_id]).fetchone()
        known = json.loads(stored or "[]")
        merged = list(dict.fromkeys([*known, *leads]))[:MAX_LEADS]
        if merged != known:
            self.db.execute(
                "UPDATE posts SET leads = ? WHERE id = ?", [json.dumps(merged), post_id]
            )

    def claim(
        self, owner: str, *, lease: float, kinds: tuple[str, ...] | None = None
    ) -> Job | None:
        """Take the oldest runnable job for owner with a lease of `lease` seconds.

        Runnable: queued and due (and the job it waits for, if any, done or dead), or running
        with an expired lease (its worker died). Jobs whose lease expired with no attempts left
        are made dead first.
        """
        now = self._now()
        until = dt_out(self.clock.now() + timedelta(seconds=lease))
        kind_sql, kind_params = "", []
        if kinds:
            kind_sql = f" AND kind IN ({','.join('?' * len(kinds))})"
            kind_params = list(kinds)
        skip = " FOR UPDATE SKIP LOCKED" if self.pg else ""  # claimers pass each other by
        with self._row_tx():
            self._bury_expired(now)
            rows = self.db.execute(
                f"{_TAKE}WHERE id = (SELECT id FROM jobs WHERE {_RUNNABLE}"
                f"{kind_sql} ORDER BY created_at, id LIMIT 1{skip}) RETURNING id, attempts",
                [owner, until, now, now, now, now, *kind_params],
            ).fetchall()
            if not rows:
                return None
            row = rows[0]
            self._event(row[0], "job", "running", {"worker": owner, "attempt": row[1]}, now)
        return self.get(row[0])

    def claim_id(self, job_id: str, owner: str, *, lease: float) -> Job | None:
        """Take this one job for owner, as `claim` would, when it is runnable; else None.

        What a queue engine's worker calls with the job id the engine handed it: the engine
        decides who runs next, this lease still decides whose result is kept.
        """
        now = self._now()
        until = dt_out(self.clock.now() + timedelta(seconds=lease))
        with self._row_tx():
            self._bury_expired(now, job_id)
            rows = self.db.execute(
                f"{_TAKE}WHERE id = ? AND {_RUNNABLE} RETURNING id, attempts",
                [owner, until, now, now, job_id, now, now],
            ).fetchall()
            if not rows:
                return None
            self._event(job_id, "job", "running", {"worker": owner, "attempt": rows[0][1]}, now)
        return self.get(job_id)

    def dispatchable(self, *, limit: int, stale_after: float) -> list[Job]:
        """Return the jobs a queue engine should hold: queued ones whose waited-for job ended
        (due or not, soonest first), and running ones whose lease lapsed `stale_after` seconds
        ago (the engine lost their worker)."""
        stale = dt_out(self.clock.now() - timedelta(seconds=stale_after))
        queued = self.db.query(  # two statements: each one an index range (status, ...)
            "SELECT * FROM jobs WHERE status = 'queued' AND (waits_for IS NULL OR "
            "(SELECT w.status FROM jobs w WHERE w.id = jobs.waits_for) IN ('done', 'dead')) "
            "ORDER BY coalesce(run_after, created_at), id LIMIT ?",
            [limit],
        )
        lapsed = self.db.query(
            "SELECT * FROM jobs WHERE status = 'running' AND lease_expires_at < ? LIMIT ?",
            [stale, limit],
        )
        return [_job(r) for r in [*queued, *lapsed]]

    def _bury_expired(self, now: str, job_id: str | None = None) -> None:
        """Make dead the running jobs whose lease expired with no attempts left."""
        only, params = ("", []) if job_id is None else (" AND id = ?", [job_id])
        expired = self.db.execute(
            "UPDATE jobs SET status = 'dead', updated_at = ?, finished_at = ?, "
            "lease_owner = NULL, last_error = coalesce(last_error || '; ', '') || "
            "'the worker stopped answering (lease expired) on the last attempt' "
            "WHERE status = 'running' AND lease_expires_at < ? AND attempts >= max_attempts"
            f"{only} RETURNING id",
            [now, now, now, *params],
        ).fetchall()
        for (dead_id,) in expired:
            self._event(dead_id, "job", "dead", {"reason": "lease expired"}, now)

    def heartbeat(self, job: Job, owner: str, *, lease: float) -> bool:
        """Extend owner's lease on job; return False when the lease was lost."""
        until = dt_out(self.clock.now() + timedelta(seconds=lease))
        cursor = self.db.execute(
            "UPDATE jobs SET lease_expires_at = ?, updated_at = ? "
            "WHERE id = ? AND lease_owner = ? AND attempts = ? AND status = 'running'",
            [until, self._now(), job.id, owner, job.attempts],
        )
        return cursor.rowcount == 1

    def complete(
        self,
        job: Job,
        owner: str,
        *,
        result_id: str | None = None,
        store: Callable[[], None] | None = None,
    ) -> None:
        """Mark job done and run `store` (the result's writes) in the same transaction.

        Raises LeaseLostError, writing nothing, when owner no longer holds this attempt's lease.
        """
        now = self._now()
        with self._row_tx():
            cursor = self.db.execute(
                "UPDATE jobs SET status = 'done', result_id = ?, updated_at = ?, finished_at = ?, "
                "lease_owner = NULL, lease_expires_at = NULL "
                "WHERE id = ? AND lease_owner = ? AND attempts = ? AND status = 'running'",
                [result_id, now, now, job.id, owner, job.attempts],
            )
            if cursor.rowcount != 1:
                raise LeaseLostError(job.id)
            if store is not None:
                store()
            self._event(job.id, "job", "done", {"result_id": result_id}, now)

    def fail(
        self,
        job: Job,
        owner: str,
        error: str,
        *,
        backoff: Backoff | None = None,
        permanent: bool = False,
        delay: float | None = None,
    ) -> str:
        """Record a failed attempt: queued again after a back-off, or dead; return the status.

        A permanent error (bad input that no retry can fix) makes the job dead at once. `delay`
        (seconds) replaces the back-off when the peer said how long to wait (a 429's reset).
        Raises LeaseLostError when owner no longer holds the lease.
        """
        backoff = backoff or Backoff()
        status = "dead" if permanent or job.attempts >= job.max_attempts else "queued"
        now = self.clock.now()
        wait = backoff.delay(job.attempts) if delay is None else delay
        retry_at = dt_out(now + timedelta(seconds=wait))
        with self._row_tx():
            cursor = self.db.execute(
                "UPDATE jobs SET status = ?, last_error = ?, run_after = ?, updated_at = ?, "
                "finished_at = ?, lease_owner = NULL, lease_expires_at = NULL "
                "WHERE id = ? AND lease_owner = ? AND attempts = ? AND status = 'running'",
                [
                    status,
                    error[:2000],
                    retry_at if status == "queued" else None,
                    dt_out(now),
                    dt_out(now) if status == "dead" else None,
                    job.id,
                    owner,
                    job.attempts,
                ],
            )
            if cursor.rowcount != 1:
                raise LeaseLostError(job.id)
            detail: dict[str, Any] = {"error": error[:500], "attempt": job.attempts}
            if status == "queued":
                detail["retry_at"] = retry_at
            self._event(job.id, "job", status, detail, dt_out(now) or "")
        return status

    def release(self, job: Job, owner: str) -> bool:
        """Hand a job back unfinished (the worker is stopping); the attempt is not counted."""
        now = self._now()
        with self._row_tx():
            cursor = self.db.execute(
                "UPDATE jobs SET status = 'queued', attempts = attempts - 1, lease_owner = NULL, "
                "lease_expires_at = NULL, updated_at = ? "
                "WHERE id = ? AND lease_owner = ? AND attempts = ? AND status = 'running'",
                [now, job.id, owner, job.attempts],
            )
            if cursor.rowcount == 1:
                self._event(job.id, "job", "queued", {"reason": "handed back"}, now)
        return cursor.rowcount == 1

    def retry(self, job_id: str) -> bool:
        """Queue a dead job again with fresh attempts (an operator's decision)."""
        now = self._now()
        with immediate(self.db):
            cursor = self.db.execute(
                "UPDATE jobs SET status = 'queued', attempts = 0, run_after = NULL, "
                "finished_at = NULL, updated_at = ? WHERE id = ? AND status = 'dead'",
                [now, job_id],
            )
            if cursor.rowcount == 1:
                self._event(job_id, "job", "queued", {"reason": "retried by an operator"}, now)
        return cursor.rowcount == 1

    def forget_private(self, job_id: str) -> None:
        """Empty the job's `destination.private` (what only its reply could use), once sent."""
        if self.pg:
            sql = (  # as SQLite's json_set: a missing `destination` is made
                "UPDATE jobs SET payload = jsonb_set(payload::jsonb, '{destination}', "
                "coalesce(payload::jsonb -> 'destination', '{}'::jsonb) || "
                "'{\"private\": {}}'::jsonb)::text WHERE id = ?"
            )
        else:
            sql = (
                "UPDATE jobs SET payload = json_set(payload, '$.destination.private', "
                "json('{}')) WHERE id = ?"
            )
        self.db.execute(sql, [job_id])

    def progress(self, job_id: str, stage: str, status: str, **detail: Any) -> None:
        """Record that a stage of job started or ended."""
        self._event(job_id, stage, status, detail, self._now())

    def _event(self, job_id: str, stage: str, status: str, detail: dict[str, Any], at: str) -> None:
        # A job that is gone has no progress to keep (foreign key): that event is dropped. The
        # test is in the statement, not a caught error: on PostgreSQL a failed statement would
        # abort the caller's whole transaction.
        self.db.execute(
            "INSERT INTO job_events (job_id, stage, status, at, detail) "
            "SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM jobs WHERE id = ?)",
            [job_id, stage, status, at, json.dumps(detail, default=str), job_id],
        )

    def events(self, job_id: str, *, after: int = 0) -> list[JobEvent]:
        """Return job's progress events after sequence number `after`, oldest first."""
        rows = self.db.execute(
            "SELECT seq, job_id, stage, status, at, detail FROM job_events "
            "WHERE job_id = ? AND seq > ? ORDER BY seq",
            [job_id, after],
        ).fetchall()
        return [
            JobEvent(seq=r[0], job_id=r[1], stage=r[2], status=r[3], at=_dt(r[4]), detail=_js(r[5]))
            for r in rows
        ]

    def post(self, post_id: str) -> Post | None:
        """Return a post stored with a job."""
        rows = list(self.db.query("SELECT * FROM posts WHERE id = ?", [post_id]))
        return post_from_row(rows[0]) if rows else None

    def get(self, job_id: str) -> Job | None:
        """Return one job."""
        rows = list(self.db.query("SELECT * FROM jobs WHERE id = ?", [job_id]))
        return _job(rows[0]) if rows else None

    def for_check(self, check_id: str) -> Job | None:
        """Return the newest job that produces (or produced) the check with this id."""
        rows = list(
            self.db.query(
                "SELECT * FROM jobs WHERE json_extract(payload, '$.check_id') = ? "
                "ORDER BY created_at DESC LIMIT 1",
                [check_id],
            )
        )
        return _job(rows[0]) if rows else None

    def check_notes(self, check_id: str) -> list[str]:
        """Return the notes a check's request left on its check job (an image not taken)."""
        rows = list(
            self.db.query(
                "SELECT payload FROM jobs WHERE json_extract(payload, '$.check_id') = ? "
                "AND kind = 'check' ORDER BY created_at DESC LIMIT 1",
                [check_id],
            )
        )
        notes = json.loads(str(rows[0]["payload"])).get("notes") if rows else None
        return [str(n) for n in notes or []]

    def counts(self) -> dict[str, int]:
        """Return how many jobs are in each status."""
        found = dict(
            self.db.execute("SELECT status, count(*) FROM jobs GROUP BY status").fetchall()
        )
        return {status: int(found.get(status, 0)) for status in STATUSES}

    def list(self, *, status: str | None = None, limit: int = 100) -> list[Job]:
        """Return the newest jobs, optionally of one status."""
        sql, params = "SELECT * FROM jobs", []
        if status is not None:
            sql, params = sql + " WHERE status = ?", [status]
        rows = self.db.query(sql + " ORDER BY created_at DESC LIMIT ?", [*params, limit])
        return [_job(r) for r in rows]


def _dt(value: str) -> datetime:
    parsed = dt_in(value)
    assert parsed is not None
    return parsed


def _js(value: str | None) -> dict[str, Any]:
    data = json.loads(value) if value else {}
    return data if isinstance(data, dict) else {}


def _job(r: dict[str, Any]) -> Job:
    return Job(
        id=r["id"],
        kind=r["kind"],
        payload=json.loads(r["payload"]),
        status=r["status"],
        attempts=r["attempts"],
        max_attempts=r["max_attempts"],
        dedupe_key=r["dedupe_key"],
        post_id=r["post_id"],
        result_id=r["result_id"],
        last_error=r["last_error"],
        lease_owner=r["lease_owner"],
        lease_expires_at=dt_in(r["lease_expires_at"]),
        run_after=dt_in(r["run_after"]),
        created_at=dt_in(r["created_at"]),
        started_at=dt_in(r["started_at"]),
        finished_at=dt_in(r["finished_at"]),
        waits_for=r.get("waits_for"),
        updated_at=dt_in(r.get("updated_at")),
    )
