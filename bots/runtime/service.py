"""The worker side of a process: build the pool over an open App and run it until stopped.

The runtime never imports the composition root (`bots.app` composes the runtime, not the
other way round): it takes anything with the App's shape, `RuntimeApp`.

`factbot serve` runs it beside the API in the server's event loop; `factbot worker` runs it
alone. `run_jobs` runs a pool on the configured queue engine (builtin, or saq with its relay).
`install_signal_handlers` turns SIGTERM and SIGINT into the pool's stop event.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Mapping
from typing import Protocol

from bots.runtime.checking.check_jobs import CHECK, AfterCheck, CheckJobs, CheckRunner
from bots.runtime.checking.reuse import ReuseIndex
from bots.runtime.delivery.deliver import ReplyJobs
from bots.runtime.platform.contract import Closes, ReplySender
from bots.runtime.platform.intake import reply_kind
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


async def run_jobs(
    pool: WorkerPool, settings: Settings, stop: asyncio.Event, *, relay: bool = False
) -> None:
    """Run pool's jobs on the configured queue engine (FACTBOT_QUEUE__ENGINE) until stop is set.

    builtin: the pool's workers claim rows from the jobs table. saq: a saq worker runs the jobs
    a relay hands to saq; with `relay` this process runs a relay too (a relay elsewhere, in
    `factbot serve` or `factbot relay`, does otherwise)."""
    if settings.queue.engine != "saq":
        await pool.run(stop)
        return
    from bots.runtime.workers.saq_engine import Relay, open_queue, run_saq_worker

    runs = [run_saq_worker(pool, settings, stop)]
    if relay:
        runs.append(Relay(pool.store, open_queue(settings), settings).run(stop))
    await asyncio.gather(*runs)


def install_signal_handlers(stop: asyncio.Event) -> None:
    """Set stop on SIGTERM or SIGINT (the second SIGINT falls back to KeyboardInterrupt)."""
    loop = asyncio.get_running_loop()

    def on_int() -> None:
        if stop.is_set():
            loop.remove_signal_handler(signal.SIGINT)
            raise KeyboardInterrupt
        stop.set()

    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, on_int)


async def stop_when_idle(store: Store, stop: asyncio.Event, *, poll: float) -> None:
    """Set stop once no job is queued or running (`factbot worker --until-idle`, benchmarks)."""
    while not stop.is_set():
        await asyncio.sleep(poll)
        try:
            counts = store.jobs.counts()
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
