"""Check jobs: how a request becomes a stored post plus a job, and how a worker runs it.

`submit_check` stores the post and a `check` job — deduplicated by the request's natural key —
before the request is acknowledged, and names the check the job will produce, so a caller can
follow it at once. Only the one way in calls it (`CheckRequests.submit`,
bots/runtime/checking/requests.py); adapters never do.

`CheckJobs` is the worker side: it loads the stored post, runs the pipeline with stage progress
recorded on the job, and hands the check back to be stored in the transaction that marks the job
done, so a check is stored at most once per job whatever crashes or restarts happen.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from bots.runtime.checking.reuse import ReuseIndex
from bots.runtime.workers.pool import Outcome, PermanentJobError
from pipeline.records.domain import Check, Post, new_id
from pipeline.run import Progress
from storage import Store
from storage.jobs import Job

log = logging.getLogger(__name__)

CHECK = "check"

# Told about every check a worker finished (e.g. to remember it for reuse, or to reply).
AfterCheck = Callable[[Job, Check], Awaitable[None]]


@dataclass(frozen=True)
class Submission:
    """An accepted check request: its job, the check it will produce, and whether it is new."""

    job: Job
    check_id: str
    created: bool  # False when the dedupe key named a job that already existed


def submit_check(
    store: Store,
    post: Post,
    *,
    before: datetime | None = None,
    dedupe_key: str | None = None,
    max_attempts: int = 3,
    notes: Sequence[str] = (),
) -> Submission:
    """Store post and a check job (unless dedupe_key exists) and return the submission.

    `notes` are what the adapter could not take from the request (e.g. an image over the size
    limit): they are kept with the job, and shown with its progress and its check.
    """
    check_id = new_id()
    payload: dict[str, Any] = {
        "check_id": check_id,
        "before": before.isoformat() if before else None,
    }
    if notes:
        payload["notes"] = list(notes)
    job, created = store.jobs.enqueue(
        CHECK, payload, dedupe_key=dedupe_key, post=post, max_attempts=max_attempts
    )
    return Submission(
        job=job, check_id=str(job.payload.get("check_id") or check_id), created=created
    )


class CheckRunner(Protocol):
    """What a check job needs of the composition root: the store, and running a check."""

    @property
    def store(self) -> Store:
        """Return the database."""
        ...

    async def run_check(
        self,
        post: Post,
        *,
        before: datetime | None = None,
        progress: Progress | None = None,
    ) -> Check:
        """Run a check and return it unsaved."""
        ...


class CheckJobs:
    """Runs `check` jobs through the composition root's pipeline (`bots.app.root.App`)."""

    def __init__(
        self,
        app: CheckRunner,
        *,
        reuse: ReuseIndex | None = None,
        after: AfterCheck | None = None,
    ) -> None:
        self.app = app
        self.reuse = reuse
        self.after = after

    async def run(self, job: Job) -> Outcome:
        """Check the job's post and return the check to store with the job."""
        store = self.app.store
        post = await store.call(store.jobs.post, job.post_id) if job.post_id else None
        if post is None:
            raise PermanentJobError(f"job {job.id} has no stored post")
        raw_before = job.payload.get("before")
        before = datetime.fromisoformat(raw_before) if raw_before else None

        async def progress(stage: str, seconds: float | None) -> None:
            # Awaited in stage order: each event is stored before the next stage starts, so a
            # job's events keep their order (an SSE reader follows them by sequence number).
            if seconds is None:
                await store.call(store.jobs.progress, job.id, stage, "started")
            else:
                await store.call(store.jobs.progress, job.id, stage, "done", seconds=seconds)

        check = await self.app.run_check(post, before=before, progress=progress)
        check_id = str(job.payload.get("check_id") or check.id)
        check = dataclasses.replace(check, id=check_id)
        # Its reuse fingerprint is stored with it: whoever is answered with the check can be
        # answered again from it at once.
        fingerprint = await self.reuse.fingerprint(check) if self.reuse is not None else None
        after = self.after

        def save() -> None:
            store.checks.save(check)
            if fingerprint is not None:
                store.reuse.add(fingerprint)

        async def follow() -> None:
            assert after is not None
            await after(job, check)

        return Outcome(result_id=check.id, store=save, after=follow if after else None)
