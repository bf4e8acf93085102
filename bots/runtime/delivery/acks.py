"""Acknowledging a request at once: a mark on the asked message while its check runs.

A check takes 10 s to over a minute; the asker should see within seconds that factbot took the
request. Where the platform has a quiet, reversible mark, the listener adds it as soon as intake
accepts the request (Slack: the :eyes: reaction on the mention), and the reply job replaces it
once the answer is posted (the verdict's emoji), or removes it when the answer is a failure or
cannot be posted at all. A sender opts in with two methods:

- `async acknowledge(destination) -> None`: add the mark (a no-op where there is nothing to mark);
- `async settle_ack(destination, answer: Answer | None) -> None`: take the mark off and, for a
  correction, put the verdict's mark on; None only takes it off.

Both must be idempotent on the platform (Slack answers `already_reacted` / `no_reaction`, taken
as done). Exactly once: the ledger keeps one `ack` row per request (`replies`, kind `ack`), so a
redelivered event, a retry racing the first delivery, or a restarted listener never marks a
request again once marked, and never after its answer was posted. A crash between reserving the
row and the platform call leaves it pending; the next delivery adds the mark again, which the
platform's idempotence makes harmless. The one race left, an answer posted while the mark is
being added (a reused check answers in milliseconds), is closed by `acknowledge` itself: once
its mark is on, it reads the answer's row and takes the mark off again when the answer won.

X, Bluesky and Mastodon get no acknowledgement: a like reads as agreement with the post, and a
"checking…" reply is a second public post (on X a billed one) that notifies everyone in the
thread; the answer itself is the only post factbot makes there.

Failure policy: a mark is cosmetic. A platform error while adding or settling it is logged and
dropped; it never stops the check or the answer.
"""

from __future__ import annotations

import logging

from bots.runtime.delivery.replies import ANSWER
from bots.runtime.platform.contract import (
    Acknowledges,
    Answer,
    Destination,
    ReplySender,
    SettlesAcks,
)
from storage import Store
from storage.replies import ReplyLedger

log = logging.getLogger(__name__)

ACK = "ack"  # the ledger kind of the acknowledgement


def _answered(ledger: ReplyLedger, platform: str, event_key: str) -> bool:
    found = ledger.find(platform, event_key, ANSWER)
    return found is not None and found.status == "sent"


async def acknowledge(
    store: Store, sender: ReplySender, destination: Destination, event_key: str
) -> bool:
    """Mark the asked message once, unless it is answered already; return whether it marked.

    The ledger is read and written in storage threads (`Store.call`), off the event loop."""
    platform, ledger, call = destination.platform, store.replies, store.call
    if not isinstance(sender, Acknowledges) or await call(_answered, ledger, platform, event_key):
        return False
    reserved = await call(ledger.reserve, platform, event_key, ACK)
    if reserved is None:
        existing = await call(ledger.find, platform, event_key, ACK)
        if existing is None or existing.status != "pending":
            return False  # marked already (and perhaps settled since)
        reserved = existing  # a crash mid-call: adding again is harmless on the platform
    try:
        await sender.acknowledge(destination)
    except Exception as exc:  # noqa: BLE001 - a mark is cosmetic: logged, never fatal
        await call(ledger.mark_failed, reserved.id, repr(exc))
        log.warning(
            "acknowledgement not shown",
            extra={"platform": platform, "event": event_key, "error": repr(exc)},
        )
        return False
    await call(ledger.mark_sent, reserved.id)
    if await call(_answered, ledger, platform, event_key):  # the answer was posted meanwhile
        await settle(sender, destination, None, event_key)
    return True


async def settle(
    sender: ReplySender, destination: Destination, answer: Answer | None, event_key: str
) -> None:
    """Replace the mark by the answer's (a correction's verdict), or take it off (None, failure)."""
    if not isinstance(sender, SettlesAcks):
        return
    try:
        await sender.settle_ack(
            destination, answer if answer and answer.kind == "correction" else None
        )
    except Exception as exc:  # noqa: BLE001 - a mark is cosmetic: logged, never fatal
        log.warning(
            "acknowledgement not settled",
            extra={"platform": destination.platform, "event": event_key, "error": repr(exc)},
        )
