"""Reading Mastodon mention notifications: each becomes a check request, `since_id` is kept.

Each poll reads `GET /api/v1/notifications?types[]=mention&since_id=…` page by page (newest
first; the next page ends below the oldest one read) until no page is full, then handles them
oldest first and moves `mastodon:since_id` (in `store.state`) past each one handled — so a crash
mid-batch resumes after the last one taken, and intake's dedupe (by notification id) makes a
replay harmless. The same read serves as the backfill after a lost connection: whatever came
in meanwhile is above `since_id`. A malformed notification is logged with what it lacks and
passed over; a failure to read (network, 5xx, 429) ends the poll where it was. On every poll
only mentions of the last hour are answered (`MAX_AGE`), so neither an account that existed
before factbot nor a factbot that was down for a day answers old mentions days late; the
older ones are passed over (`since_id` moves past them).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from mastodon.errors import MastodonAPIError, MastodonError, MastodonNotFoundError

from bots.platforms.mastodon._api import MastodonApi, RateLimitedError, status_code
from bots.platforms.mastodon._events import (
    MalformedNotificationError,
    check_request,
    mention_status,
    parse_time,
)
from bots.runtime.platform.contract import RequestService
from bots.settings import MastodonSettings
from pipeline.util.clock import SYSTEM, Clock
from storage.state import StateRepo

log = logging.getLogger(__name__)
SINCE_KEY = "mastodon:since_id"
PAGE = 40
MAX_PAGES = 10
MAX_AGE = timedelta(hours=1)  # a mention older than this when read is not answered


def _id(note: Any) -> int:
    try:
        return int(note.get("id"))
    except (AttributeError, TypeError, ValueError):
        return -1


class MastodonListener:
    """Polls mention notifications and hands them to the service."""

    def __init__(
        self,
        settings: MastodonSettings,
        api: MastodonApi,
        state: StateRepo,
        service: RequestService,
        *,
        clock: Clock = SYSTEM,
    ) -> None:
        self.clock = clock
        self.settings = settings
        self.api = api
        self.state = state
        self.service = service

    async def run(self, stop: asyncio.Event) -> None:
        """Poll until stop is set; a failed poll is logged and tried again next time."""
        with contextlib.suppress(MastodonError, RateLimitedError):
            await self.api.read_limits()
        while not stop.is_set():
            wait = self.settings.poll_seconds
            try:
                await self.poll()
            except RateLimitedError as exc:
                log.warning(
                    "Mastodon rate limit: polling later", extra={"retry_after": exc.retry_after}
                )
                wait = max(wait, exc.retry_after or 0.0)
            except MastodonError as exc:
                log.warning("Mastodon poll failed; trying again", extra={"error": str(exc)})
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), wait)

    async def poll(self) -> int:
        """Handle the mentions since the last poll; return how many were taken."""
        since = self.state.get(SINCE_KEY)
        notes: list[Any] = []
        max_id: int | None = None
        for _ in range(MAX_PAGES):
            page = await self.api.call(
                self.api.client.notifications,
                types=["mention"],
                since_id=since,
                max_id=max_id,
                limit=PAGE,
            )
            notes += list(page)
            ids = [_id(n) for n in page if _id(n) >= 0]
            if len(page) < PAGE or not ids:
                break
            max_id = min(ids)
        me = await self.api.me()
        taken = 0
        cutoff = self.clock.now() - MAX_AGE
        for note in sorted(notes, key=_id):
            when = parse_time(note.get("created_at")) if isinstance(note, Mapping) else None
            if when is None or when < cutoff:
                log.info("Mastodon: a mention older than an hour is not answered")
            elif await self._handle(note, me):
                taken += 1
            if _id(note) >= 0 and (since is None or _id(note) > int(since)):
                since = str(_id(note))
                self.state.set(SINCE_KEY, since)
        return taken

    async def _handle(self, note: Any, me: Mapping[str, Any]) -> bool:
        try:
            status = mention_status(note)
            if status is None:
                return False
            target = None
            reply_to = status.get("in_reply_to_id")
            if reply_to:
                try:
                    target = dict(await self.api.call(self.api.client.status, reply_to))
                except MastodonNotFoundError as exc:
                    raise MalformedNotificationError(
                        f"the status replied to ({reply_to}) is deleted or hidden"
                    ) from exc
                except MastodonAPIError as exc:
                    code = status_code(exc)
                    if code is None or not 400 <= code < 500:
                        raise  # 5xx: the poll stops here and tries again
                    raise MalformedNotificationError(
                        f"the status replied to ({reply_to}) cannot be read: {code}"
                    ) from exc
            request = check_request(
                note, status, target, me=me, public_replies=self.settings.public_replies
            )
        except MalformedNotificationError as exc:
            log.error(
                "malformed Mastodon notification skipped",
                extra={
                    "notification": note.get("id") if isinstance(note, Mapping) else None,
                    "error": str(exc),
                },
            )
            return False
        if request.requester.is_self or request.requester.is_bot:
            return False
        intake = await self.service.intake(request)
        log.info("Mastodon mention", extra={"event": request.event_key, "status": intake.status})
        return bool(intake.status == "accepted")
