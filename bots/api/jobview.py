"""A job as people see it: the dashboard's jobs and progress pages and `GET /api/jobs/{id}`.

It lives with the API because the dashboard may import the API, never the other way round (an
import contract); the API adds its links (`bots.api.jobs.job_to_json`).
"""

from __future__ import annotations

from typing import Any

from storage import Store
from storage.jobs import Job


def job_view(store: Store, job: Job) -> dict[str, Any]:
    """Return a job with its stages in order, as a JSON-serialisable dict."""
    stages: dict[str, dict[str, Any]] = {}
    for event in store.jobs.events(job.id):
        if event.stage == "job":
            continue
        entry = stages.setdefault(event.stage, {"stage": event.stage, "seconds": None})
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
        "check_id": job.result_id or job.payload.get("check_id"),
        "error": job.last_error,
        "notes": [str(n) for n in job.payload.get("notes") or ()],
        "created_at": job.created_at.isoformat() if job.created_at else None,
        "started_at": job.started_at.isoformat() if job.started_at else None,
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
        "retry_at": job.run_after.isoformat() if job.run_after and job.status == "queued" else None,
        "stages": list(stages.values()),
    }
