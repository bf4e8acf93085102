"""The monitor's scheduler process: one active scheduler, any number standing by.

APScheduler 3.11 (`AsyncIOScheduler`, in-memory job store: job stores are never shared between
processes) runs one job per source, each with an explicit id (`scan:<source>`),
`replace_existing=True`, `coalesce=True` (runs missed while paused or busy become one),
`max_instances=1` and a real `misfire_grace_time`. A scheduled job does one thing: it enqueues a
`monitor:scan` job whose dedupe key names the source and the time slot
(`monitor:scan:<source>:<slot>`, slot = the Unix time divided by the interval), so however
often a tick fires — a coalesced burst, two schedulers during a takeover — a slot is scanned
once. The scan itself runs in a worker (`bots.runtime.monitor.scan`).

Only the holder of the database lease (`monitor_lease`, taken and renewed in an immediate
transaction every third of `lease_seconds`) runs its schedule; another process stands by,
paused, and takes over once the lease has lapsed. Each enqueue checks the lease in the same
transaction (a fence): a scheduler that lost its lease while its loop was stalled enqueues
nothing. A clean stop gives the lease up, so a standby takes over at its next round.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED, EVENT_JOB_MISSED, JobEvent
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bots.runtime.monitor.scan import SCAN
from bots.runtime.workers.pool import worker_name
from bots.settings import MonitorSettings
from pipeline.util.clock import SYSTEM, Clock
from storage import Store
from storage.jobs import Job
from storage.tx import immediate

log = logging.getLogger(__name__)

LEASE = "monitor"
TriggerFor = Callable[[str], BaseTrigger]


@dataclass(frozen=True)
class Periodic:
    """A job kind the schedule enqueues every `seconds` (e.g. X's `x:notes-status` refresh).

    Like scans, it is only enqueued — once per time slot (its dedupe key), by the lease
    holder — and a worker runs it. Its payload is {"key": "<name>:<slot>"}.
    """

    name: str
    kind: str
    seconds: float


def periodic_dedupe(periodic: Periodic, slot: int) -> str:
    """Return the dedupe key of a periodic job in one time slot."""
    return f"{periodic.kind}:{periodic.name}:{slot}"


def scan_dedupe(source: str, slot: int) -> str:
    """Return the dedupe key of a source's scan in one time slot."""
    return f"monitor:scan:{source}:{slot}"


class MonitorScheduler:
    """Holds (or waits for) the lease and, while holding it, enqueues each source's scans."""

    def __init__(
        self,
        store: Store,
        settings: MonitorSettings,
        sources: Sequence[str],
        *,
        holder: str | None = None,
        clock: Clock = SYSTEM,
        trigger: TriggerFor | None = None,
        max_attempts: int = 3,
        periodic: Sequence[Periodic] = (),
    ) -> None:
        self.store = store
        self.settings = settings
        self.sources = tuple(sources)
        self.holder = holder or worker_name("monitor")
        self.clock = clock
        self.custom = trigger  # tests: date triggers at now, for scans and periodic jobs alike
        self.trigger = trigger or self._interval
        self.max_attempts = max_attempts
        self.periodic = tuple(periodic)
        self.active = False
        self.enqueued: list[Job] = []  # the scan jobs this scheduler created
        self.events: list[JobEvent] = []  # APScheduler's job events (executed, error, missed)
        self._event = asyncio.Event()
        self._scheduler: AsyncIOScheduler | None = None

    def _interval(self, source: str) -> BaseTrigger:
        return IntervalTrigger(seconds=self.settings.interval_seconds)

    async def run(self, stop: asyncio.Event) -> None:
        """Hold or wait for the lease until stop is set (a round every third of the lease)."""
        try:
            while not stop.is_set():
                await self.step()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.settings.lease_seconds / 3)
        finally:
            self.close()

    async def step(self) -> bool:
        """Run one lease round: take or renew it and start, resume or pause the schedule."""
        held = await self.store.call(
            self.store.monitor.take_lease, LEASE, self.holder, seconds=self.settings.lease_seconds
        )
        if held and not self.active:
            self._activate()
        elif not held and self.active:
            self._stand_by()
        return held

    def _activate(self) -> None:
        if self._scheduler is None:
            scheduler = AsyncIOScheduler(timezone="UTC")
            scheduler.add_listener(
                self._on_event, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR | EVENT_JOB_MISSED
            )
            scheduler.start()
            self._scheduler = scheduler
        else:
            self._scheduler.resume()
        for source in self.sources:
            self._scheduler.add_job(
                self.enqueue_scan,
                self.trigger(source),
                args=[source],
                id=f"scan:{source}",
                name=f"enqueue a scan of {source}",
                replace_existing=True,
                coalesce=True,
                max_instances=1,
                misfire_grace_time=int(self.settings.misfire_grace_seconds),
            )
        for periodic in self.periodic:
            self._scheduler.add_job(
                self.enqueue_periodic,
                self.custom(periodic.name)
                if self.custom is not None
                else IntervalTrigger(seconds=periodic.seconds),
                args=[periodic],
                id=f"periodic:{periodic.name}",
                name=f"enqueue {periodic.kind}",
                replace_existing=True,
                coalesce=True,
                max_instances=1,
                misfire_grace_time=int(self.settings.misfire_grace_seconds),
            )
        self.active = True
        log.info("monitor scheduler active", extra={"holder": self.holder, "sources": self.sources})

    def _stand_by(self) -> None:
        if self._scheduler is not None:
            self._scheduler.pause()
        self.active = False
        log.warning("monitor lease lost; standing by", extra={"holder": self.holder})

    async def enqueue_scan(self, source: str) -> Job | None:
        """Enqueue the scan of source for the current slot, if this process holds the lease."""
        slot = int(self.clock.now().timestamp() // self.settings.interval_seconds)
        enqueued = await self.store.call(
            self._enqueue_held, SCAN, {"source": source, "slot": slot}, scan_dedupe(source, slot)
        )
        if enqueued is None:
            log.warning("scan not enqueued: lease not held", extra={"source": source})
            return None
        job, created = enqueued
        if created:
            self.enqueued.append(job)
        return job

    def _enqueue_held(
        self, kind: str, payload: dict[str, Any], dedupe_key: str
    ) -> tuple[Job, bool] | None:
        """Enqueue a job if this process holds the lease, in one transaction (None: not held)."""
        with immediate(self.store.db):
            if not self.store.monitor.holds_lease(LEASE, self.holder):
                return None
            return self.store.jobs.enqueue(
                kind, payload, dedupe_key=dedupe_key, max_attempts=self.max_attempts
            )

    async def enqueue_periodic(self, periodic: Periodic) -> Job | None:
        """Enqueue a periodic job for the current slot, if this process holds the lease."""
        slot = int(self.clock.now().timestamp() // periodic.seconds)
        enqueued = await self.store.call(
            self._enqueue_held,
            periodic.kind,
            {"key": f"{periodic.name}:{slot}"},
            periodic_dedupe(periodic, slot),
        )
        if enqueued is None:
            log.warning("periodic job not enqueued: lease not held", extra={"kind": periodic.kind})
            return None
        job, created = enqueued
        if created:
            self.enqueued.append(job)
        return job

    def _on_event(self, event: JobEvent) -> None:
        self.events.append(event)
        self._event.set()
        if event.code == EVENT_JOB_ERROR:
            error: Any = getattr(event, "exception", None)
            log.error("scheduled job failed", extra={"job": event.job_id, "error": repr(error)})

    async def wait_events(self, count: int, *, seconds: float = 10.0) -> list[JobEvent]:
        """Wait until APScheduler reported count job events; return them."""
        async with asyncio.timeout(seconds):
            while len(self.events) < count:
                self._event.clear()
                await self._event.wait()
        return list(self.events)

    def close(self) -> None:
        """Stop the schedule and give the lease up (a standby takes over at its next round)."""
        if self._scheduler is not None and self._scheduler.running:
            self._scheduler.shutdown(wait=False)
        self._scheduler = None
        if self.active:
            self.store.monitor.release_lease(LEASE, self.holder)
        self.active = False
