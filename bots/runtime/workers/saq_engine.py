"""saq as the queue engine (FACTBOT_QUEUE__ENGINE=saq): the jobs table is the outbox.

    request ──one transaction──> jobs row (queued)          the system of record, as builtin
    Relay (factbot serve / factbot relay, any number) ──> saq job, key = factbot job id
    saq Worker (factbot worker) ──> SaqRunner ──> claim_id + WorkerPool.run_one (lease, handler,
                                                  complete/fail in one transaction, replies)

The relay hands every runnable row to saq (queued rows whose waited-for job ended, scheduled
at their `run_after`; running rows whose lease lapsed long ago, whose worker saq lost). saq
keys the job by the factbot job id and ignores a hand-over while it still holds that key, so
relays on several nodes, or one relay repeating itself, never make a job run twice. The runner
claims the row by id with a lease before it runs the handler, and every end of the job goes
through the same lease-checked statements as builtin workers, so exactly-once results, the
reply ledger and dead-after-N-attempts stay in `storage.jobs` alone.

saq supplies the rest: who runs what (dequeue with SKIP LOCKED on PostgreSQL), heartbeats (the
runner touches the saq job as it renews its lease), the sweep that runs a job again when its
worker stops heartbeating (a SIGKILLed node), and the retry's timing: a failed attempt is
retried by saq at the row's `run_after` (factbot's back-off).

Failure policy: a hand-over that fails (saq's backend unreachable) is tried again on the next
relay tick; a job the runner cannot take (another lease is still live, a kind this process has
no handler for, the database restarting) is retried by saq after `retry_delay`; nothing a job
raises stops the worker. While PostgreSQL restarts, saq's own upkeep (sweep, schedule) and
dequeues fail and are tried again by saq; their errors are logged as one-line warnings.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import time
from typing import Any

import psycopg
from saq import Job as SaqJob
from saq import Queue, Worker
from saq.types import Context, PartialTimersDict

from bots.runtime.workers.pool import WorkerPool
from bots.settings import Settings
from storage import Store
from storage.jobs import Job
from storage.tx import DatabaseUnavailableError

log = logging.getLogger(__name__)

FUNCTION = "factbot.run_job"
RETRY_DELAY = 1.0  # seconds saq waits before it runs a job the runner could not take
EARLY_WAIT = 5.0  # a job handed over this early (clocks, saq's whole seconds) is waited for


class AttemptFailedError(Exception):
    """The attempt failed and the row is queued again: saq runs it again at `run_after`."""


class NotRunnableError(Exception):
    """The runner could not take the job now (a live lease elsewhere, an unknown kind)."""


class DatabaseDownError(NotRunnableError):
    """factbot's database did not answer during the run: saq runs the job again later."""


class _QuietRetries(logging.Filter):
    """Keep saq's traceback out of the log for the retries the runner asks for on purpose, and
    make its upkeep's failures while the backend restarts one line each."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, AttemptFailedError | NotRunnableError):
            return False
        if isinstance(exc, psycopg.OperationalError | OSError):  # OSError: refused, reset
            # The backend is down or restarting: saq tries again on its next tick.
            record.msg, record.args = "%s: backend unavailable: %r", (record.getMessage(), exc)
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.exc_info, record.exc_text = None, None
        return True


_QUIET = _QuietRetries()


def open_queue(settings: Settings, *, connections: int = 4) -> Queue:
    """Return saq's queue on the configured backend (not yet connected)."""
    url = settings.queue_url
    if url is None:
        raise ValueError("saq needs FACTBOT_QUEUE__URL or FACTBOT_DATABASE_URL")
    extra: dict[str, Any] = {}
    if url.startswith("postgres"):
        extra = {"min_size": 1, "max_size": max(2, connections)}
    logging.getLogger("saq").addFilter(_QUIET)
    return Queue.from_url(url, name=settings.queue.name, **extra)


async def connect(queue: Queue, *, seconds: float = 30.0) -> None:
    """Connect to saq's backend and wait until its tables exist.

    saq migrates its tables under a try-lock: a process that connects while another migrates
    skips the migration and would query tables not made yet.
    """
    await queue.connect()
    deadline = time.monotonic() + seconds
    while True:
        try:
            await queue.count("incomplete")
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def depth(settings: Settings, *, seconds: float = 5.0) -> dict[str, Any]:
    """Return saq's depth for `factbot doctor`: where it runs and its job counts, or the error.

    Never raises: an unreachable backend is the `error` field.
    """
    url = settings.queue_url or ""
    where = url.split("@")[-1].split("?")[0] if "://" in url else ""  # no user or password
    found: dict[str, Any] = {"engine": "saq", "backend": where, "name": settings.queue.name}
    try:
        queue = open_queue(settings, connections=2)
        async with asyncio.timeout(seconds):
            await queue.connect()
            try:
                info = await queue.info()
            finally:
                await queue.disconnect()
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        return {**found, "error": f"{type(exc).__name__}: {exc}"[:300]}
    counts = {"queued": info["queued"], "active": info["active"], "scheduled": info["scheduled"]}
    return {**found, **counts, "workers": len(info["workers"])}


def saq_job(job: Job, settings: Settings) -> SaqJob:
    """Return the saq job that runs factbot job `job`: keyed by its id, due at its run_after."""
    due = job.run_after.timestamp() if job.run_after is not None else 0
    return SaqJob(
        function=FUNCTION,
        kwargs={"job_id": job.id},
        key=job.id,
        timeout=0,  # no limit, as builtin workers: the lease and heartbeats find dead workers
        heartbeat=math.ceil(settings.jobs.lease_seconds),
        retries=settings.queue.retries + job.max_attempts,
        retry_delay=RETRY_DELAY,
        scheduled=math.ceil(due) if due > time.time() else 0,
    )


class Relay:
    """Hands the jobs table's runnable rows to saq; safe to run on any number of nodes."""

    def __init__(self, store: Store, queue: Queue, settings: Settings) -> None:
        self.store = store
        self.queue = queue
        self.settings = settings
        self.handed = 0  # new saq jobs made by this relay
        # What this relay handed on, so a row is not handed again each tick: id -> (the row's
        # status and last change, when). saq's key dedupes anyway; this only saves statements.
        self._seen: dict[str, tuple[tuple[str, Any], float]] = {}

    async def tick(self) -> int:
        """Hand on what is runnable and not handed on since its last change; return how many
        saq took as new."""
        q = self.settings.queue
        jobs = await self.store.call(
            self.store.jobs.dispatchable,
            limit=q.relay_batch,
            stale_after=self.settings.jobs.lease_seconds,
        )
        now = time.monotonic()
        seen: dict[str, tuple[tuple[str, Any], float]] = {}
        made = 0
        for job in jobs:
            mark = (job.status, job.updated_at)
            before = self._seen.get(job.id)
            if before is not None and before[0] == mark and now - before[1] < q.redispatch_seconds:
                seen[job.id] = before
                continue
            if await self.queue.enqueue(saq_job(job, self.settings)) is not None:
                made += 1
            seen[job.id] = (mark, now)  # new, or held by saq already (deduped by its key)
        self._seen = seen
        self.handed += made
        return made

    async def run(self, stop: asyncio.Event) -> None:
        """Hand jobs on every `relay_seconds` until stop is set."""
        await connect(self.queue)
        try:
            while not stop.is_set():
                try:
                    await self.tick()
                except DatabaseUnavailableError as exc:
                    log.warning("relay: database unavailable", extra={"error": str(exc)})
                except Exception as exc:  # noqa: BLE001 - saq's backend down: try again
                    log.warning("relay: hand-over failed", extra={"error": repr(exc)})
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.settings.queue.relay_seconds)
        finally:
            await self.queue.disconnect()


class SaqRunner:
    """saq's task: take the factbot job by id under a lease and run it through the pool."""

    def __init__(self, pool: WorkerPool, settings: Settings) -> None:
        self.pool = pool
        self.settings = settings
        self._slots = itertools.count(1)

    async def run(self, ctx: Context, *, job_id: str) -> str:
        """Run factbot job `job_id` once; return its status after the attempt."""
        handle = ctx["job"]
        try:
            return await self._run(handle, job_id)
        except DatabaseUnavailableError as exc:
            # Whatever was not stored is not done: a lease taken lapses and the next try (or
            # another worker) runs the job again; a result stored before the outage stays.
            log.warning("saq job: database unavailable", extra={"job": job_id, "error": str(exc)})
            handle.retry_delay, handle.retry_backoff = RETRY_DELAY, False
            raise DatabaseDownError(str(exc)) from exc

    async def _run(self, handle: SaqJob, job_id: str) -> str:
        store = self.pool.store
        found = await store.call(store.jobs.get, job_id)
        if found is None or found.status in ("done", "dead"):
            return found.status if found is not None else "gone"
        if found.kind not in self.pool.handlers:
            raise NotRunnableError(f"no handler for {found.kind!r} in {self.pool.name}")
        if found.status == "queued" and found.run_after is not None:
            # saq keeps whole seconds: a retry may come up to a second before its back-off ends.
            early = (found.run_after - self.pool.clock.now()).total_seconds()
            if 0 < early <= EARLY_WAIT:
                await asyncio.sleep(early)
        owner = f"{self.pool.name}/saq{next(self._slots)}"
        job = await store.call(
            store.jobs.claim_id, job_id, owner, lease=self.settings.jobs.lease_seconds
        )
        if job is None:
            return self._not_taken(handle, job_id, await store.call(store.jobs.get, job_id))
        touch = asyncio.create_task(self._touch(handle))
        try:
            await self.pool.run_one(job, owner)
        finally:
            touch.cancel()
        after = await store.call(store.jobs.get, job_id)
        if after is not None and after.status == "queued" and after.attempts == job.attempts:
            # A failed attempt left for later: saq runs it again at the row's run_after.
            wait = 0.0
            if after.run_after is not None:
                wait = (after.run_after - self.pool.clock.now()).total_seconds()
            handle.retry_delay, handle.retry_backoff = max(0.0, wait), False
            raise AttemptFailedError(after.last_error or "failed")
        return after.status if after is not None else "gone"

    def _not_taken(self, handle: SaqJob, job_id: str, current: Job | None) -> str:
        now = self.pool.clock.now()
        if current is None or current.status in ("done", "dead"):
            return current.status if current is not None else "gone"
        if current.status == "running" and current.lease_expires_at is not None:
            # A worker saq gave up on may still hold the lease: ask again once it lapsed.
            wait = (current.lease_expires_at - now).total_seconds()
            handle.retry_delay, handle.retry_backoff = max(RETRY_DELAY, wait + 0.1), False
            raise NotRunnableError(f"lease held by {current.lease_owner} for {wait:.1f}s")
        wait = RETRY_DELAY
        if current.run_after is not None:
            wait = max(wait, (current.run_after - now).total_seconds())
        handle.retry_delay, handle.retry_backoff = wait, False
        raise NotRunnableError(f"job {job_id} is {current.status} and not runnable yet")

    async def _touch(self, handle: SaqJob) -> None:
        """Heartbeat saq's job as the pool heartbeats the lease, so saq's sweep spares it."""
        while True:
            await asyncio.sleep(self.settings.jobs.heartbeat_seconds)
            try:
                await handle.update()
            except Exception as exc:  # noqa: BLE001 - the backend blinked: beat again
                log.warning("saq heartbeat failed", extra={"job": handle.key, "error": repr(exc)})


async def run_saq_worker(pool: WorkerPool, settings: Settings, stop: asyncio.Event) -> None:
    """Run a saq worker of `pool.config.concurrency` jobs until stop is set, then let running
    jobs finish within FACTBOT_JOBS__SHUTDOWN_TIMEOUT and hand the rest back."""
    concurrency = pool.config.concurrency
    queue = open_queue(settings, connections=concurrency + 3)
    runner = SaqRunner(pool, settings)
    timers: PartialTimersDict = {
        "sweep": settings.queue.sweep_seconds,
        "abort": 1,
        "schedule": 1,
        "worker_info": 10,
    }
    worker: Worker[Context] = Worker(
        queue,
        [(FUNCTION, runner.run)],
        id=pool.name,
        concurrency=concurrency,
        timers=timers,
        dequeue_timeout=1.0,  # an idle slot notices a stop within a second
        poll_interval=settings.jobs.poll_seconds,
        shutdown_grace_period_s=0,  # the grace is given below, before saq's stop
    )
    worker.SIGNALS = []  # the process's stop event decides, as for builtin workers
    await connect(queue)
    await pool.store.call(pool.store.workers.register, pool.name)
    alive = asyncio.create_task(pool.report_alive(stop))
    started = asyncio.create_task(worker.start())
    # saq's start() makes a new stop event as it begins: a stop asked before then would be lost
    # and the worker would run on. Wait until it has begun (its upkeep and slots exist).
    while not started.done() and not worker.tasks:  # noqa: ASYNC110 - saq exposes no event
        await asyncio.sleep(0.01)
    try:
        await stop.wait()
        worker.event.set()  # no new jobs; running ones get the shutdown timeout
        busy = [t for t in worker.tasks if t.get_name() == "process"]
        if busy:
            await asyncio.wait(busy, timeout=settings.jobs.shutdown_timeout)
    finally:
        await worker.stop()  # what still runs is cancelled: its lease is handed back
        with contextlib.suppress(asyncio.CancelledError):
            await started
        alive.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await alive
        await pool.store.call(pool.store.workers.stopped, pool.name)
        await queue.disconnect()
