"""A job as the dashboard shows it (kept apart from bots.api: the API imports the dashboard)."""

from __future__ import annotations

from typing import Any

from storage import Store
from storage.jobs import Job


def job_view(store: Store, job: Job) -> dict[str, Any]:
    """Return what the jobs and progress pages show of a job, with its stages in order."""
    stages: dict[str, dict[str, Any]] = {}
    for event in store.jobs.events(job.id):
        if event.stage != "job":
            entry = stages.setdefault(event.stage, {"stage": event.stage, "seconds": None})
            entry["status"] = event.status
            if event.status != "started":
                entry["seconds"] = event.detail.get("seconds")
    return {
        "id": job.id,
        "kind": job.kind,
        "status": job.status,
        "attempts": job.attempts,
        "max_attempts": job.max_attempts,
        "check_id": job.result_id or job.payload.get("check_id"),
        "error": job.last_error,
        "notes": [str(n) for n in job.payload.get("notes") or ()] if job.kind == "check" else [],
        "created_at": job.created_at.isoformat() if job.created_at else None,
        "stages": list(stages.values()),
    }
