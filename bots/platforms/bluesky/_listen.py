"""Reading Bluesky notifications: mentions become check requests, the seen mark is kept.

Each poll reads `listNotifications` newest first, page by page, until it reaches what the last
poll saw (`bluesky:seen`, the newest `indexedAt` handled, in `store.state`); it handles the new
ones oldest first and then moves the mark — in the database and on Bluesky (`updateSeen`).
A crash before the mark moves replays those notifications; intake dedupes them by the mention's
URI, so nothing is answered twice and nothing is skipped. A malformed notification is logged
with what it lacks and skipped; the others are answered. A failure to read a post replied to
(network, 5xx, 429) stops the poll before the mark moves: the next poll tries again.

On every poll only notifications of the last hour are answered (`MAX_AGE`): neither an
account that existed before factbot nor a factbot that was down for a day answers old mentions
days late; the older ones are passed over (the mark moves past them).

At start, the account is marked as automated (the `bot` self-label on its profile record),
once: a profile that has it is left alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from atproto import models
from atproto.exceptions import AtProtocolError, BadRequestError

from bots.platforms.bluesky._events import MalformedNotificationError, check_request, mention_of
from bots.platforms.bluesky._session import BlueskySession
from bots.platforms.bluesky._session import query as _query
from bots.runtime.platform.contract import RequestService
from bots.settings import BlueskySettings
from pipeline.util.clock import SYSTEM, Clock
from storage.state import StateRepo

log = logging.getLogger(__name__)
SEEN_KEY = "bluesky:seen"
MAX_PAGES = 10
MAX_AGE = timedelta(hours=1)  # a mention older than this when read is not answered
BOT_LABEL = "bot"


class BlueskyListener:
    """Polls notifications and hands mentions to the service."""

    def __init__(
        self,
        settings: BlueskySettings,
        session: BlueskySession,
        state: StateRepo,
        service: RequestService,
        *,
        clock: Clock = SYSTEM,
    ) -> None:
        self.clock = clock
        self.settings = settings
        self.session = session
        self.state = state
        self.service = service

    async def run(self, stop: asyncio.Event) -> None:
        """Poll until stop is set; a failed poll is logged and tried again next time."""
        if self.settings.label_bot:
            try:
                await self.label_bot()
            except AtProtocolError as exc:
                log.warning(
                    "could not label the Bluesky account as a bot", extra={"error": str(exc)}
                )
        while not stop.is_set():
            try:
                await self.poll()
            except AtProtocolError as exc:
                log.warning("Bluesky poll failed; trying again", extra={"error": str(exc)})
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.settings.poll_seconds)

    async def poll(self) -> int:
        """Handle the notifications since the last poll; return how many mentions were taken."""
        seen = self.state.get(SEEN_KEY)
        fresh: list[Any] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params = models.AppBskyNotificationListNotifications.Params(limit=50, cursor=cursor)
            # Raw JSON, not the typed models: one malformed notification must not hide the rest.
            response = await self.session.call(
                functools.partial(_query, "app.bsky.notification.listNotifications", params)
            )
            content = response.content if isinstance(response.content, Mapping) else {}
            page = content.get("notifications") or []
            older = [n for n in page if seen is not None and _indexed(n) <= seen]
            fresh += [n for n in page if n not in older]
            cursor = content.get("cursor")
            if older or not cursor or not page:
                break
        taken = 0
        newest = seen
        cutoff = self.clock.now() - MAX_AGE
        for note in sorted(fresh, key=_indexed):
            when = _when(note)
            if when is None or when < cutoff:
                log.info("Bluesky: a notification older than an hour is not answered")
            elif await self._handle(note):
                taken += 1
            stamp = _indexed(note)
            if stamp and (newest is None or stamp > newest):
                newest = stamp
        if newest is not None and newest != seen:
            self.state.set(SEEN_KEY, newest)
            await self.session.call(
                lambda c: c.app.bsky.notification.update_seen(
                    models.AppBskyNotificationUpdateSeen.Data(seen_at=newest)
                )
            )
        return taken

    async def _handle(self, note: Any) -> bool:
        me, handle = self.session.did, self.session.handle
        try:
            mention = mention_of(note, me=me, handle=handle)
            if mention is None:
                return False
            target = None
            if mention.parent is not None:
                target = await self._post(mention.parent.uri)
            request = check_request(mention, target, me=me, handle=handle)
        except MalformedNotificationError as exc:
            uri = note.get("uri") if isinstance(note, Mapping) else None
            log.error(
                "malformed Bluesky notification skipped",
                extra={"notification": uri, "error": str(exc)},
            )
            return False
        if request.requester.is_self or request.requester.is_bot:
            return False
        intake = await self.service.intake(request)
        log.info("Bluesky mention", extra={"event": request.event_key, "status": intake.status})
        return bool(intake.status == "accepted")

    async def _post(self, uri: str) -> Mapping[str, Any]:
        params = models.AppBskyFeedGetPosts.Params(uris=[uri])
        try:
            response = await self.session.call(
                functools.partial(_query, "app.bsky.feed.getPosts", params)
            )
        except BadRequestError as exc:  # an invalid URI: retrying cannot help
            raise MalformedNotificationError(f"the post replied to ({uri}): {exc}") from exc
        content = response.content if isinstance(response.content, Mapping) else {}
        for view in content.get("posts") or ():
            if isinstance(view, Mapping) and view.get("uri") == uri:
                return view
        raise MalformedNotificationError(f"the post replied to ({uri}) is deleted or hidden")

    async def label_bot(self) -> bool:
        """Add the `bot` self-label to the account's profile; return whether it was added."""
        client = await self.session.client()
        did = self.session.did
        collection = "app.bsky.actor.profile"
        try:
            found = await client.com.atproto.repo.get_record(
                models.ComAtprotoRepoGetRecord.Params(repo=did, collection=collection, rkey="self")
            )
            value = models.get_model_as_dict(found.value)
            swap = found.cid
        except AtProtocolError as exc:
            if getattr(getattr(exc, "response", None), "status_code", None) not in (400, 404):
                raise
            value, swap = {"$type": collection}, None
        labels = value.get("labels") or {}
        values = [v for v in labels.get("values") or () if isinstance(v, Mapping)]
        if any(v.get("val") == BOT_LABEL for v in values):
            return False
        value["labels"] = {
            "$type": "com.atproto.label.defs#selfLabels",
            "values": [*values, {"val": BOT_LABEL}],
        }
        await client.com.atproto.repo.put_record(
            models.ComAtprotoRepoPutRecord.Data(
                repo=did, collection=collection, rkey="self", record=value, swap_record=swap
            )
        )
        log.info("Bluesky account labelled as a bot")
        return True


def _when(note: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(_indexed(note).replace("Z", "+00:00"))
    except ValueError:
        return None


def _indexed(note: Any) -> str:
    value = note.get("indexedAt") if isinstance(note, Mapping) else None
    return value if isinstance(value, str) else ""
