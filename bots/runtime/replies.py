"""Sending a reply at most once: reserve it in the ledger, call the platform, mark it sent.

Adapters post every correction through `send_once`. The ledger row is written before the
platform call, so a redelivered event, a retried job or a restarted worker finds it and sends
nothing; only a failure the platform reported before posting (`ReplyRejected`) frees the key
for a later attempt. Anything else raised by the send leaves the reply pending: factbot cannot
tell whether the platform posted it, and a duplicate correction is worse than a missing one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from storage.replies import Reply, ReplyLedger

log = logging.getLogger(__name__)


class ReplyRejectedError(Exception):
    """The platform refused the reply before posting it (safe to try again later)."""


@dataclass(frozen=True)
class ReplyKey:
    """What makes a reply unique: the platform, the post replied to, and the kind of reply."""

    platform: str
    target_id: str
    kind: str = "correction"


async def send_once(
    ledger: ReplyLedger,
    key: ReplyKey,
    send: Callable[[], Awaitable[str | None]],
    *,
    check_id: str | None = None,
    job_id: str | None = None,
) -> Reply | None:
    """Post a reply unless one exists for key; return the ledger row, or None when skipped.

    `send` performs the platform call and returns the platform's id for the posted reply.
    """
    reserved = ledger.reserve(
        key.platform, key.target_id, key.kind, check_id=check_id, job_id=job_id
    )
    if reserved is None:
        log.info(
            "reply already sent or in flight; not sending again",
            extra={"platform": key.platform, "target": key.target_id, "kind": key.kind},
        )
        return None
    try:
        platform_id = await send()
    except ReplyRejectedError as exc:
        ledger.mark_failed(reserved.id, str(exc))
        raise
    ledger.mark_sent(reserved.id, platform_reply_id=platform_id)
    return ledger.get(reserved.id)
