"""The worker side of a process: build the pool over an open App and run it until stopped.

The runtime never imports the composition root (`bots.app` composes the runtime, not the
other way round): it takes anything with the App's shape, `RuntimeApp`.

`factbot serve` runs it beside the API in the server's event loop (`serve_parts`); `factbot
worker` runs it alone. `job_parts` adds a pool's runs on the configured queue engine (builtin,
or saq with its relay) to a process's `Supervisor` (bots.runtime.supervisor), which starts and
stops every part of `serve`, `worker`, `relay` and `monitor` the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Protocol

from bots.runtime.checking.check_jobs import CHECK, AfterCheck, CheckJobs, CheckRunner
from bots.runtime.checking.reuse import ReuseIndex
from bots.runtime.delivery.deliver import ReplyJobs
from bots.runtime.monitor.scheduler import MonitorScheduler
from bots.runtime.platform.contract import Closes, PlatformAdapter, ReplySender
from bots.runtime.platform.intake import reply_kind
from bots.runtime.platform.privacy import retention_loop
from bots.runtime.supervisor import Supervisor
from bots.runtime.workers.pool import JobHandler, WorkerConfig, WorkerPool, worker_name
from bots.settings import JobSettings, Settings
from pipeline.util.clock import Clock
from storage import Store
from storage.jobs import Backoff
from storage.tx import DatabaseUnavailableError


class RuntimeApp(CheckRunner, Protocol):
    """The parts of the App that workers use."""

    settings: Settings
    clock: Clock

    @property
    def reuse(self) -> ReuseIndex:
        """Return the reuse index."""
        ...


def worker_config(jobs: JobSettings, *, concurrency: int) -> WorkerConfig:
    """Return the pool configuration the settings describe."""
    return WorkerConfig(
        concurrency=concurrency,
        lease_seconds=jobs.lease_seconds,
        heartbeat_seconds=jobs.heartbeat_seconds,
        poll_seconds=jobs.poll_seconds,
        shutdown_timeout=jobs.shutdown_timeout,
        backoff=Backoff(initial=jobs.backoff_initial, maximum=jobs.backoff_max),
        registry_seconds=min(5.0, jobs.heartbeat_seconds),
    )


def build_pool(
    app: RuntimeApp,
    *,
    concurrency: int,
    prefix: str = "worker",
    after: AfterCheck | None = None,
    senders: Mapping[str, ReplySender] | None = None,
    handlers: Mapping[str, JobHandler] | None = None,
) -> WorkerPool:
    """Return a pool that runs check jobs through app, and the replies of the given platforms.

    Each finished check is kept for reuse. A pool claims only the reply jobs of platforms it
    has a sender for; `handlers` adds further job kinds (`App.job_handlers()`).
    """
    every: dict[str, JobHandler] = {CHECK: CheckJobs(app, reuse=app.reuse, after=after)}
    replies = ReplyJobs(app.store, senders or {}, app.settings)
    for platform in senders or {}:
        every[reply_kind(platform)] = replies
    every.update(handlers or {})
    return WorkerPool(
        app.store,
        every,
        worker_config(app.settings.jobs, concurrency=concurrency),
        name=worker_name(prefix),
        clock=app.clock,
    )


def job_parts(
    sup: Supervisor,
    store: Store,
    settings: Settings,
    pool: WorkerPool | None,
    *,
    relay: bool,
    essential: bool = False,
) -> None:
    """Add the parts that run pool's jobs on the configured queue engine (FACTBOT_QUEUE__ENGINE).

    builtin: the pool's workers claim rows from the jobs table. saq: a saq worker runs the jobs
    a relay hands to saq; with `relay` this process runs a relay too (a relay elsewhere, in
    `factbot serve` or `factbot relay`, does otherwise)."""
    if settings.queue.engine != "saq":
        if pool is not None:
            sup.add("jobs", pool.run, essential=essential)
        return
    from bots.runtime.workers.saq_engine import Relay, open_queue, run_saq_worker

    if relay:
        sup.add("relay", Relay(store, open_queue(settings), settings).run, essential=essential)
    if pool is not None:
        saq_pool = pool
        sup.add("jobs", lambda stop: run_saq_worker(saq_pool, settings, stop), essential=essential)


async def run_jobs(
    pool: WorkerPool, settings: Settings, stop: asyncio.Event, *, relay: bool = False
) -> None:
    """Run pool's jobs on the configured queue engine until stop is set (see `job_parts`)."""
    sup = Supervisor(stop)
    job_parts(sup, pool.store, settings, pool, relay=relay, essential=True)
    await sup.run()


class ServeApp(RuntimeApp, Protocol):
    """The parts of the App that `factbot serve` starts beside the API."""

    @property
    def adapters(self) -> Mapping[str, PlatformAdapter]:
        """Return the adapter of every configured platform."""
        ...

    def senders(self) -> Mapping[str, ReplySender]:
        """Return the outbound half of every configured platform."""
        ...

    def job_handlers(self) -> Mapping[str, JobHandler]:
        """Return the job handlers beyond checks and replies."""
        ...

    def monitor_scheduler(self) -> MonitorScheduler:
        """Return the monitor's scheduler."""
        ...

    async def close_fetcher(self) -> None:
        """Close the running loop's HTTP clients."""
        ...


def serve_parts(app: ServeApp, sup: Supervisor, *, workers: int, monitor: bool) -> None:
    """Add what `factbot serve` runs beside the API, in start order.

    The jobs (`workers` worker tasks; with saq, the outbox's relay even without them), the
    platforms' gateways and sockets (Discord, Slack Socket Mode), the monitor's scheduler with
    `monitor`, and the retention sweep (platform checks, image bytes uploaded to the API). The
    senders and the shared fetcher are closed once they have all stopped.
    """
    senders = app.senders() if workers else {}
    pool = None
    if workers:
        pool = build_pool(
            app,
            concurrency=workers,
            prefix="serve",
            senders=senders,
            handlers=app.job_handlers(),
        )
    job_parts(sup, app.store, app.settings, pool, relay=True)
    for name, adapter in app.adapters.items():
        sup.add(name, adapter.listen)
    if monitor:
        sup.add("monitor", app.monitor_scheduler().run)
    sup.add("retention", lambda stop: retention_loop(app.store, app.settings.privacy, stop))
    # The shared fetcher lives in the server's event loop: closed before the loop ends.
    sup.close_with(app.close_fetcher)
    sup.close_with(lambda: close_senders(senders))


async def stop_when_idle(store: Store, stop: asyncio.Event, *, poll: float) -> None:
    """Set stop once no job is queued or running (`factbot worker --until-idle`, benchmarks)."""
    while not stop.is_set():
        await asyncio.sleep(poll)
        try:
            counts = await store.call(store.jobs.counts)
        except DatabaseUnavailableError:
            continue  # the database is restarting: idle is decided once it answers
        if counts["queued"] == 0 and counts["running"] == 0:
            stop.set()


async def close_senders(senders: Mapping[str, ReplySender]) -> None:
    """Close the senders that hold connections (their sessions belong to this event loop)."""
    for sender in senders.values():
        if isinstance(sender, Closes):
            with contextlib.suppress(Exception):
                await sender.close()
