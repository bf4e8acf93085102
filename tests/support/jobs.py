"""Run an App's jobs until none is left, on the App's configured queue engine."""

from __future__ import annotations

import asyncio

from bots.app.root import App
from bots.runtime.service import build_pool, close_senders, run_jobs, stop_when_idle


async def drain(app: App, *, concurrency: int = 1, seconds: float = 60.0) -> None:
    """Run a worker pool over app (checks, the replies of its platforms, its other job kinds)
    until no job is queued or running: builtin workers, or on saq a saq worker beside a relay
    (as under `factbot serve`). The senders are closed after."""
    senders = app.senders()
    pool = build_pool(app, concurrency=concurrency, senders=senders, handlers=app.job_handlers())
    stop = asyncio.Event()
    try:
        async with asyncio.timeout(seconds):
            await asyncio.gather(
                run_jobs(pool, app.settings, stop, relay=True),
                stop_when_idle(app.store, stop, poll=0.05),
            )
    finally:
        await close_senders(senders)
