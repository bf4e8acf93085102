"""The Community Notes jobs: `x:note` writes, scores and submits one note; `x:notes-status`
records what X later says of the notes written.

`x:note` (payload {check_id, check_job, post_id, key}; enqueued by the monitor through
`storage.x_notes.enqueue_note`, waiting for the check job):

1. the check ended dead, or the decision (`pipeline.communitynotes.drafting`) is "no note
   needed" or "not enough evidence": done, no note (the decision is logged);
2. the note is written and scored locally and stored (one row per post: a retried job finds
   it and goes on from there); a note whose scores would not pass, or written while notes are
   off, is `withheld` and never submitted;
3. the note is evaluated (`POST /2/evaluate_note`, else `POST /2/notes/evaluate`: `_community`)
   — its `claim_opinion_score` is recorded beside factbot's own, once: a retried attempt does
   not evaluate again; a score below 0 withholds the note (X's evaluator reads it as opinion or
   off the claim);
4. `POST /2/notes` with `test_mode` while the writer is not admitted — the note id is recorded
   (`submitted`). A retried attempt first looks in `notes_written` for a note on the post, so a
   worker that died after X took the note does not submit a second one.

A rate limit (a 429, or the client's own windows: `_client.Limits`) retries the job when the
window resets. An evaluation X could not give — no evaluate route answering (404 on both), a
5xx, no connection — retries the job later: it says nothing of the note. A refusal of the note
itself (403 `client-not-enrolled`, 400) marks it `rejected` with X's reason and ends the job:
resubmitting would not help.

`x:notes-status` reads `GET /2/notes/search/notes_written` (with `note.fields`) and records each
note's status (helpful / not helpful / needs more ratings) and, in test mode, the evaluator's
buckets.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any

from bots.platforms.x._client import XApiError, XRateLimitedError
from bots.platforms.x._community import NotesApi
from bots.platforms.x._notes import Draft, Scores, score, write_note
from bots.runtime.workers.jobtypes import Job, Outcome, PermanentJobError, RetryLaterError
from bots.settings import Settings
from pipeline.communitynotes.claimopinion import ClaimOpinionScorer
from pipeline.embedding.e5 import E5Embedder
from pipeline.errors import NotFoundError
from pipeline.fetch.fetcher import Fetcher
from pipeline.records.domain import new_id
from pipeline.verifier.stance import StanceModel
from storage.x_notes import XNote, XNotesRepo

log = logging.getLogger(__name__)

RATING = {
    "currently_rated_helpful": "helpful",
    "currently_rated_not_helpful": "not_helpful",
    "needs_more_ratings": "needs_more_ratings",
}
EVALUATE_RETRY = 15 * 60.0  # seconds before a job whose note X could not evaluate tries again


class NoteJobs:
    """Runs `x:note` jobs."""

    def __init__(self, settings: Settings, store: Any, notes: NotesApi, repo: XNotesRepo) -> None:
        self.settings = settings
        self.store = store  # storage.Store: checks and jobs are read through it
        self.notes = notes
        self.repo = repo
        self._scorer: ClaimOpinionScorer | None = None

    @property
    def scorer(self) -> ClaimOpinionScorer:
        """Return the ClaimOpinion scorer (its models load once a process, on first use)."""
        if self._scorer is None:
            vs = self.settings.verifier
            stance = StanceModel(vs.model_dir, batch_size=vs.batch_size, threads=vs.threads)
            self._scorer = ClaimOpinionScorer(stance, E5Embedder(threads=vs.threads))
        return self._scorer

    async def run(self, job: Job) -> Outcome:
        """Write, score and submit the note of the job's post (at most one per post)."""
        payload = job.payload
        post_id = str(payload.get("post_id") or "")
        if not post_id.isdigit() or not payload.get("check_id"):
            raise PermanentJobError(f"x:note job {job.id} needs a numeric post_id and a check_id")
        note = await self.store.call(self.repo.for_post, post_id)
        if note is not None and note.status != "scored":
            return Outcome(result_id=note.id)  # already submitted, withheld or rejected
        if note is None:
            check_job = (
                await self.store.call(self.store.jobs.get, payload["check_job"])
                if payload.get("check_job")
                else None
            )
            if check_job is not None and check_job.status == "dead":
                log.info("no note: the check failed", extra={"post": post_id})
                return Outcome()
            try:
                check = await self.store.call(self.store.checks.get, str(payload["check_id"]))
            except NotFoundError as exc:
                raise PermanentJobError(f"check {payload['check_id']} is not stored") from exc
            scorer = self.scorer
            plan, draft = await asyncio.to_thread(
                functools.partial(
                    write_note,
                    check,
                    stance=scorer.stance,
                    min_sources=self.settings.x.notes_min_sources,
                )
            )
            if draft is None:
                log.info(
                    "no note: %s (%s)",
                    plan.decision.value,
                    plan.reason,
                    extra={"post": post_id, "decision": plan.decision, "reason": plan.reason},
                )
                return Outcome()
            async with Fetcher(self.settings.fetch.policy()) as fetcher:
                scores = await score(draft, fetcher, scorer)
            note = await self.store.call(
                self.repo.add, self._record(job, post_id, check.id, draft, scores)
            )
            log.info(
                "community note written",
                extra={
                    "post": post_id,
                    "status": note.status,
                    "url": scores.url_validity,
                    "claim_opinion": scores.claim_opinion,
                    "harassment": scores.harassment_abuse,
                },
            )
            if note.status != "scored":
                return Outcome(result_id=note.id)
        await self._submit(job, note)
        return Outcome(result_id=note.id)

    def _record(self, job: Job, post_id: str, check_id: str, draft: Draft, scores: Scores) -> XNote:
        x = self.settings.x
        withheld = None
        if not scores.passes:
            withheld = "the local scores say X's evaluator would not pass it"
        elif not x.notes_enabled:
            withheld = "Community Notes are off (FACTBOT_X__NOTES_ENABLED)"
        return XNote(
            id=new_id(),
            post_id=post_id,
            check_id=check_id,
            job_id=job.id,
            text=draft.text,
            classification=draft.classification,
            misleading_tags=draft.misleading_tags,
            trustworthy_sources=draft.trustworthy_sources,
            urls=draft.urls,
            url_validity=scores.url_validity,
            claim_opinion=scores.claim_opinion,
            harassment_abuse=scores.harassment_abuse,
            score_detail={
                **scores.detail,
                "is_media_note": draft.is_media_note,
                "language": draft.language,
                **({"withheld": withheld} if withheld else {}),
            },
            test_mode=x.notes_test_mode,
            status="withheld" if withheld else "scored",
            api_note_id=None,
            claim_opinion_score=None,
            rating_status=None,
            evaluation={},
            error=withheld,
            created_at=None,
            updated_at=None,
        )

    async def _submit(self, job: Job, note: XNote) -> None:
        test_mode = self.settings.x.notes_test_mode
        try:
            if job.attempts > 1:
                found = await self._written(note.post_id, test_mode)
                if found is not None:
                    await self.store.call(
                        self.repo.update, note.id, status="submitted", api_note_id=found
                    )
                    log.info("community note found already submitted", extra={"post": note.post_id})
                    return
            score = note.claim_opinion_score
            if score is None:
                score = await self._evaluate(note)
            if score is not None and score < 0:  # X's evaluator: opinion or off the claim
                reason = f"X's claim_opinion_score is {score} (below 0)"
                await self.store.call(self.repo.update, note.id, status="withheld", error=reason)
                log.info("community note dropped", extra={"post": note.post_id, "score": score})
                return
            body = {
                "test_mode": test_mode,
                "post_id": note.post_id,
                "info": {
                    "text": note.text,
                    "classification": note.classification,
                    "misleading_tags": list(note.misleading_tags),
                    "trustworthy_sources": note.trustworthy_sources,
                    **({"is_media_note": True} if note.is_media_note else {}),
                },
            }
            note_id = await self.notes.create(body)
        except XRateLimitedError as exc:
            raise RetryLaterError(str(exc), retry_after=exc.retry_after) from exc
        except XApiError as exc:
            if exc.status >= 500:
                raise  # X's trouble: the job is retried after the back-off
            await self.store.call(
                self.repo.update, note.id, status="rejected", error=str(exc)[:500]
            )
            log.warning(
                "community note refused by X", extra={"post": note.post_id, "error": str(exc)}
            )
            return
        await self.store.call(self.repo.update, note.id, status="submitted", api_note_id=note_id)
        log.info("community note submitted", extra={"post": note.post_id, "test_mode": test_mode})

    async def _evaluate(self, note: XNote) -> float | None:
        """Record and return X's claim_opinion_score of the note; an evaluation X could not
        give (no route answering, X's trouble) retries the job later, never rejecting it."""
        try:
            value = await self.notes.evaluate(note.text, note.post_id)
        except XApiError as exc:
            if exc.status != 404:
                raise  # a 5xx or no connection: retried after the back-off (`_submit`)
            log.warning(
                "community note not evaluated: no evaluate route answers; trying again later",
                extra={"post": note.post_id, "error": str(exc)},
            )
            raise RetryLaterError(str(exc), retry_after=EVALUATE_RETRY) from exc
        if value is not None:
            await self.store.call(self.repo.update, note.id, claim_opinion_score=value)
        return value

    async def _written(self, post_id: str, test_mode: bool) -> str | None:
        """Return the id of a note X already has from factbot on post_id, or None."""
        async for item in self.notes.written(test_mode):
            if str((item.get("info") or {}).get("post_id")) == post_id:
                return str(item.get("id"))
        return None


class NoteStatusJobs:
    """Runs `x:notes-status` jobs: record the notes' later status."""

    def __init__(self, settings: Settings, notes: NotesApi, repo: XNotesRepo) -> None:
        self.settings = settings
        self.notes = notes
        self.repo = repo

    async def run(self, job: Job) -> Outcome:
        """Read notes_written and record each note's rating status and evaluation."""
        changed = 0
        try:
            async for item in self.notes.written(self.settings.x.notes_test_mode):
                post_id = str((item.get("info") or {}).get("post_id") or "")
                outcomes = (item.get("test_result") or {}).get("evaluation_outcome") or []
                evaluation = {
                    str(o.get("evaluator_type")): str(o.get("evaluator_score_bucket"))
                    for o in outcomes
                    if isinstance(o, dict)
                }
                rating = RATING.get(str(item.get("status") or ""))
                record = functools.partial(
                    self.repo.set_status,
                    post_id,
                    rating=rating,
                    evaluation=evaluation,
                    api_note_id=str(item.get("id")),
                )
                # This job has no store (its repository only): a thread, off the loop.
                if post_id and bool(await asyncio.to_thread(record)):
                    changed += 1
        except XRateLimitedError as exc:
            raise RetryLaterError(str(exc), retry_after=exc.retry_after) from exc
        log.info("community notes status refreshed", extra={"job": job.id, "changed": changed})
        return Outcome()
