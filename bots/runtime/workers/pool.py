"""Workers: claim jobs with a lease, keep it alive with heartbeats, end them exactly once.

A `WorkerPool` runs `concurrency` slots in one event loop. Each slot claims a job, runs its
kind's handler while a heartbeat task renews the lease, then completes it (the handler's writes
and the "done" mark in one transaction) or records the failure (retried after a back-off, or
dead). A job whose heartbeat finds the lease taken by another worker is abandoned: its result
would be refused anyway (`LeaseLostError`).

Stopping (`stop` set, e.g. by SIGTERM): no new claims; running jobs get `shutdown_timeout`
seconds to finish; the rest are cancelled and handed back to the queue unfinished.

Failure policy: a handler's `PermanentJobError` (and factbot's `InputError`) makes the job dead
at once; a `RetryLaterError` is one failed attempt retried after the wait the peer asked for;
any other exception is one failed attempt retried after the back-off. Nothing a handler raises
stops the pool. (The handler contract lives in `bots.runtime.workers.jobtypes`, re-exported here.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field

from bots.runtime.workers.jobtypes import JobHandler, Outcome, PermanentJobError, RetryLaterError
from pipeline.errors import InputError
from pipeline.util.clock import SYSTEM, Clock
from storage import Store
from storage.jobs import Backoff, Job, LeaseLostError
from storage.tx import DatabaseUnavailableError

__all__ = [
    "JobHandler",
    "Outcome",
    "PermanentJobError",
    "RetryLaterError",
    "WorkerConfig",
    "WorkerPool",
    "worker_name",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkerConfig:
    """How a pool claims and keeps jobs."""

    concurrency: int = 1
    lease_seconds: float = 60.0
    heartbeat_seconds: float = 15.0
    poll_seconds: float = 0.5
    shutdown_timeout: float = 30.0
    backoff: Backoff = field(default_factory=Backoff)
    registry_seconds: float = 5.0  # how often the pool tells the workers table it is alive


def worker_name(prefix: str = "worker") -> str:
    """Return a name unique to this process: prefix@host:pid."""
    return f"{prefix}@{socket.gethostname()}:{os.getpid()}"


class WorkerPool:
    """Slots that claim and run jobs of the kinds in `handlers`."""

    def __init__(
        self,
        store: Store,
        handlers: Mapping[str, JobHandler],
        config: WorkerConfig,
        *,
        name: str | None = None,
        clock: Clock = SYSTEM,
    ) -> None:
        self.store = store
        self.handlers = dict(handlers)
        self.config = config
        self.name = name or worker_name()
        self.clock = clock
        self.running: dict[str, Job] = {}
        self.completed = 0
        self.failed = 0

    async def run(self, stop: asyncio.Event) -> None:
        """Run until stop is set, then finish or hand back the jobs in progress."""
        await self.store.call(self.store.workers.register, self.name)
        registry = asyncio.create_task(self.report_alive(stop))
        slots = [
            asyncio.create_task(self._slot(n, stop), name=f"{self.name}/{n}")
            for n in range(self.config.concurrency)
        ]
        try:
            await stop.wait()
            _, pending = await asyncio.wait(slots, timeout=self.config.shutdown_timeout)
            for task in pending:
                task.cancel()
            await asyncio.gather(*slots, return_exceptions=True)
        finally:
            for task in slots:
                task.cancel()
            registry.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await registry
            await self.store.call(self.store.workers.stopped, self.name)
            log.info(
                "workers stopped",
                extra={"worker": self.name, "completed": self.completed, "failed": self.failed},
            )

    async def report_alive(self, stop: asyncio.Event) -> None:
        """Tell the workers table this process is alive until stop is set."""
        while not stop.is_set():
            with contextlib.suppress(DatabaseUnavailableError):  # said again next time
                await self.store.call(self.store.workers.heartbeat, self.name)
            await _pause(stop, self.config.registry_seconds)

    async def _slot(self, n: int, stop: asyncio.Event) -> None:
        owner = f"{self.name}/{n}"
        while not stop.is_set():
            try:
                job = await self.store.call(
                    self.store.jobs.claim,
                    owner,
                    lease=self.config.lease_seconds,
                    kinds=tuple(self.handlers),
                )
            except DatabaseUnavailableError as exc:
                # The database server is restarting or unreachable: wait, then ask again.
                log.warning("database unavailable", extra={"worker": owner, "error": str(exc)})
                await _pause(stop, max(1.0, self.config.poll_seconds))
                continue
            if job is None:
                await _pause(stop, self.config.poll_seconds)
                continue
            await self.run_one(job, owner)

    async def run_one(self, job: Job, owner: str) -> None:
        """Run one claimed job to its end (done, queued again, dead, or handed back)."""
        self.running[job.id] = job
        work = asyncio.create_task(self.handlers[job.kind].run(job))
        beat = asyncio.create_task(self._heartbeat(job, owner, work))
        try:
            outcome = await work
        except asyncio.CancelledError:
            me = asyncio.current_task()
            if me is not None and me.cancelling():  # the pool is stopping: hand the job back
                work.cancel()
                if await self.store.call(self.store.jobs.release, job, owner):
                    log.info("job handed back", extra={"job": job.id, "worker": owner})
                raise
            return  # the heartbeat found the lease taken: another worker has the job now
        except Exception as exc:  # noqa: BLE001 - every failure is recorded on the job
            await self._record_failure(job, owner, exc)
            return
        finally:
            beat.cancel()
            self.running.pop(job.id, None)
        try:
            await self.store.call(
                self.store.jobs.complete,
                job,
                owner,
                result_id=outcome.result_id,
                store=outcome.store,
            )
        except LeaseLostError:
            log.warning("job result dropped: lease lost", extra={"job": job.id, "worker": owner})
            return
        except DatabaseUnavailableError as exc:
            # Nothing was written (one transaction): the lease lapses and the job runs again.
            log.warning(
                "job result not stored: database unavailable",
                extra={"job": job.id, "worker": owner, "error": str(exc)},
            )
            return
        self.completed += 1
        if outcome.after is not None:
            try:
                await outcome.after()
            except Exception as exc:  # noqa: BLE001 - the job is done; what follows may fail
                log.warning("after-job step failed", extra={"job": job.id, "error": repr(exc)})

    async def _record_failure(self, job: Job, owner: str, exc: Exception) -> None:
        permanent = isinstance(exc, PermanentJobError | InputError)
        delay = exc.retry_after if isinstance(exc, RetryLaterError) else None
        error = f"{type(exc).__name__}: {exc}"
        try:
            status = await self.store.call(
                self.store.jobs.fail,
                job,
                owner,
                error,
                backoff=self.config.backoff,
                permanent=permanent,
                delay=delay,
            )
        except (LeaseLostError, DatabaseUnavailableError):
            return  # another worker has it, or its lease lapses and it runs again
        self.failed += 1
        log.warning(
            "job failed",
            extra={"job": job.id, "status": status, "attempt": job.attempts, "error": error},
        )

    async def _heartbeat(self, job: Job, owner: str, work: asyncio.Task[Outcome]) -> bool:
        while True:
            await asyncio.sleep(self.config.heartbeat_seconds)
            try:
                held = await self.store.call(
                    self.store.jobs.heartbeat, job, owner, lease=self.config.lease_seconds
                )
            except DatabaseUnavailableError:
                continue  # beat again; if the lease lapses meanwhile, the next beat says so
            if not held:
                log.warning("lease lost; abandoning the job", extra={"job": job.id})
                work.cancel()
                return False


async def _pause(stop: asyncio.Event, seconds: float) -> None:
    """Wait for seconds, or less when stop is set meanwhile."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
