"""Where the proactive monitor looks on Mastodon: hashtag timelines, watched accounts, trends.

`GET /api/v1/timelines/tag/:tag` and `GET /api/v1/accounts/:id/statuses` (the account looked
up once by its `user@instance` name) are read with `since_id` = the cursor, the newest status id
seen; `GET /api/v1/trends/statuses` has no cursor (trends are re-read each run; the monitor
dedupes by post). Followers and engagement come with each status (`account.followers_count`,
favourites, boosts, replies). Mastodon has no thread root in a status: the thread key is the
status it replies to, or itself. A 429 or an unreachable instance is `SourceUnavailableError`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mastodon.errors import MastodonError

from bots.platforms.mastodon._api import MastodonApi, RateLimitedError
from bots.platforms.mastodon._events import (
    PLATFORM,
    MalformedNotificationError,
    account_actor,
    engagement,
    status_post,
)
from bots.runtime.monitor.candidates import Batch, Candidate, SourceUnavailableError
from bots.runtime.platform.contract import Destination
from pipeline.util.clock import SYSTEM, Clock

log = logging.getLogger(__name__)


class MastodonSource:
    """One Mastodon place read for candidates: a hashtag, an account, or the trends."""

    def __init__(
        self, api: MastodonApi, kind: str, value: str = "", *, clock: Clock = SYSTEM
    ) -> None:
        if kind not in ("hashtag", "account", "trending"):
            raise ValueError(f"unknown Mastodon source kind {kind!r}")
        self.api = api
        self.kind = kind
        self.value = value.removeprefix("#").removeprefix("@")
        self.clock = clock
        self.name = f"mastodon:{kind}" + (f":{self.value}" if self.value else "")
        self._account_id: str | None = None

    async def fetch(self, cursor: str | None, limit: int) -> Batch:
        """Return up to limit statuses newer than cursor, and the newest status id."""
        n = max(1, min(limit, 40))
        client = self.api.client
        try:
            if self.kind == "hashtag":
                found = await self.api.call(
                    client.timeline_hashtag, self.value, since_id=cursor, limit=n
                )
            elif self.kind == "account":
                if self._account_id is None:
                    account = await self.api.call(client.account_lookup, self.value)
                    self._account_id = str(account["id"])
                found = await self.api.call(
                    client.account_statuses,
                    self._account_id,
                    since_id=cursor,
                    limit=n,
                    exclude_reblogs=True,
                )
            else:
                found = await self.api.call(client.trending_statuses, limit=n)
            me = await self.api.me()
        except RateLimitedError as exc:
            raise SourceUnavailableError(
                f"{self.name}: rate limited", retry_after=exc.retry_after
            ) from exc
        except MastodonError as exc:
            raise SourceUnavailableError(f"{self.name}: {exc}") from exc
        statuses = [s for s in found if isinstance(s, Mapping)]
        candidates = []
        for status in (
            sorted(statuses, key=lambda s: int(s.get("id") or 0))[-n:] if limit > 0 else []
        ):
            try:
                candidates.append(self._candidate(status, me))
            except (MalformedNotificationError, ValueError) as exc:
                log.warning(
                    "malformed Mastodon status skipped",
                    extra={"source": self.name, "error": str(exc)},
                )
        ids = [int(s["id"]) for s in statuses if str(s.get("id") or "").isdigit()]
        cursor_out = str(max(ids)) if ids and self.kind != "trending" else None
        return Batch(candidates, cursor_out)

    def _candidate(self, status: Mapping[str, Any], me: Mapping[str, Any]) -> Candidate:
        my_id = str(me.get("id") or "")
        account = status.get("account") or {}
        author = account_actor(account, me=my_id)
        sid = str(status["id"])
        mentions = {
            str(m.get("id")) for m in status.get("mentions") or () if isinstance(m, Mapping)
        }
        tags = tuple(
            str(t.get("name"))
            for t in status.get("tags") or ()
            if isinstance(t, Mapping) and t.get("name")
        )
        visibility = str(status.get("visibility") or "direct")
        return Candidate(
            source=self.name,
            post=status_post(status),
            author=author,
            destination=Destination(
                platform=PLATFORM,
                workspace_id="",
                channel_id=sid,
                message_id=sid,
                thread_id=sid,
                public={
                    "event_key": f"monitor:{sid}",
                    "in_reply_to_id": sid,
                    "visibility": visibility,
                },
            ),
            thread_key=str(status.get("in_reply_to_id") or sid),
            mentions_bot=my_id in mentions,
            followers=int(account.get("followers_count") or 0),
            engagement=engagement(status),
            topics=tags or ((self.value,) if self.kind == "hashtag" else ()),
            seen_at=self.clock.now(),
        )
