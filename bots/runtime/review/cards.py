"""What a review channel shows about a proposal, and the proposed text a reviewer edits.

`ReviewQueue.card` builds a `ReviewCard` from a proposal and its check; each adapter renders
it its own way (Block Kit, an embed) and escapes what came from the post. The proposed text is
the check's correction as plain text (`pipeline.reply.render.render_plain`), sized for the
platform it would be posted on, since an edit is posted as the message's body there.

The card's labels are English (it is for the operator's moderators); the proposed text is in
the reply's language (the post's, where factbot has its catalogue), and the card names both.
"""

from __future__ import annotations

from dataclasses import dataclass

from bots.runtime.platform.contract import Destination
from pipeline.records.domain import Check, Reference
from pipeline.reply.render import render_plain
from pipeline.util.i18n import SOURCE_LANGUAGE, UNDETERMINED, catalogue_code, display_name
from storage.review import Decision, Proposal

MAX_TEXT = 3000  # the longest edited text (Slack's modal input holds 3,000 characters)
TEXT_BUDGET = {"slack": 2900, "discord": 1900, "mastodon": 480, "bluesky": 290, "x": 270}
PAST = {"approve": "approved", "edit": "approved with edits", "reject": "rejected"}


@dataclass(frozen=True)
class ReviewCard:
    """What a review channel shows about a proposal (each adapter renders it its own way)."""

    proposal_id: str
    status: str
    reason: str
    platform: str  # where the correction would be posted
    post_text: str  # the post checked (untrusted: adapters escape it and remove its links)
    post_url: str | None
    verdict: str
    text: str  # the proposed correction, plain text
    references: tuple[Reference, ...]  # the evidence links (all retrieved)
    decision: Decision | None
    error: str | None
    language: str | None = None  # the post's, as the check identified it (None: not known)
    reply_language: str = SOURCE_LANGUAGE  # the catalogue the proposed text is written in

    def language_line(self) -> str:
        """Return the post's language and the reply's, in English for the moderators."""
        if not self.language or catalogue_code(self.language) == UNDETERMINED:
            post = "not identified"
        else:
            post = f"{display_name(self.language)} ({self.language})"
        code = catalogue_code(self.language)
        if self.reply_language == SOURCE_LANGUAGE and code not in (SOURCE_LANGUAGE, UNDETERMINED):
            return f"{post}; factbot has no reply catalogue for it, so the reply is in English."
        return f"{post}; the reply is in {display_name(self.reply_language)}, as shown below."

    def decided_line(self) -> str:
        """Return who decided what and when, or "" while pending."""
        if self.decision is None:
            return ""
        d = self.decision
        line = f"{PAST[d.action].capitalize()} by {d.reviewer} at {d.at:%Y-%m-%d %H:%M} UTC"
        if d.reason:
            line += f": {d.reason}"
        return line

    def status_line(self) -> str:
        """Return the state of the proposal as a short sentence."""
        return {
            "pending": "Waiting for a reviewer.",
            "approved": "Approved: the correction is being posted.",
            "posted": "Posted.",
            "rejected": "Rejected: nothing was posted.",
            "failed": f"Failed: {self.error or 'it could not be posted'}.",
            "expired": "Expired: nobody decided in time; nothing was posted.",
        }.get(self.status, self.status)


def destination_of(proposal: Proposal) -> Destination:
    """Return where the proposal's correction goes (private part included while it is kept)."""
    data = dict(proposal.destination)
    data["private"] = dict(proposal.private)
    return Destination.from_json(data)


def proposed_text(check: Check, platform: str) -> str:
    """Return the check's correction as the plain text a reviewer approves or edits."""
    budget = TEXT_BUDGET.get(platform, 1900)
    try:
        return render_plain(check.correction, budget=budget)
    except ValueError:  # not even the headline fits with its references: show it all
        return render_plain(check.correction, budget=None)[:MAX_TEXT]
