"""The human review queue: corrections factbot may not post on its own wait for a person.

The monitor (or anything else) calls `ReviewQueue.propose` for a check whose correction needs
a human; the proposal is stored and, when a review channel is configured, a `review:post` job
shows it there (Slack or Discord, with Approve / Edit / Reject buttons). The buttons, the
web dashboard and any other front end call the same three actions:

- `approve(proposal_id, reviewer=…)` posts the check's correction, rendered as any mention's
  answer, through a `reply:<platform>` job (ReplyJobs: render, URL audit, `send_once` under
  the key ``review:<proposal id>``);
- `approve(proposal_id, reviewer=…, text=…)` posts an edited text instead, once it has been
  checked again: a link that is not one of the check's references refuses it (nothing is
  decided, nothing posted), and ReplyJobs audits it once more before it is sent;
- `reject(proposal_id, reviewer=…, reason=…)` records the no.

Exactly once, whoever clicks: the first decision wins inside one immediate transaction (see
`storage.review`) that also enqueues the reply job; a double click, a second reviewer or a
redelivered interaction gets `AlreadyDecidedError` ("already approved by … at …"), and even a
second reply job would find the reply ledger's row. A reviewer is a platform user's pseudonym
(`reviewer(platform, user_id)`) or the operator's login name on the dashboard.

Exceptions (each a `ReviewError`, with attributes):

    ReviewError
    ├── ProposalNotFoundError   no such proposal
    ├── AlreadyDecidedError     .decision: the first decision
    ├── ProposalClosedError     .status: failed or expired before anyone decided
    ├── NotReadyError           its check has not ended yet
    └── EditRefusedError        .links: the unretrieved links (or an empty / too long text)
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from bots.runtime.platform.contract import Destination
from bots.runtime.platform.privacy import Pseudonyms
from bots.runtime.review.cards import (
    MAX_TEXT,
    PAST,
    ReviewCard,
    destination_of,
    proposed_text,
)
from bots.settings import Settings
from pipeline.errors import NotFoundError
from pipeline.records.domain import Check
from pipeline.reply.links import unretrieved_links
from pipeline.util.clock import SYSTEM, Clock
from storage import Store
from storage.review import Decision, Proposal

__all__ = [
    "MAX_TEXT",
    "REVIEW_POST",
    "AlreadyDecidedError",
    "Decision",
    "EditRefusedError",
    "NotReadyError",
    "Proposal",
    "ProposalClosedError",
    "ProposalNotFoundError",
    "ReviewCard",
    "ReviewError",
    "ReviewQueue",
    "destination_of",
    "proposed_text",
]

log = logging.getLogger(__name__)

REVIEW_POST = "review:post"  # the job kind that shows (or refreshes) a proposal's card


class ReviewError(Exception):
    """A review action that cannot be done; the message says why, for the reviewer."""


class ProposalNotFoundError(ReviewError, NotFoundError):
    """No proposal has this id."""


class AlreadyDecidedError(ReviewError):
    """Someone decided first."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        when = decision.at.strftime("%Y-%m-%d %H:%M UTC")
        super().__init__(f"already {PAST[decision.action]} by {decision.reviewer} at {when}")


class ProposalClosedError(ReviewError):
    """The proposal failed or expired before anyone decided."""

    def __init__(self, status: str, detail: str = "") -> None:
        self.status = status
        said = {"expired": "this proposal expired", "failed": "this proposal failed"}
        super().__init__(said.get(status, f"this proposal is {status}") + detail)


class NotReadyError(ReviewError):
    """The proposal's check has not ended yet."""


class EditRefusedError(ReviewError):
    """An edited text that cannot be posted (an unretrieved link, empty or too long)."""

    def __init__(self, message: str, links: Sequence[str] = ()) -> None:
        self.links = tuple(links)
        super().__init__(message)


class ReviewQueue:
    """Propose corrections for review and decide them, exactly once."""

    def __init__(self, store: Store, settings: Settings, *, clock: Clock = SYSTEM) -> None:
        self.store = store
        self.settings = settings
        self.clock = clock
        self._pseudonyms: Pseudonyms | None = None

    # -- proposing ---------------------------------------------------------------------------

    def propose(
        self,
        *,
        check_id: str,
        destination: Destination,
        reason: str,
        key: str,
        check_job: str | None = None,
    ) -> Proposal:
        """Store a proposal (once per key) and queue the job that shows it to reviewers.

        With `check_job`, the card waits for that job to end; the proposed text is written
        from the check then (now, when the check is already stored).
        """
        public = destination.to_json()
        private = public.pop("private")
        text = None
        if check_job is None or self._job_done(check_job):
            text = self._text_for(check_id, destination.platform)
        proposal, created = self.store.review.add(
            key=key,
            check_id=check_id,
            check_job_id=check_job,
            platform=destination.platform,
            destination=public | {"private": {}},
            private={str(k): str(v) for k, v in private.items()},
            reason=reason,
            text=text,
        )
        if created:
            log.info(
                "correction proposed for review",
                extra={"proposal": proposal.id, "platform": proposal.platform, "key": key},
            )
            self._show(proposal, waits_for=check_job)
        return self.get(proposal.id)

    def _job_done(self, job_id: str) -> bool:
        job = self.store.jobs.get(job_id)
        return job is not None and job.status == "done"

    def _text_for(self, check_id: str, platform: str) -> str | None:
        try:
            check = self.store.checks.get(check_id)
        except NotFoundError:
            return None
        return proposed_text(check, platform)

    def _show(self, proposal: Proposal, *, waits_for: str | None = None, why: str = "") -> None:
        """Queue the review card's post, or its refresh after a change (when a channel is set)."""
        review = self.settings.review
        if not review.configured:
            return
        first = not why
        job, created = self.store.jobs.enqueue(
            REVIEW_POST,
            {"proposal_id": proposal.id},
            dedupe_key=f"{REVIEW_POST}:{proposal.id}" + (f":{why}" if why else ""),
            max_attempts=max(self.settings.jobs.max_attempts, 5),
            # A refresh waits for the first post: it edits the message that one made.
            waits_for=waits_for if first else proposal.card_job_id,
        )
        if first and created:
            self.store.review.update(
                proposal.id, card_job_id=job.id, card_platform=str(review.platform)
            )

    # -- reading -----------------------------------------------------------------------------

    def get(self, proposal_id: str) -> Proposal:
        """Return a proposal (its status settled with its reply job) or raise not found."""
        proposal = self.store.review.get(proposal_id)
        if proposal is None:
            raise ProposalNotFoundError(f"no proposal {proposal_id!r}")
        return self._settled(proposal)

    def pending(self, limit: int = 50, offset: int = 0) -> list[Proposal]:
        """Return the proposals waiting for a decision, oldest first (expired ones left out)."""
        found = self.store.review.list(status="pending", limit=limit, offset=offset)
        return [p for p in found if not self._expired(p)]

    def list(
        self, *, status: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[Proposal]:
        """Return proposals of any (or one) status, oldest first."""
        found = self.store.review.list(status=status, limit=limit, offset=offset)
        return [self._settled(p) for p in found]

    def card(self, proposal_id: str) -> ReviewCard:
        """Return what a review channel shows about a proposal."""
        proposal = self.get(proposal_id)
        check = self._check(proposal)
        text = proposal.text or proposed_text(check, proposal.platform)
        return ReviewCard(
            proposal_id=proposal.id,
            status=proposal.status,
            reason=proposal.reason,
            platform=proposal.platform,
            post_text=check.post.text,
            post_url=check.post.url,
            verdict=check.correction.label.value,
            text=text,
            references=check.correction.references,
            decision=proposal.decision,
            error=proposal.error,
            language=check.post.language,
            reply_language=check.correction.language,
        )

    def _check(self, proposal: Proposal) -> Check:
        try:
            return self.store.checks.get(proposal.check_id)
        except NotFoundError:
            raise NotReadyError("the check of this proposal has not finished yet") from None

    def _settled(self, proposal: Proposal) -> Proposal:
        """Return proposal with the outcome of its reply job (or check job) recorded."""
        moved = False
        if proposal.status == "approved" and proposal.reply_job_id:
            job = self.store.jobs.get(proposal.reply_job_id)
            if job is not None and job.status == "dead":
                error = f"the reply could not be posted ({job.last_error or 'unknown error'})"
                moved = self.store.review.move(
                    proposal.id, before=("approved",), after="failed", error=error[:500]
                )
        elif proposal.status == "pending" and proposal.check_job_id:
            job = self.store.jobs.get(proposal.check_job_id)
            if job is not None and job.status == "dead":
                error = f"the check failed ({job.last_error or 'unknown error'})"
                moved = self.store.review.move(
                    proposal.id, before=("pending",), after="failed", error=error[:500]
                )
        if moved:
            self._show(proposal, why="failed")
            found = self.store.review.get(proposal.id)
            assert found is not None
            return found
        return proposal

    def _expired(self, proposal: Proposal) -> bool:
        hours = self.settings.review.expire_hours
        if proposal.status != "pending" or hours <= 0:
            return False
        if self.clock.now() - proposal.created_at < timedelta(hours=hours):
            return False
        if self.store.review.move(proposal.id, before=("pending",), after="expired"):
            log.info("review proposal expired", extra={"proposal": proposal.id})
            self._show(proposal, why="expired")
        return True

    # -- deciding ----------------------------------------------------------------------------

    def reviewer(self, platform: str, user_id: str) -> str:
        """Return how a platform user is recorded as a reviewer (their pseudonym)."""
        if self._pseudonyms is None:
            self._pseudonyms = Pseudonyms(self.store, self.settings.privacy)
        return f"{platform}:{self._pseudonyms.user(platform, user_id)}"

    def may_decide(self, platform: str, user_id: str, roles: Iterable[str] = ()) -> bool:
        """Return whether a user of the review channel's platform may decide proposals."""
        review = self.settings.review
        if platform != review.platform:
            return False
        if user_id in review.reviewers:
            return True
        return platform == "discord" and bool(set(roles) & set(review.reviewer_roles))

    def check_text(self, proposal: Proposal, text: str) -> str:
        """Return text stripped when it may be posted for proposal; raise EditRefusedError."""
        cleaned = text.strip()
        if not cleaned:
            raise EditRefusedError("the edited text is empty")
        if len(cleaned) > MAX_TEXT:
            raise EditRefusedError(
                f"the edited text is {len(cleaned)} characters; at most {MAX_TEXT} are posted"
            )
        check = self._check(proposal)
        allowed = {r.url for r in check.correction.references}
        found = unretrieved_links([cleaned], allowed)
        if found:
            shown = ", ".join(found[:3])
            raise EditRefusedError(
                f"the edited text links to {shown}, which factbot did not retrieve for this "
                "check; only the check's references may be linked. Nothing was posted.",
                found,
            )
        return cleaned

    def approve(self, proposal_id: str, *, reviewer: str, text: str | None = None) -> Decision:
        """Approve a proposal (with an edited text, when given): its correction is posted once."""
        proposal = self._open(proposal_id)
        check = self._check(proposal)
        action = "approve"
        current = proposal.text or proposed_text(check, proposal.platform)
        if text is not None and text.strip() != current.strip():
            text = self.check_text(proposal, text)
            action = "edit"
        else:
            text = None

        def enqueue(decision: Decision) -> dict[str, Any]:
            attempts = self.settings.jobs.max_attempts
            job, _ = self.store.jobs.enqueue(
                f"reply:{proposal.platform}",
                {
                    "event_key": f"review:{proposal.id}",
                    "check_id": check.id,
                    "check_job": None,  # the check has ended: a proposal is decided after it
                    "reused": True,  # the check's cost is not this reply's
                    "destination": destination_of(proposal).to_json(),
                    "notes": [],
                    "via": "review",
                    "review": proposal.id,
                    **({"text": text} if text is not None else {}),
                },
                dedupe_key=f"reply:review:{proposal.id}",
                max_attempts=max(attempts, 5),
            )
            return {"reply_job_id": job.id}

        return self._decide(proposal, action, reviewer, "approved", text=text, then=enqueue)

    def reject(self, proposal_id: str, *, reviewer: str, reason: str = "") -> Decision:
        """Reject a proposal: nothing is posted; the destination's private part is deleted."""
        proposal = self._open(proposal_id)
        return self._decide(proposal, "reject", reviewer, "rejected", reason=reason.strip())

    def open_proposal(self, proposal_id: str) -> Proposal:
        """Return a proposal that can still be decided; raise the ReviewError that says why not."""
        return self._open(proposal_id)

    def _open(self, proposal_id: str) -> Proposal:
        proposal = self.get(proposal_id)
        if proposal.decision is not None:
            raise AlreadyDecidedError(proposal.decision)
        if self._expired(proposal):
            raise ProposalClosedError("expired", f" (open for {self._hours()} hours)")
        if proposal.status != "pending":
            raise ProposalClosedError(
                proposal.status, f": {proposal.error}" if proposal.error else ""
            )
        return proposal

    def _hours(self) -> str:
        return f"{self.settings.review.expire_hours:g}"

    def _decide(
        self,
        proposal: Proposal,
        action: str,
        reviewer: str,
        status: str,
        *,
        text: str | None = None,
        reason: str = "",
        then: Any = None,
    ) -> Decision:
        try:
            decision, won = self.store.review.decide(
                proposal.id,
                action=action,
                reviewer=reviewer,
                status=status,
                text=text,
                reason=reason,
                then=then,
            )
        except LookupError:  # it failed or expired while this reviewer looked at it
            closed = self.get(proposal.id)
            raise ProposalClosedError(closed.status) from None
        if not won:
            raise AlreadyDecidedError(decision)
        log.info(
            "review decision",
            extra={"proposal": proposal.id, "action": action, "reviewer": reviewer},
        )
        self._show(proposal, why=status)
        return decision

    # -- what the reply job reports ----------------------------------------------------------

    def posted(self, proposal_id: str) -> None:
        """Record that the approved correction was posted (called by the reply job)."""
        proposal = self.store.review.get(proposal_id)
        if proposal is not None and self.store.review.move(
            proposal_id, before=("approved", "failed"), after="posted"
        ):
            self._show(proposal, why="posted")
