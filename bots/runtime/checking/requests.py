"""One way in: every request to check a post is one call, `CheckRequests.submit(request)`.

The HTTP API, the dashboard's try-it page, each platform (behind its guards,
`bots.runtime.platform.intake`) and the proactive monitor (`bots.runtime.monitor.scan`) each make a
`RequestToCheck` and submit it. `submit` owns what they used to write each on their own:

- **reuse or store**: the reuse index (`bots.runtime.checking.reuse`, the one place that decides
  which stored check answers a post) is asked first; a hit counts only while its check is stored;
- **what is asked**: the request's kind (`RequestToCheck.kind`, the post's `Post.kind`: a platform
  `post`, typed `text`, `image`s alone, or a `page` to fetch) is stored with its post, so the
  worker reads it from a field instead of guessing it from the post's shape;
- **dedupe keys**: a check job's key is ``<origin>:<key>`` (``api:<Idempotency-Key>``,
  ``slack:<event id>``, ``monitor:<platform>:<post id>``), so a retried request stores nothing;
- **the job pair**: the check job and the job that follows it (a platform's reply job, the
  monitor's route job), which waits for the check job and is told its check's id, stored in
  one write transaction with the post.

A caller that decides more between the look-up and the writes (a platform's rate limits, the
monitor's budgets) passes `admit`, run first inside that same write transaction (it may refuse,
and may write its own refusal), and `record`, run last inside it to write its own rows (the
platform's request row, the monitor's candidate). A replay racing the first delivery therefore
stores one set of rows and spends one token.

Shared links are never fetched here: a request for a page is a post of kind `page` made of its
link (`pipeline.inputs.posts.page_request`), and the worker fetches the page (`bots.app.checks`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bots.runtime.checking.check_jobs import submit_check
from bots.runtime.checking.reuse import ReuseHit, ReuseIndex
from pipeline.errors import NotFoundError
from pipeline.inputs.language import letters_by_script
from pipeline.records.domain import Post, PostKind
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
class RequestToCheck:
    """One request to check a post, from whichever way it came in."""

    post: Post  # what to check; its `kind` says what it is (a post, text, images, a page)
    origin: str  # the way in: "api", "web", a platform's name, "monitor:<platform>"
    key: str | None = None  # the natural key (an event id, an Idempotency-Key, a post id)
    fresh: bool = False  # check again even when a stored check answers the post
    before: datetime | None = None  # only evidence published before this time
    notes: Sequence[str] = ()  # what the way in could not take (e.g. an image over the limit)
    follow: FollowUp | None = None  # the job that runs once the check job has ended

    def __post_init__(self) -> None:
        if not self.origin:
            raise ValueError("a check request needs an origin (the way it came in)")
        if self.key is not None and not self.key.strip():
            raise ValueError("a check request's key, when given, must not be blank")

    @property
    def kind(self) -> PostKind:
        """Return what the request asks to have checked (stored with its post)."""
        return self.post.kind


@dataclass(frozen=True)
class Requested:
    """What became of a request: the check that answers it and the jobs stored for it."""

    check_id: str | None
    check_job: Job | None  # None when a stored check answers it (or nothing was stored)
    follow_job: Job | None
    reused: ReuseHit | None
    created: bool  # False when a dedupe key named jobs that already existed: nothing stored
    refused: str | None = None  # what `admit` answered when it refused: nothing was stored


# Run inside the write transaction before anything is stored: None to go on, else why not.
Admit = Callable[[ReuseHit | None], str | None]
# Run inside the same transaction once the jobs are stored (only when they are new).
Record = Callable[[Requested], None]


class CheckRequests:
    """Reuse a stored check, else store the post, a check job and the job that follows it."""

    def __init__(
        self, store: Store, reuse: ReuseIndex | None = None, *, max_attempts: int = 3
    ) -> None:
        self.store = store
        self.reuse = reuse
        self.max_attempts = max_attempts

    async def _reusable(
        self, post: Post, *, before: datetime | None = None, fresh: bool = False
    ) -> ReuseHit | None:
        """Return the stored check that answers post, or None (fresh: always None).

        Which check answers which post is the reuse index's to say (a post with images only a
        check of the same words and the same images: `bots.runtime.checking.reuse`); a post
        with leads (`Post.leads`) only a check that read them all.
        """
        if fresh or self.reuse is None:
            return None
        hit = await self.reuse.find(post, before=before)
        if hit is None:
            return None
        try:
            stored = await self.store.call(self.store.checks.get, hit.check_id)
        except NotFoundError:  # the fingerprint outlived its check (retention, forget): a miss
            log.info("reused check is gone; checking again", extra={"check_id": hit.check_id})
            return None
        if not set(post.leads) <= set(stored.post.leads):
            # Pages suggested as evidence that the stored check never read: read them now.
            log.info(
                "reused check did not read the leads; checking", extra={"check_id": hit.check_id}
            )
            return None
        if _script(stored.post.text) != _script(post.text):
            # Its reply is in its post's language: a post in another script gets its own check
            # (an English embedder scores unrelated Arabic and Hindi texts near 1).
            log.info(
                "reused check is in another script; checking", extra={"check_id": hit.check_id}
            )
            return None
        return hit

    async def submit(
        self,
        request: RequestToCheck,
        *,
        admit: Admit | None = None,
        record: Record | None = None,
    ) -> Requested:
        """Answer request from a stored check, else store its post, check job and follow-up.

        With no follow-up a stored check that answers the post is all there is: nothing is
        stored. Otherwise `admit`, the writes and `record` share one write transaction; with a
        key, a request seen before stores nothing and comes back with `created` False.
        """
        hit = await self._reusable(request.post, before=request.before, fresh=request.fresh)
        if hit is not None and request.follow is None:
            return Requested(hit.check_id, None, None, hit, created=False)
        requested = await self.store.call(self._write, request, hit, admit, record)
        if requested.created:
            log.info(
                "check requested",
                extra={"origin": request.origin, "kind": request.kind, "reused": hit is not None},
            )
        return requested

    def _write(
        self,
        request: RequestToCheck,
        hit: ReuseHit | None,
        admit: Admit | None,
        record: Record | None,
    ) -> Requested:
        """Admit, store and record in one write transaction (in a storage thread)."""
        with immediate(self.store.db):
            refused = admit(hit) if admit is not None else None
            if refused is not None:
                return Requested(None, None, None, hit, created=False, refused=refused)
            requested = self._store(request, hit)
            if requested.created and record is not None:
                record(requested)
        return requested

    def _store(self, request: RequestToCheck, reused: ReuseHit | None) -> Requested:
        """Store the check job (unless reused) and the follow-up job; the caller's transaction."""
        post, follow = request.post, request.follow
        key, origin = request.key, request.origin
        check_job = None
        check_id = reused.check_id if reused is not None else None
        if reused is None:
            submitted = submit_check(
                self.store,
                post,
                before=request.before,
                dedupe_key=f"{origin}:{key}" if key is not None else None,
                max_attempts=self.max_attempts,
                notes=request.notes,
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


def _script(text: str) -> str | None:
    """Return the script most of text's letters are written in (None: no letters)."""
    counts = letters_by_script(text).most_common(1)
    return counts[0][0] if counts else None
