"""Sending a reply at most once: reserve it in the ledger, call the platform, mark it sent.

Adapters post every correction through `send_once`. The ledger row is written before the
platform call, so a redelivered event, a retried job or a restarted worker finds it and sends
nothing; only a failure the platform reported before posting (`ReplyRejected`) frees the key
for a later attempt. Anything else raised by the send leaves the reply pending: factbot cannot
tell whether the platform posted it, and a duplicate correction is worse than a missing one.

Unless the platform can answer that question: a sender that can look for the message it may
have posted (`reconcile`, e.g. Slack's message metadata in the thread) lets the same job, run
again after its worker died mid-send, settle a pending reply — marked sent when the platform
has it, sent now when it does not. That turns at-most-once into exactly-once on that platform.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from storage import Store
from storage.replies import Reply

log = logging.getLogger(__name__)

ANSWER = "answer"  # the ledger kind of a request's answer: one per request, whatever it says


class ReplyRejectedError(Exception):
    """The platform refused the reply before posting it (safe to try again later)."""


@dataclass(frozen=True)
class ReplyKey:
    """What makes a reply unique: the platform, the post replied to, and the kind of reply."""

    platform: str
    target_id: str
    kind: str = "correction"


async def send_once(
    store: Store,
    key: ReplyKey,
    send: Callable[[], Awaitable[str | None]],
    *,
    check_id: str | None = None,
    job_id: str | None = None,
    reconcile: Callable[[], Awaitable[str | None]] | None = None,
) -> Reply | None:
    """Post a reply unless one exists for key; return the ledger row, or None when skipped.

    `send` performs the platform call and returns the platform's id for the posted reply.
    `reconcile` looks on the platform for a reply this job posted before it crashed and
    returns its id, or None when there is none. The ledger is written in storage threads
    (`Store.call`), off the event loop.
    """
    ledger = store.replies
    reserved = await store.call(
        ledger.reserve, key.platform, key.target_id, key.kind, check_id=check_id, job_id=job_id
    )
    if reserved is None:
        existing = await store.call(ledger.find, key.platform, key.target_id, key.kind)
        settle = (
            reconcile is not None
            and existing is not None
            and existing.status == "pending"
            and job_id is not None
            and existing.job_id == job_id
        )
        if not settle:
            log.info(
                "reply already sent or in flight; not sending again",
                extra={"platform": key.platform, "target": key.target_id, "kind": key.kind},
            )
            return None
        assert existing is not None and reconcile is not None
        found = await reconcile()
        log.warning(
            "a reply left pending by a crash was settled with the platform",
            extra={"platform": key.platform, "target": key.target_id, "found": found is not None},
        )
        if found is not None:
            await store.call(ledger.mark_sent, existing.id, platform_reply_id=found)
            return await store.call(ledger.get, existing.id)
        reserved = existing
    try:
        platform_id = await send()
    except ReplyRejectedError as exc:
        await store.call(ledger.mark_failed, reserved.id, str(exc))
        raise
    await store.call(ledger.mark_sent, reserved.id, platform_reply_id=platform_id)
    return await store.call(ledger.get, reserved.id)
