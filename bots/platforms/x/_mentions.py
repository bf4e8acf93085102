"""Polling X for mentions with a persisted `since_id`: each mention handed to intake once.

X has no push for a bot's mentions on pay-per-use, so the adapter polls
`GET /2/users/:id/mentions` with `since_id` = the newest mention already handled (kept in
`store.state` under ``x:mentions:since_id``). A poll reads every page newer than it, hands the
mentions to `PlatformService.intake` oldest first (the mention id is the event key, so a
mention seen twice — a crash before the cursor moved, two processes — is stored once and
answered once), and only then moves the cursor to `meta.newest_id`. A restart resumes there:
nothing is answered twice and nothing between the two runs is missed. On every poll only
mentions of the last hour are answered (`MAX_AGE`, as on Bluesky and Mastodon), so neither a
first poll over an account's history nor a factbot that was down for a day answers old
mentions days late; the older ones are passed over (the cursor moves past them).

A mention whose payload is malformed is logged and skipped; the others go on. A 429 pauses the
poller until the window resets (read from the headers, never tweepy's broken wait).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from bots.platforms.x._client import XApi, XApiError, XRateLimitedError
from bots.platforms.x._events import (
    Includes,
    MalformedPayloadError,
    mention_request,
    missing_targets,
    tweets_of,
)
from bots.runtime.platform.contract import RequestService
from bots.settings import XSettings
from pipeline.util.clock import SYSTEM, Clock
from storage.state import StateRepo

log = logging.getLogger(__name__)

SINCE_KEY = "x:mentions:since_id"
MAX_PAGES = 5  # a poll reads at most this many pages; the rest waits for the next poll
MAX_AGE = timedelta(hours=1)  # a mention older than this when read is not answered


@dataclass(frozen=True)
class PollResult:
    """What one poll did."""

    seen: int = 0
    accepted: int = 0
    duplicates: int = 0
    stopped: int = 0  # refused or ignored by the guards
    malformed: int = 0
    old: int = 0  # older than MAX_AGE (or undated): passed over
    since_id: str | None = None


class MentionPoller:
    """Reads new mentions and hands them to the service."""

    def __init__(
        self,
        settings: XSettings,
        api: XApi,
        service: RequestService,
        state: StateRepo,
        *,
        clock: Clock = SYSTEM,
    ) -> None:
        self.clock = clock
        self.settings = settings
        self.api = api
        self.service = service
        self.state = state

    async def poll_once(self) -> PollResult:
        """Read the mentions newer than the cursor, hand each to intake, move the cursor."""
        since = self.state.get(SINCE_KEY)
        me = await self.api.me()
        mentions: list[Any] = []
        includes: list[Includes] = []
        newest: str | None = None
        token: str | None = None
        for _ in range(MAX_PAGES):
            body = await self.api.mentions(since, token=token)
            meta = body.get("meta") or {}
            newest = newest or meta.get("newest_id")
            page = Includes.of(body)
            mentions.extend((m, page) for m in tweets_of(body))
            includes.append(page)
            token = meta.get("next_token")
            if not token:
                break
        counts = {"accepted": 0, "duplicate": 0, "stopped": 0, "malformed": 0, "old": 0}
        cutoff = self.clock.now() - MAX_AGE
        recent = []
        for mention, page in mentions:
            when = _created(mention)
            if when is None or when < cutoff:
                counts["old"] += 1
                log.info("X: a mention older than an hour is not answered")
            else:
                recent.append((mention, page))
        lookups = await self._lookups(recent)
        for mention, page in sorted(recent, key=lambda pair: int(str(pair[0].get("id", 0)))):
            if str(mention.get("author_id") or "") == me:
                continue  # factbot's own post (a reply thread) mentions nobody to answer
            try:
                request = mention_request(mention, page, me, lookups=lookups)
            except MalformedPayloadError as exc:
                counts["malformed"] += 1
                log.warning("malformed X mention skipped", extra={"error": str(exc)})
                continue
            intake = await self.service.intake(request)
            if intake.status == "accepted":
                counts["accepted"] += 1
            elif intake.status == "duplicate":
                counts["duplicate"] += 1
            else:
                counts["stopped"] += 1
                log.info(
                    "X mention not answered",
                    extra={"platform": "x", "event": request.event_key, "reason": intake.reason},
                )
        if newest and (since is None or int(newest) > int(since)):
            self.state.set(SINCE_KEY, str(newest))
        result = PollResult(
            seen=len(mentions),
            accepted=counts["accepted"],
            duplicates=counts["duplicate"],
            stopped=counts["stopped"],
            malformed=counts["malformed"],
            old=counts["old"],
            since_id=self.state.get(SINCE_KEY),
        )
        log.info("X mentions polled", extra={"platform": "x", **result.__dict__})
        return result

    async def _lookups(self, mentions: list[tuple[Any, Includes]]) -> Includes | None:
        """Read the targets the expansions left out (one billed lookup for all of them)."""
        wanted = sorted({t for m, inc in mentions for t in missing_targets([m], inc)})
        if not wanted:
            return None
        try:
            return Includes.of({"includes": _as_includes(await self.api.tweets(wanted[:100]))})
        except XApiError as exc:
            if isinstance(exc, XRateLimitedError):
                raise
            log.warning("X targets could not be read", extra={"error": str(exc)})
            return None

    async def listen(self, stop: asyncio.Event) -> None:
        """Poll until stop is set, pausing for the poll interval or a rate-limit window."""
        while not stop.is_set():
            wait = self.settings.poll_seconds
            try:
                await self.poll_once()  # a spent window is waited out on the next poll
            except XRateLimitedError as exc:
                wait = max(wait, exc.retry_after)
            except XApiError as exc:
                log.warning("X mentions poll failed", extra={"error": str(exc)})
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), wait)


def _created(mention: Any) -> datetime | None:
    """Return when a mention was posted (aware), or None if its payload does not say."""
    try:
        when = datetime.fromisoformat(str(mention["created_at"]).replace("Z", "+00:00"))
    except (KeyError, TypeError, ValueError):
        return None
    return when if when.tzinfo is not None else None


def _as_includes(body: dict[str, Any]) -> dict[str, Any]:
    """Return a lookup's posts and expansions as one includes object."""
    inc = dict(body.get("includes") or {})
    inc["tweets"] = [*(inc.get("tweets") or []), *tweets_of(body)]
    return inc
