"""The posting policy: where a monitored post's check result goes (pure, no I/O).

    verdict accurate                                   -> nothing (recorded, nothing posted)
    X, the author did not mention factbot:
        false/misleading, credible evidence, Community Notes enabled -> a Community Note (x:note)
        otherwise                                                    -> the review queue
    anywhere else (and X when the author mentioned factbot):
        false/misleading, credible evidence, auto-reply enabled for the platform or channel
                                                                     -> an automatic reply
        otherwise                                                    -> the review queue

X refuses programmatic replies under posts whose author did not mention the account, hence
notes there. "Credible evidence": every claim the check decided (a verdict other than
unverifiable, shown in the correction) cites at least one piece of evidence from a high or
medium credibility publisher, and at least one claim was decided. The operator turns
automatic replies on per platform or channel (`FACTBOT_MONITOR__AUTO_REPLY`), Community Notes
with the X settings (`FACTBOT_X__NOTES_ENABLED`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bots.settings import Settings
from pipeline.records.domain import Check, Label, Tier

Route = Literal["reply", "note", "review", "nothing"]
CORRECTABLE = (Label.FALSE, Label.MISLEADING)
CREDIBLE = (Tier.HIGH, Tier.MEDIUM)


@dataclass(frozen=True)
class Decision:
    """Where a result goes and why (the reason is stored and shown to reviewers)."""

    route: Route
    reason: str


def credible(check: Check) -> bool:
    """Return whether every decided claim of check cites credible evidence (module doc)."""
    tiers = {e.id: e.tier for e in check.evidence}
    decided = [c for c in check.verdict.claims if c.shown and c.label is not Label.UNVERIFIABLE]
    if not decided:
        return False
    return all(any(tiers.get(e) in CREDIBLE for e in c.evidence_ids) for c in decided)


def notes_enabled(settings: Settings) -> bool:
    """Return whether Community Notes are on (the X settings may not exist in this build)."""
    return bool(getattr(getattr(settings, "x", None), "notes_enabled", False))


def decide(
    check: Check, *, platform: str, channel_id: str, mentions_bot: bool, settings: Settings
) -> Decision:
    """Return where the result of check on a monitored post goes (module doc)."""
    label = check.verdict.label
    if label is Label.ACCURATE:
        return Decision("nothing", "the post was found accurate")
    correctable = label in CORRECTABLE
    sound = correctable and credible(check)
    if platform == "x" and not mentions_bot:
        if sound and notes_enabled(settings):
            return Decision("note", f"{label.value} with credible evidence on X: Community Note")
        why = "Community Notes are off" if sound else _why_not(label, correctable)
        return Decision("review", f"X allows no reply to this author; {why}")
    if sound and settings.monitor.auto_reply_allowed(platform, channel_id):
        return Decision("reply", f"{label.value} with credible evidence; auto-reply is on here")
    if sound:
        return Decision("review", f"{label.value} with credible evidence; auto-reply is off here")
    return Decision("review", _why_not(label, correctable))


def _why_not(label: Label, correctable: bool) -> str:
    if not correctable:
        return f"the verdict is {label.value}, not false or misleading"
    return f"{label.value}, but not every decided claim has credible evidence"
