"""`monitor:route` jobs: once a candidate's check has ended, apply the posting policy once.

The job waits for the check job (`jobs.waits_for`); a reused candidate's job runs at once with
the stored check. It reads the check, records its cost on the candidate (what the money budget
counts), asks `policy.decide` where the result goes, and then, in ONE immediate transaction:

- takes the thread's "answer" action (`monitor_actions`, UNIQUE platform + thread + action):
  a thread already answered (another candidate of it, a second scheduler, a retried job) gets
  nothing more;
- refuses when the author was answered `author_max_per_day` times in the last 24 hours;
- enqueues the work: a `reply:<platform>` job (the mention path's renderer, URL audit and
  `send_once`; event key "monitor:<candidate id>"), an `x:note` job, or a review proposal
  (`ReviewQueue.propose`, key "monitor:<platform>:<post id>");
- records the outcome on the candidate.

A check that found the post accurate ends with nothing posted and the outcome "nothing"; a
dead check job ends with "failed" (nothing posted: a monitored author never asked).

Failure policy: a candidate or check that is gone is a permanent error; a route that needs the
review queue when this process has none is a permanent error naming it (the job stays dead,
visible to the operator, and can be retried once the queue is configured).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Protocol

from bots.runtime.monitor.policy import Decision, decide
from bots.runtime.monitor.scan import ANSWER
from bots.runtime.platform.contract import Destination
from bots.runtime.platform.intake import reply_kind
from bots.runtime.workers.pool import Outcome, PermanentJobError
from bots.settings import Settings
from pipeline.errors import NotFoundError
from pipeline.records.domain import Check
from pipeline.util.clock import SYSTEM, Clock
from storage import Store
from storage.jobs import Job
from storage.monitor import REUSED, CandidateRow
from storage.tx import immediate

log = logging.getLogger(__name__)

NOTE = "x:note"


class Proposer(Protocol):
    """The review queue as the monitor uses it (`bots.runtime.review.proposals.ReviewQueue`)."""

    def propose(
        self,
        *,
        check_id: str,
        destination: Destination,
        reason: str,
        key: str,
        check_job: str | None = None,
    ) -> object:
        """Store a proposed correction for a human to approve (idempotent on key)."""
        ...


def event_key(candidate_id: str) -> str:
    """Return the event key of a monitor reply (its reply ledger key and job dedupe)."""
    return f"monitor:{candidate_id}"


class RouteJobs:
    """Runs `monitor:route` jobs."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        review: Proposer | None = None,
        clock: Clock = SYSTEM,
    ) -> None:
        self.store = store
        self.settings = settings
        self.review = review
        self.clock = clock

    async def run(self, job: Job) -> Outcome:
        """Route the job's candidate once its check has ended."""
        return await self.store.call(self._route, job)

    def _route(self, job: Job) -> Outcome:
        """Route the job's candidate (in a storage thread: it is reads and writes only)."""
        monitor = self.store.monitor
        candidate = monitor.candidate(str(job.payload.get("candidate_id")))
        if candidate is None:
            raise PermanentJobError(f"route job {job.id}: the candidate is gone")
        if candidate.outcome is not None:
            return Outcome(result_id=candidate.outcome)  # routed already (a retried job)
        check_job = self.store.jobs.get(candidate.check_job_id) if candidate.check_job_id else None
        if check_job is not None and check_job.status == "dead":
            monitor.routed(candidate.id, "failed", cost_usd=None)
            return Outcome(result_id="failed")
        if check_job is not None and check_job.status != "done":
            raise RuntimeError(f"check job {check_job.id} is {check_job.status}, not ended")
        try:
            check = self.store.checks.get(str(candidate.check_id))
        except NotFoundError as exc:
            raise PermanentJobError(f"route job {job.id}: the check was not stored") from exc
        reused = candidate.status == REUSED
        cost = None if reused else sum(u.cost_usd for u in check.usage)
        decision = decide(
            check,
            platform=candidate.platform,
            channel_id=candidate.channel_id,
            mentions_bot=candidate.mentions_bot,
            settings=self.settings,
        )
        outcome = self._apply(candidate, check, decision, cost)
        log.info(
            "monitor candidate routed",
            extra={
                "candidate": candidate.id,
                "platform": candidate.platform,
                "verdict": check.verdict.label.value,
                "route": decision.route,
                "outcome": outcome,
            },
        )
        return Outcome(result_id=outcome)

    def _apply(
        self, candidate: CandidateRow, check: Check, decision: Decision, cost: float | None
    ) -> str:
        monitor = self.store.monitor
        if decision.route == "nothing":
            monitor.routed(candidate.id, "nothing", cost_usd=cost)
            return "nothing"
        if decision.route == "review" and self.review is None:
            raise PermanentJobError(
                "the result goes to the review queue, but this worker has none (configure "
                "FACTBOT_REVIEW__*, then retry the job)"
            )
        with immediate(self.store.db):
            since = self.clock.now() - timedelta(days=1)
            limit = self.settings.monitor.author_max_per_day
            author = candidate.author
            if author is not None:
                answered = monitor.author_actions(candidate.platform, author, ANSWER, since)
                if answered >= limit:
                    monitor.routed(candidate.id, "skipped: author limit", cost_usd=cost)
                    return "skipped: author limit"
            taken = monitor.take_action(
                candidate.platform,
                candidate.thread_key,
                ANSWER,
                route=decision.route,
                candidate_id=candidate.id,
                author=author,
            )
            if not taken:
                monitor.routed(candidate.id, "skipped: thread answered", cost_usd=cost)
                return "skipped: thread answered"
            job_id = self._enqueue(candidate, check, decision)
            if job_id is not None:
                monitor.set_action_job(candidate.platform, candidate.thread_key, ANSWER, job_id)
            monitor.routed(candidate.id, decision.route, cost_usd=cost)
        return decision.route

    def _enqueue(self, candidate: CandidateRow, check: Check, decision: Decision) -> str | None:
        jobs = self.store.jobs
        destination = Destination.from_json(candidate.destination)
        if decision.route == "reply":
            key = event_key(candidate.id)
            job, _ = jobs.enqueue(
                reply_kind(candidate.platform),
                {
                    "event_key": key,
                    "check_id": check.id,
                    "check_job": candidate.check_job_id,
                    "reused": candidate.status == REUSED,
                    "destination": destination.to_json(),
                    "notes": [],
                    "via": "monitor",
                },
                dedupe_key=f"reply:{candidate.platform}:{key}",
                max_attempts=max(self.settings.jobs.max_attempts, 5),
            )
            return job.id
        if decision.route == "note":
            job, _ = jobs.enqueue(
                NOTE,
                {
                    "check_id": check.id,
                    "check_job": candidate.check_job_id,
                    "post_id": candidate.post_id,
                    "key": f"x:note:{candidate.post_id}",
                },
                dedupe_key=f"x:note:{candidate.post_id}",
                max_attempts=max(self.settings.jobs.max_attempts, 5),
                waits_for=candidate.check_job_id,
            )
            return job.id
        assert self.review is not None
        self.review.propose(
            check_id=check.id,
            destination=destination,
            reason=decision.reason,
            key=f"monitor:{candidate.platform}:{candidate.post_id}",
            check_job=candidate.check_job_id,
        )
        return None
