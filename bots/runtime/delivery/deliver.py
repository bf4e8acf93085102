"""Reply jobs: once a check job has ended, post its answer on the platform exactly once.

A `reply:<platform>` job waits for its check job (`jobs.waits_for`). When it runs:

- the check job is done → the answer is the check's correction (plus the report link and the
  cost footer when configured, and the adapter's notes such as "the image could not be read");
- the check job is dead → ONE polite failure, private to the requester where the platform can,
  in the language the intake decided for the post (payload `language`);
- the request was answered from a stored check → that check's correction.

The adapter renders the answer; every text of the rendered message is audited, and a link that
is not one of the check's references (or factbot's own report link) stops the message: the
requester gets the failure message instead, and the incident is logged and kept as the job's
`reply`/`withheld` event (what `/metrics` counts). The post goes through
`send_once` (the reply ledger, keyed by platform and event), so a retried job, a redelivered
event or a restarted worker never posts twice. Once sent, the destination's private part
(interaction tokens, raw user ids) is deleted from the job in the transaction that ends it.

A reply approved in the review queue (`bots.runtime.review.proposals`; payload `review`: the
proposal id, event key ``review:<proposal id>``) goes the same way, with two differences: an edited
text (payload `text`) is the message's body instead of the rendered correction (audited against the
same references), and nobody waits for an answer, so what cannot be posted (an unretrieved link, a
check gone) fails the job instead of posting a failure message. The proposal is marked posted in the
transaction that ends the job.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping

from bots.runtime.delivery.acks import settle
from bots.runtime.delivery.replies import ANSWER, ReplyKey, ReplyRejectedError, send_once
from bots.runtime.platform import messages
from bots.runtime.platform.contract import (
    Answer,
    Destination,
    FindsSent,
    Note,
    Rendered,
    ReplySender,
)
from bots.runtime.review.proposals import ReviewQueue
from bots.runtime.workers.pool import Outcome, PermanentJobError
from bots.settings import Settings
from pipeline.errors import NotFoundError
from pipeline.records.domain import Check
from pipeline.reply.links import unretrieved_links
from pipeline.util.i18n import Translator, translator
from storage import Store
from storage.jobs import Job
from storage.metrics import WITHHELD_STAGE, WITHHELD_STATUS

log = logging.getLogger(__name__)

REPLY_KEY = "reply_key"  # in Destination.public while a reply job renders and sends


def reply_key(key: ReplyKey) -> str:
    """Return the string that names one reply on the platform (ledger key, nonce, metadata)."""
    return f"factbot:{key.platform}:{key.target_id}:{key.kind}"


class UnretrievedLinkError(PermanentJobError):
    """A rendered reply holds a link the pipeline did not retrieve."""


def audit(rendered: Rendered, allowed: set[str]) -> None:
    """Raise UnretrievedLinkError when a rendered text links anywhere but allowed URLs."""
    found = unretrieved_links(rendered.texts, allowed)
    if found:
        raise UnretrievedLinkError(f"the reply links to URLs it did not retrieve: {found[:3]}")


class ReplyJobs:
    """Runs `reply:<platform>` jobs through the platforms' senders."""

    def __init__(
        self, store: Store, senders: Mapping[str, ReplySender], settings: Settings
    ) -> None:
        self.store = store
        self.senders = dict(senders)
        self.settings = settings
        self.catalogues = settings.reply_catalogues()

    def _language(self, payload: Mapping[str, object]) -> Translator:
        """Return the translator of a reply whose check gave no correction (a failure)."""
        language = payload.get("language")
        return self.catalogues.for_language(str(language) if language else "en")

    async def run(self, job: Job) -> Outcome:
        """Build, render, audit and send the job's answer once."""
        payload = job.payload
        if "destination" not in payload:
            raise PermanentJobError(f"reply job {job.id} has no destination (redacted?)")
        dest = Destination.from_json(payload["destination"])
        key = ReplyKey(dest.platform, str(payload["event_key"]), ANSWER)
        # The reply's own key: senders use it as an idempotency key, a nonce or message metadata.
        dest = dataclasses.replace(dest, public={**dest.public, REPLY_KEY: reply_key(key)})
        sender = self.senders.get(dest.platform)
        if sender is None:
            raise PermanentJobError(f"no sender for platform {dest.platform!r} in this worker")
        review = str(payload["review"]) if payload.get("review") else None
        answer, check = await self.store.call(self._answer, job)
        if review is not None and check is None:
            raise PermanentJobError(f"review reply {job.id}: {answer.message}")
        if review is None and answer.kind == "correction" and job.attempts >= job.max_attempts > 1:
            # The platform refused the correction on every attempt so far (too long, bad
            # blocks…): the last attempt says so plainly rather than leave silence.
            t = translator(answer.correction.language) if answer.correction else None
            message = messages.failure("the answer could not be posted here", t)
            answer = Answer("failure", message=message, notes=answer.notes, private=True)
        rendered = await self._render(
            sender, answer, dest, check, job=job, strict=review is not None
        )

        async def send() -> str | None:
            return await sender.send(dest, rendered)

        finds = sender if isinstance(sender, FindsSent) else None

        async def reconcile() -> str | None:
            assert finds is not None
            return await finds.find_sent(dest)

        try:
            reply = await send_once(
                self.store,
                key,
                send,
                check_id=check.id if check is not None else None,
                job_id=job.id,
                reconcile=reconcile if finds is not None else None,
            )
        except ReplyRejectedError:
            if job.attempts >= job.max_attempts:  # no answer will come: take the mark off
                await settle(sender, dest, None, key.target_id)
            raise
        ledger_row = await self.store.call(
            self.store.replies.find, key.platform, key.target_id, key.kind
        )
        if review is None and ledger_row is not None and ledger_row.status == "sent":
            # The acknowledgement (Slack's :eyes:) becomes the verdict, or goes on a failure;
            # idempotent on the platform, so a retried job settling again changes nothing.
            await settle(sender, dest, answer, key.target_id)
        log.info(
            "reply job finished",
            extra={
                "platform": dest.platform,
                "event": key.target_id,
                "answer": answer.kind,
                "sent": reply is not None,
            },
        )
        cost = sum(u.cost_usd for u in check.usage) if check is not None else 0.0
        store = self.store

        def finish() -> None:  # in the transaction that marks the job done
            store.jobs.forget_private(job.id)
            if check is not None and not payload.get("reused"):
                store.platform.record_cost(dest.platform, key.target_id, cost)
            if review is not None:
                ledger = store.replies.find(key.platform, key.target_id, key.kind)
                if ledger is not None and ledger.status == "sent":
                    ReviewQueue(store, self.settings, clock=store.clock).posted(review)

        return Outcome(result_id=reply.id if reply is not None else None, store=finish)

    def _answer(self, job: Job) -> tuple[Answer, Check | None]:
        payload = job.payload
        notes = tuple(Note.from_json(n) for n in payload.get("notes") or ())
        failed = self._language(payload)
        check_job = self.store.jobs.get(payload["check_job"]) if payload.get("check_job") else None
        if check_job is not None and check_job.status == "dead":
            return self._failure(check_job.last_error, notes, failed), None
        if check_job is not None and check_job.status != "done":
            # Only an operator's retry of a dead check job gets here: wait for it again.
            raise RuntimeError(f"check job {check_job.id} is {check_job.status}, not ended")
        try:
            check = self.store.checks.get(str(payload["check_id"]))
        except NotFoundError:
            return self._failure("the check was not stored", notes, failed), None
        if payload.get("text"):  # an edited text approved in the review queue is the body
            edited = Answer("notice", message=str(payload["text"]), correction=check.correction)
            return dataclasses.replace(edited, check=check), check
        return self._correction(check, notes), check

    def _failure(
        self, error: str | None, notes: tuple[Note, ...], t: Translator | None = None
    ) -> Answer:
        message = messages.failure(error, t)
        return Answer("failure", message=message, notes=_translated(notes, t), private=True)

    def _correction(self, check: Check, notes: tuple[Note, ...]) -> Answer:
        replies = self.settings.replies
        report = None
        if replies.public_base_url:
            report = f"{replies.public_base_url.rstrip('/')}/checks/{check.id}"
        footer = None
        if replies.cost_footer:
            seconds = sum(t.seconds for t in check.timings)
            cost = sum(u.cost_usd for u in check.usage)
            footer = messages.cost_footer(cost, seconds, language=check.correction.language)
        return Answer(
            "correction",
            correction=check.correction,
            check=check,
            report_url=report,
            footer=footer,
            notes=_translated(notes, translator(check.correction.language)),
        )

    async def _render(
        self,
        sender: ReplySender,
        answer: Answer,
        dest: Destination,
        check: Check | None,
        *,
        job: Job,
        strict: bool = False,
    ) -> Rendered:
        allowed = {r.url for r in answer.correction.references} if answer.correction else set()
        if answer.report_url:
            allowed.add(answer.report_url)
        rendered = sender.render(answer, dest)
        try:
            audit(rendered, allowed)
        except UnretrievedLinkError as exc:
            # Kept as a job event: /metrics counts withheld replies from the database.
            await self.store.call(
                self.store.jobs.progress,
                job.id,
                WITHHELD_STAGE,
                WITHHELD_STATUS,
                platform=dest.platform,
                reason=str(exc),
            )
            if strict:  # nobody asked: post nothing rather than a failure message
                log.error(
                    "review reply withheld: it links to URLs the pipeline did not retrieve",
                    extra={"platform": dest.platform, "error": str(exc)},
                )
                raise
            log.error(
                "reply withheld: it links to URLs the pipeline did not retrieve",
                extra={
                    "platform": dest.platform,
                    "check": check.id if check else None,
                    "error": str(exc),
                },
            )
            t = translator(answer.correction.language) if answer.correction else None
            failure = self._failure(None, (), t or self._language(job.payload))
            rendered = sender.render(failure, dest)
            audit(rendered, set())  # an adapter that adds links to a failure is a bug: raise
        return rendered


def _translated(notes: tuple[Note, ...], t: Translator | None) -> tuple[str, ...]:
    """Return an adapter's notes in the reply's language (a file's name set apart in them)."""
    return tuple(messages.note_text(note, t) for note in notes)
