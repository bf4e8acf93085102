"""One way in: every request to check a post goes through `CheckRequests`.

The HTTP API, the dashboard's try-it page, each platform (behind its guards,
`bots.runtime.platform.intake`) and the proactive monitor (`bots.runtime.monitor.scan`) all call it.
It owns the three things they used to write each on their own:

- **reuse or submit**: `reusable` asks the reuse index (`bots.runtime.checking.reuse`, the one place
  that decides which stored check answers a post) and returns a hit only while its check is stored;
- **dedupe keys**: a check job's key is ``<origin>:<key>`` (``api:<Idempotency-Key>``,
  ``slack:<event id>``, ``monitor:<platform>:<post id>``), so a retried request stores nothing;
- **the job pair**: the check job and the job that follows it (a platform's reply job, the
  monitor's route job), which waits for the check job and is told its check's id, stored in
  one transaction with the post.

`submit` does it all. Callers that decide more between the look-up and the writes (a platform's
rate limits, the monitor's budgets, in the same write transaction) call `reusable`, then
`enqueue` inside their own `storage.tx.immediate` block.

Shared links are never fetched here: a request for a page is a post made of its link
(`pipeline.inputs.posts.page_request`), and the worker fetches the page (`bots.app.checks`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bots.runtime.checking.check_jobs import submit_check
from bots.runtime.checking.reuse import ReuseHit, ReuseIndex
from pipeline.errors import NotFoundError
from pipeline.inputs.language import letters_by_script
from pipeline.records.domain import Post
from storage import Store
from storage.jobs import Job
from storage.tx import immediate

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FollowUp:
    """The job that runs once the check job has ended (done or dead): a reply, a route."""

    kind: str
    payload: Mapping[str, Any]  # the service adds "check_id", "check_job" and "reused"
    dedupe_key: str
    max_attempts: int


@dataclass(frozen=True)
class Requested:
    """What became of a request: the check that answers it and the jobs stored for it."""

    check_id: str | None
    check_job: Job | None  # None when a stored check answers it (or nothing was stored)
    follow_job: Job | None
    reused: ReuseHit | None
    created: bool  # False when a dedupe key named jobs that already existed: nothing stored


class CheckRequests:
    """Reuse a stored check, else store the post, a check job and the job that follows it."""

    def __init__(
        self, store: Store, reuse: ReuseIndex | None = None, *, max_attempts: int = 3
    ) -> None:
        self.store = store
        self.reuse = reuse
        self.max_attempts = max_attempts

    async def reusable(
        self, post: Post, *, before: datetime | None = None, fresh: bool = False
    ) -> ReuseHit | None:
        """Return the stored check that answers post, or None (fresh: always None).

        Which check answers which post is the reuse index's to say (a post with images only a
        check of the same words and the same images: `bots.runtime.checking.reuse`).
        """
        if fresh or self.reuse is None:
            return None
        hit = await self.reuse.find(post, before=before)
        if hit is None:
            return None
        try:
            stored = self.store.checks.get(hit.check_id)
        except NotFoundError:  # the fingerprint outlived its check (retention, forget): a miss
            log.info("reused check is gone; checking again", extra={"check_id": hit.check_id})
            return None
        if _script(stored.post.text) != _script(post.text):
            # Its reply is in its post's language: a post in another script gets its own check
            # (an English embedder scores unrelated Arabic and Hindi texts near 1).
            log.info(
                "reused check is in another script; checking", extra={"check_id": hit.check_id}
            )
            return None
        return hit

    def enqueue(
        self,
        post: Post,
        *,
        origin: str,
        key: str | None = None,
        before: datetime | None = None,
        notes: Sequence[str] = (),
        reused: ReuseHit | None = None,
        follow: FollowUp | None = None,
    ) -> Requested:
        """Store the check job (unless reused) and the follow-up job, in one transaction.

        `key` is the request's natural key (an event id, an Idempotency-Key); with it, a
        request seen before stores nothing and comes back with `created` False.
        """
        with immediate(self.store.db):
            check_job = None
            check_id = reused.check_id if reused is not None else None
            if reused is None:
                submitted = submit_check(
                    self.store,
                    post,
                    before=before,
                    dedupe_key=f"{origin}:{key}" if key is not None else None,
                    max_attempts=self.max_attempts,
                    notes=notes,
                )
                check_job, check_id = submitted.job, submitted.check_id
                if not submitted.created:
                    return Requested(check_id, check_job, None, None, created=False)
            follow_job = None
            if follow is not None:
                payload = {
                    **follow.payload,
                    "check_id": check_id,
                    "check_job": check_job.id if check_job else None,
                    "reused": reused is not None,
                }
                follow_job, created = self.store.jobs.enqueue(
                    follow.kind,
                    payload,
                    dedupe_key=follow.dedupe_key,
                    max_attempts=follow.max_attempts,
                    waits_for=check_job.id if check_job else None,
                )
                if not created:
                    return Requested(check_id, check_job, follow_job, reused, created=False)
        return Requested(check_id, check_job, follow_job, reused, created=True)

    async def submit(
        self,
        post: Post,
        *,
        origin: str,
        key: str | None = None,
        fresh: bool = False,
        before: datetime | None = None,
        notes: Sequence[str] = (),
        follow: FollowUp | None = None,
    ) -> Requested:
        """Answer post from a stored check, else submit it; see `enqueue` for the rest."""
        hit = await self.reusable(post, before=before, fresh=fresh)
        if hit is not None and follow is None:
            return Requested(hit.check_id, None, None, hit, created=False)
        return self.enqueue(
            post, origin=origin, key=key, before=before, notes=notes, reused=hit, follow=follow
        )


def _script(text: str) -> str | None:
    """Return the script most of text's letters are written in (None: no letters)."""
    counts = letters_by_script(text).most_common(1)
    return counts[0][0] if counts else None
