"""`review:post` jobs: show a proposal in the review channel, then keep its card up to date.

`ReviewQueue.propose` queues the first job (after the check job, when one is given); every
change of the proposal (a decision from the channel or the dashboard, posted, failed,
expired) queues one more, which waits for the first. The job renders the proposal's current
state (`ReviewQueue.card`) through the review platform's `ReviewChannel`: the first posts the
card — through `send_once`, keyed ``review-card:<proposal id>``, so a retried job never shows
it twice — and the others edit the message the first one posted.

An adapter offers its review channel by returning `{REVIEW_POST: ReviewPostJobs(...)}` from
its `job_handlers()` when FACTBOT_REVIEW__PLATFORM names it.

Failure policy: a proposal that is gone or whose check failed ends the job (the card of a
failed check says so); a card the platform refused is retried by the queue; a card whose post
may or may not have happened (the connection dropped) is not posted again.
"""

from __future__ import annotations

import logging
from typing import Protocol

from bots.runtime.delivery.deliver import reply_key
from bots.runtime.delivery.replies import ReplyKey, send_once
from bots.runtime.review.proposals import NotReadyError, ReviewCard, ReviewError, ReviewQueue
from bots.runtime.workers.pool import Outcome, PermanentJobError
from bots.settings import Settings
from pipeline.util.clock import SYSTEM, Clock
from storage import Store
from storage.jobs import Job

log = logging.getLogger(__name__)
CARD = "review-card"  # the reply ledger's kind of a review card


class ReviewChannel(Protocol):
    """A platform's review channel: post a proposal's card, edit it later."""

    platform: str

    async def post(self, card: ReviewCard, *, key: str) -> str | None:
        """Post card to the review channel; return the platform's id of the message.

        `key` names the card uniquely (a nonce or message metadata where the platform has
        one). Raise `ReplyRejectedError` only when the platform surely did not post it.
        """
        ...

    async def update(self, message_id: str, card: ReviewCard) -> None:
        """Show card's current state in the message posted earlier."""
        ...


class ReviewPostJobs:
    """Runs `review:post` jobs through one platform's review channel."""

    def __init__(
        self, store: Store, settings: Settings, channel: ReviewChannel, *, clock: Clock = SYSTEM
    ) -> None:
        self.store = store
        self.channel = channel
        self.queue = ReviewQueue(store, settings, clock=clock)

    async def run(self, job: Job) -> Outcome:
        """Post the proposal's card, or bring the posted card up to date."""
        proposal_id = str(job.payload.get("proposal_id") or "")
        try:
            proposal = await self.store.call(self.queue.get, proposal_id)
        except ReviewError as exc:
            raise PermanentJobError(str(exc)) from exc
        if proposal.status == "failed" and proposal.card_message_id is None:
            log.info("review card not shown: the proposal failed", extra={"proposal": proposal_id})
            return Outcome()
        try:
            card = await self.store.call(self.queue.card, proposal_id)
        except NotReadyError as exc:  # the check job ended without a check: nothing to show
            raise PermanentJobError(str(exc)) from exc
        if proposal.text is None:
            await self.store.call(self.store.review.set_text_if_missing, proposal_id, card.text)
        key = ReplyKey(self.channel.platform, f"review-card:{proposal_id}", CARD)
        shown = await self.store.call(
            self.store.replies.find, key.platform, key.target_id, key.kind
        )
        if shown is not None and shown.status == "sent" and shown.platform_reply_id:
            await self.channel.update(shown.platform_reply_id, card)
            return Outcome()
        if shown is not None and shown.status == "pending" and shown.job_id != job.id:
            log.warning(
                "review card may have been posted by a worker that died; not posting again",
                extra={"proposal": proposal_id},
            )
            return Outcome()

        async def send() -> str | None:
            return await self.channel.post(card, key=reply_key(key))

        reply = await send_once(self.store, key, send, job_id=job.id)
        message_id = reply.platform_reply_id if reply is not None else None
        store = self.store

        def finish() -> None:
            if message_id:
                store.review.update(proposal_id, card_message_id=message_id)

        log.info("review card posted", extra={"proposal": proposal_id, "message": message_id})
        return Outcome(result_id=reply.id if reply is not None else None, store=finish)
