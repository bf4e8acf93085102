"""`monitor:scan` jobs: read one source from its kept cursor, store and score what it found.

A scheduled tick only enqueues a scan job (`bots.runtime.monitor.scheduler`); a worker runs it
here. The candidates a published fact-check answers (`priority`) are taken first, then the
rest in the source's order. For each candidate, in order:

1. a post already a candidate (UNIQUE platform + post id) is left alone: re-reading a source
   after a crash or a second scan of one slot stores nothing twice;
2. posts by factbot or other bots are ignored (not stored); a post that mentions factbot is
   kept as "skipped: mention": the platform's mention path answers it, and two answers in one
   thread are what the monitor must never cause;
3. the check-worthiness score (`score`); under the threshold → kept as "skipped: score";
4. a thread already answered, or an author answered `author_max_per_day` times in the last 24
   hours → "skipped: thread answered" / "skipped: author limit" (no money spent on it);
5. the one way in (`CheckRequests.submit`, kind `post`), whose steps 5-6 run in one write
   transaction: a stored check that answers it (same text, same claims, near duplicate) →
   "reused": routed at once with that check; the same post checked already (someone asked for
   it) → "skipped: already checked";
6. the budgets (`budget`): over one → kept as "skipped: budget", not lost; else a check job and
   a `monitor:route` job that waits for it, with the candidate row.

The source's cursor is saved in the transaction that marks the job done, after the candidates
are stored: a crash in between re-reads the same posts, which step 1 then skips.

Failure policy: a source that cannot be read now (`SourceUnavailableError`) ends the job with
nothing stored and the cursor kept (the next slot reads it again); an unknown source name is a
permanent error; a candidate whose post cannot be scored is kept as "skipped: unreadable".
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from bots.runtime.checking.requests import CheckRequests, FollowUp, Requested, RequestToCheck
from bots.runtime.checking.reuse import ReuseHit, ReuseIndex
from bots.runtime.monitor.budget import spend
from bots.runtime.monitor.candidates import Candidate, CandidateSource, SourceUnavailableError
from bots.runtime.monitor.priority import MatchesFactChecks, matched_first
from bots.runtime.monitor.worthiness import Score, score
from bots.runtime.platform.privacy import Pseudonyms
from bots.runtime.workers.pool import Outcome, PermanentJobError
from bots.settings import Settings
from pipeline.records.domain import Post, new_id
from pipeline.util.clock import SYSTEM, Clock
from storage import Store
from storage.codec import post_row
from storage.jobs import Job
from storage.monitor import CHECKING, REUSED, SKIPPED

log = logging.getLogger(__name__)

SCAN = "monitor:scan"
ROUTE = "monitor:route"
ANSWER = "answer"  # the action every public outcome takes in a thread (reply, note, review)
_DAY = timedelta(days=1)


def cursor_key(source: str) -> str:
    """Return the state key of a source's cursor."""
    return f"monitor:cursor:{source}"


def route_dedupe(candidate_id: str) -> str:
    """Return the dedupe key of a candidate's route job."""
    return f"monitor:route:{candidate_id}"


class ScanJobs:
    """Runs `monitor:scan` jobs over the sources the platform adapters offer."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        sources: Mapping[str, CandidateSource],
        *,
        reuse: ReuseIndex | None = None,
        requests: CheckRequests | None = None,
        factchecks: MatchesFactChecks | None = None,
        clock: Clock = SYSTEM,
    ) -> None:
        self.store = store
        self.factchecks = factchecks
        self.settings = settings
        self.sources = dict(sources)
        self.requests = requests or CheckRequests(
            store,
            reuse if settings.reuse.enabled else None,
            max_attempts=settings.jobs.max_attempts,
        )
        self.clock = clock
        self.pseudonyms = Pseudonyms(store, settings.privacy)

    async def run(self, job: Job) -> Outcome:
        """Read the job's source from its cursor and take every candidate it returns."""
        name = str(job.payload.get("source") or "")
        source = self.sources.get(name)
        if source is None:
            raise PermanentJobError(f"no monitor source named {name!r} in this worker")
        key = cursor_key(name)
        cursor = await self.store.call(self.store.state.get, key)
        try:
            batch = await source.fetch(cursor, self.settings.monitor.batch_size)
        except SourceUnavailableError as exc:
            log.warning(
                "monitor source unavailable; skipped until its next scan",
                extra={"source": name, "error": str(exc), "retry_after": exc.retry_after},
            )
            return Outcome()
        outcomes = await self.take(batch.candidates)
        log.info("monitor scan done", extra={"source": name, "outcomes": dict(outcomes)})
        state = self.store.state

        def save() -> None:
            if batch.cursor is not None:
                state.set(key, batch.cursor)

        return Outcome(store=save)

    async def take(self, candidates: Sequence[Candidate]) -> Counter[str]:
        """Store, score and decide every candidate, those a published fact-check answers first
        (`priority`); return how many ended each way."""
        outcomes: Counter[str] = Counter()
        for candidate in await matched_first(candidates, self.factchecks):
            outcomes[await self.consider(candidate)] += 1
        return outcomes

    async def consider(self, candidate: Candidate) -> str:
        """Decide one candidate (module doc) and return what became of it."""
        monitor = self.store.monitor
        platform, post_id = candidate.post.platform, candidate.post.platform_id
        if await self.store.call(monitor.known, platform, post_id):
            return "duplicate"
        if candidate.author.is_self or candidate.author.is_bot:
            return "ignored: bot"
        author = await self.store.call(self.pseudonyms.user, platform, candidate.author.user_id)
        post = dataclasses.replace(candidate.post, author=author)
        row = _row(candidate, post, author)
        if candidate.mentions_bot:
            return await self.store.call(self._keep, row, Score(0, 0, 0, 0, 0), SKIPPED, "mention")
        try:
            scored = score(candidate, self.settings.monitor)
        except Exception as exc:  # noqa: BLE001 - one odd post never stops a scan
            log.warning("candidate not scored", extra={"post": post_id, "error": repr(exc)})
            return await self.store.call(
                self._keep, row, Score(0, 0, 0, 0, 0), SKIPPED, "unreadable"
            )
        if scored.value < self.settings.monitor.threshold:
            return await self.store.call(self._keep, row, scored, SKIPPED, "score")
        blocked = await self.store.call(self._blocked, platform, candidate.thread_key, author)
        if blocked is not None:
            return await self.store.call(self._keep, row, scored, SKIPPED, blocked)
        row = {**row, "score": scored.value, "parts": scored.parts()}
        requested = await self.requests.submit(
            RequestToCheck(
                post, origin=f"monitor:{platform}", key=post_id, follow=self._route(row)
            ),
            admit=lambda hit: self._admit(row, scored, hit),
            record=lambda requested: self._record(row, requested),
        )
        if requested.refused is not None:
            return requested.refused
        if not requested.created:
            return "duplicate"
        return REUSED if requested.reused is not None else CHECKING

    def _blocked(self, platform: str, thread_key: str, author: str) -> str | None:
        monitor, limit = self.store.monitor, self.settings.monitor.author_max_per_day
        if monitor.action_taken(platform, thread_key, ANSWER):
            return "thread answered"
        since = self.clock.now() - _DAY
        if monitor.author_actions(platform, author, ANSWER, since) >= limit:
            return "author limit"
        return None

    def _keep(self, row: dict[str, Any], scored: Score, status: str, reason: str) -> str:
        row = {**row, "score": scored.value, "parts": scored.parts()}
        stored = self.store.monitor.add_candidate({**row, "status": status, "reason": reason})
        return f"{status}: {reason}" if stored else "duplicate"

    def _admit(self, row: dict[str, Any], scored: Score, hit: ReuseHit | None) -> str | None:
        """Decide in the write transaction; None goes on, else the outcome (and its row kept)."""
        monitor, settings = self.store.monitor, self.settings.monitor
        if hit is not None and hit.reason == "same post":
            return self._keep(row, scored, SKIPPED, "already checked")
        if hit is not None:
            reused = {**row, "check_id": hit.check_id, "status": REUSED, "reason": hit.reason}
            return None if monitor.add_candidate(reused) else "duplicate"
        if monitor.known(row["platform"], row["post_id"]):
            return "duplicate"
        refusal = spend(monitor, settings, self.clock.now()).refusal(settings)
        if refusal is not None:
            log.info("candidate over budget", extra={"post": row["post_id"], "budget": refusal})
            return self._keep(row, scored, SKIPPED, "budget")
        return None

    def _record(self, row: dict[str, Any], requested: Requested) -> None:
        """Store the candidate of a new check (a reused one is stored by `_admit`), its route."""
        if requested.reused is None:
            check_job = requested.check_job
            self.store.monitor.add_candidate(
                {
                    **row,
                    "status": CHECKING,
                    "check_id": requested.check_id,
                    "check_job_id": check_job.id if check_job else None,
                }
            )
        if requested.follow_job is not None:
            self.store.monitor.set_route_job(row["id"], requested.follow_job.id)

    def _route(self, row: dict[str, Any]) -> FollowUp:
        """Return the route job that waits for the candidate's check."""
        return FollowUp(
            ROUTE,
            {"candidate_id": row["id"]},
            dedupe_key=route_dedupe(row["id"]),
            max_attempts=max(self.settings.jobs.max_attempts, 5),
        )


def _row(candidate: Candidate, post: Post, author: str) -> dict[str, Any]:
    dest = candidate.destination
    return {
        "id": new_id(),
        "platform": post.platform,
        "post_id": post.platform_id,
        "source": candidate.source,
        "thread_key": candidate.thread_key,
        "author": author,
        "workspace_id": dest.workspace_id,
        "channel_id": dest.channel_id,
        "mentions_bot": candidate.mentions_bot,
        "post": post_row(post),
        "destination": {**dest.to_json(), "private": {}},
    }
