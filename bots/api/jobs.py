"""Jobs as the API shows them, and waiting for one to end."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from storage import Store
from storage.jobs import Job

TERMINAL = ("done", "dead")


def job_to_json(store: Store, job: Job) -> dict[str, Any]:
    """Return a job with its stage progress as a JSON-serialisable dict."""
    check_id = job.result_id or job.payload.get("check_id")
    stages: dict[str, dict[str, Any]] = {}
    for event in store.jobs.events(job.id):
        if event.stage == "job":
            continue
        entry = stages.setdefault(event.stage, {"stage": event.stage, "status": "started"})
        entry["status"] = event.status
        if event.status == "started":
            entry["started_at"] = event.at.isoformat()
        else:
            entry["seconds"] = event.detail.get("seconds")
    return {
        "id": job.id,
        "kind": job.kind,
        "status": job.status,
        "attempts": job.attempts,
        "max_attempts": job.max_attempts,
        "check_id": check_id,
        "error": job.last_error,
        "notes": [str(n) for n in job.payload.get("notes") or ()],
        "created_at": job.created_at.isoformat() if job.created_at else None,
        "started_at": job.started_at.isoformat() if job.started_at else None,
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
        "retry_at": job.run_after.isoformat() if job.run_after and job.status == "queued" else None,
        "stages": list(stages.values()),
        "links": {
            "self": f"/api/jobs/{job.id}",
            "check": f"/api/checks/{check_id}",
            "events": f"/api/checks/{check_id}/events",
        },
    }


async def wait_for_job(store: Store, job_id: str, seconds: float) -> Job:
    """Return the job once it is done or dead, or as it is after `seconds`."""
    delay = 0.02
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            while True:
                job = store.jobs.get(job_id)
                if job is None or job.status in TERMINAL:
                    break
                await asyncio.sleep(delay)
                delay = min(delay * 1.5, 0.25)
    job = store.jobs.get(job_id)
    assert job is not None
    return job
