"""Jobs as the API shows them, and waiting for one to end."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from bots.api.jobview import job_view
from storage import Store
from storage.jobs import Job

TERMINAL = ("done", "dead")


def job_to_json(store: Store, job: Job) -> dict[str, Any]:
    """Return a job with its stage progress and links as a JSON-serialisable dict."""
    view = job_view(store, job)
    check_id = view["check_id"]
    view["links"] = {
        "self": f"/api/jobs/{job.id}",
        "check": f"/api/checks/{check_id}",
        "events": f"/api/checks/{check_id}/events",
    }
    return view


async def wait_for_job(store: Store, job_id: str, seconds: float) -> Job:
    """Return the job once it is done or dead, or as it is after `seconds`."""
    delay = 0.02
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            while True:
                job = await store.call(store.jobs.get, job_id)
                if job is None or job.status in TERMINAL:
                    break
                await asyncio.sleep(delay)
                delay = min(delay * 1.5, 0.25)
    job = await store.call(store.jobs.get, job_id)
    assert job is not None
    return job
