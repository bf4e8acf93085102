"""Where the proactive monitor looks on Bluesky: search queries, watched accounts, hashtags.

Each is a `CandidateSource` over one XRPC read: `app.bsky.feed.searchPosts` (a query, or
`#tag` for a hashtag, newest first, `since` the cursor) and `app.bsky.feed.getAuthorFeed` (a
watched account's posts and replies, newest first). The cursor is the newest `indexedAt` a
fetch returned; a fetch keeps only posts newer than it. Authors' follower counts come from one
`app.bsky.actor.getProfiles` call per fetch (25 actors at most), engagement from the counts a
post view carries. A 429 or an unreachable server is `SourceUnavailableError`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from atproto import models
from atproto.exceptions import AtProtocolError, RateLimitExceededError

from bots.platforms.bluesky._events import (
    MalformedNotificationError,
    author_of,
    engagement,
    mentions_did,
    reply_destination,
    thread_refs,
    view_post,
)
from bots.platforms.bluesky._session import BlueskySession
from bots.platforms.bluesky._session import query as _query
from bots.runtime.monitor.candidates import Batch, Candidate, SourceUnavailableError
from pipeline.util.clock import SYSTEM, Clock

log = logging.getLogger(__name__)
PROFILES_PER_CALL = 25


class BlueskySource:
    """One Bluesky place read for candidates: a search, a hashtag or an account's feed."""

    def __init__(
        self, session: BlueskySession, kind: str, value: str, *, clock: Clock = SYSTEM
    ) -> None:
        if kind not in ("search", "hashtag", "account"):
            raise ValueError(f"unknown Bluesky source kind {kind!r}")
        self.session = session
        self.kind = kind
        self.value = value.removeprefix("#") if kind == "hashtag" else value
        self.clock = clock
        self.name = f"bluesky:{kind}:{self.value}"

    async def fetch(self, cursor: str | None, limit: int) -> Batch:
        """Return up to limit posts indexed after cursor, and the newest indexedAt as cursor."""
        try:
            views = await self._read(cursor, limit)
            followers = await self._followers({_did(v) for v in views if _did(v)})
        except RateLimitExceededError as exc:
            reset = exc.reset_at
            wait = (reset - self.clock.now()).total_seconds() if reset else exc.retry_after
            raise SourceUnavailableError(f"{self.name}: rate limited", retry_after=wait) from exc
        except AtProtocolError as exc:
            raise SourceUnavailableError(f"{self.name}: {exc}") from exc
        fresh = [v for v in views if cursor is None or str(v.get("indexedAt") or "") > cursor]
        fresh.sort(key=lambda v: str(v.get("indexedAt") or ""))
        candidates = []
        for view in fresh[-limit:] if limit > 0 else []:
            try:
                candidates.append(self._candidate(view, followers))
            except MalformedNotificationError as exc:
                log.warning(
                    "malformed Bluesky post skipped", extra={"source": self.name, "error": str(exc)}
                )
        stamps = [str(v.get("indexedAt")) for v in fresh if v.get("indexedAt")]
        return Batch(candidates, max(stamps) if stamps else None)

    async def _read(self, cursor: str | None, limit: int) -> list[Mapping[str, Any]]:
        n = max(1, min(limit, 100))
        if self.kind == "account":
            params: Any = models.AppBskyFeedGetAuthorFeed.Params(actor=self.value, limit=n)
            nsid, field = "app.bsky.feed.getAuthorFeed", "feed"
        else:
            q = f"#{self.value}" if self.kind == "hashtag" else self.value
            params = models.AppBskyFeedSearchPosts.Params(q=q, sort="latest", limit=n, since=cursor)
            nsid, field = "app.bsky.feed.searchPosts", "posts"
        response = await self.session.call(functools.partial(_query, nsid, params))
        content = response.content if isinstance(response.content, Mapping) else {}
        items = content.get(field) or []
        views = [i.get("post") if field == "feed" else i for i in items if isinstance(i, Mapping)]
        return [v for v in views if isinstance(v, Mapping)]

    async def _followers(self, dids: set[str]) -> dict[str, int]:
        counts: dict[str, int] = {}
        ordered: Sequence[str] = sorted(dids)
        for start in range(0, len(ordered), PROFILES_PER_CALL):
            params = models.AppBskyActorGetProfiles.Params(
                actors=list(ordered[start : start + PROFILES_PER_CALL])
            )
            response = await self.session.call(
                functools.partial(_query, "app.bsky.actor.getProfiles", params)
            )
            content = response.content if isinstance(response.content, Mapping) else {}
            for profile in content.get("profiles") or ():
                if isinstance(profile, Mapping) and isinstance(profile.get("followersCount"), int):
                    counts[str(profile.get("did"))] = profile["followersCount"]
        return counts

    def _candidate(self, view: Mapping[str, Any], followers: Mapping[str, int]) -> Candidate:
        me = self.session.did
        post = view_post(view)
        author = author_of(view, me=me)
        self_ref, _parent, root = thread_refs(view)
        record = view.get("record") or {}
        tags = [self.value] if self.kind == "hashtag" else []
        return Candidate(
            source=self.name,
            post=post,
            author=author,
            destination=reply_destination(
                self_ref, root, event_key=self_ref.uri, target=self_ref.uri
            ),
            thread_key=root.uri,
            mentions_bot=mentions_did(record, me),
            followers=followers.get(author.user_id, 0),
            engagement=engagement(view),
            topics=tuple(tags),
            seen_at=self.clock.now(),
        )


def _did(view: Mapping[str, Any]) -> str:
    author = view.get("author")
    return str(author.get("did") or "") if isinstance(author, Mapping) else ""
