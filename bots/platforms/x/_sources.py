"""Where the monitor looks on X: recent search, watched accounts, hashtags, the notes feed.

Each source is built from the settings (`FACTBOT_X__WATCH_QUERIES`, `__WATCH_ACCOUNTS`,
`__WATCH_HASHTAGS`; the Community Notes feed when `__NOTES_ENABLED`) and only translates X's
posts into `Candidate`s; the monitor keeps the cursors (X's `since_id`: the newest post seen),
scores, budgets and routes. Every post read is billed (`api_costs`).

The eligible-posts feed is named ``x:notes:eligible``: its candidates are posts people asked a
Community Note for, so the monitor routes them to `x:note`, never to a reply (X refuses a
programmatic reply under a post whose author did not mention the bot anyway). Each carries the
sources those people suggested as its `Post.leads` (never its own links): the check fetches
them beside its search results and reads them like any page of their publishers. The feed has no
`since_id`; it answers what is eligible now, and the monitor's dedupe keeps a post checked once.
Its language (`feed_lang`) is `FACTBOT_X__NOTES_FEED_LANG`, else each language the deployment
serves (`FACTBOT_LANGUAGES`) in turn, one a read. A rate limit (X's, or the client's own) or an
outage raises `SourceUnavailableError` with the wait.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bots.platforms.x._client import XApi, XApiError, XRateLimitedError
from bots.platforms.x._community import NotesApi
from bots.platforms.x._events import (
    Includes,
    MalformedPayloadError,
    actor,
    note_leads,
    references,
    to_post,
    tweets_of,
)
from bots.runtime.monitor.candidates import (
    Batch,
    Candidate,
    CandidateSource,
    SourceUnavailableError,
)
from bots.runtime.platform.contract import Destination
from bots.settings import XSettings
from pipeline.inputs.leads import with_leads
from pipeline.records.domain import Post
from pipeline.util.clock import Clock

NOTES_FEED = "x:notes:eligible"

Fetch = Callable[[str | None, int], Awaitable[dict[str, Any]]]


def with_context(post: Post, tweet: Mapping[str, Any], includes: Includes) -> Post:
    """Return post with the text, links and images of the posts it quotes or replies to
    (expanded in the same response): what a note on it must answer may be there."""
    texts, links, images = [post.text], list(post.links), list(post.image_refs)
    for ref in references(tweet):
        target = includes.tweets.get(str(ref.get("id")))
        if target is None:
            continue
        try:
            quoted = to_post(target, includes)
        except MalformedPayloadError:
            continue
        texts.append(quoted.text)
        links += quoted.links
        images += quoted.image_refs
    if len(texts) == 1:
        return post
    return replace(
        post,
        text="\n\n".join(texts),
        links=tuple(dict.fromkeys(links)),
        image_refs=tuple(dict.fromkeys(images)),
    )


def candidates_of(
    body: Mapping[str, Any],
    source: str,
    me: str,
    clock: Clock,
    *,
    topics: tuple[str, ...] = (),
    context: bool = False,
    leads: bool = False,
) -> list[Candidate]:
    """Return the candidates of a response's posts (malformed posts left out); with context,
    each post's text followed by the posts it quotes or replies to; with leads, the sources
    note requesters suggested as each post's leads (`note_leads`, cleaned by `with_leads`)."""
    includes = Includes.of(body)
    found = []
    for tweet in tweets_of(body):
        try:
            post = to_post(tweet, includes)
        except MalformedPayloadError:
            continue
        if context:
            post = with_context(post, tweet, includes)
        if leads:
            post = with_leads(post, note_leads(tweet))
        author_id = str(tweet.get("author_id") or "")
        user = includes.users.get(author_id) or {}
        metrics = tweet.get("public_metrics") or {}
        entities = tweet.get("entities") or {}
        tags = tuple(str(h.get("tag")) for h in entities.get("hashtags") or [] if h.get("tag"))
        mentioned = {str(m.get("id")) for m in entities.get("mentions") or []}
        conversation = str(tweet.get("conversation_id") or post.platform_id)
        found.append(
            Candidate(
                source=source,
                post=post,
                author=actor(author_id, includes, me),
                destination=Destination(
                    platform="x",
                    workspace_id="",
                    channel_id=conversation,
                    message_id=post.platform_id,
                    thread_id=conversation,
                    public={"target_id": post.platform_id},
                ),
                thread_key=conversation,
                mentions_bot=me in mentioned,
                followers=int((user.get("public_metrics") or {}).get("followers_count") or 0),
                engagement=sum(
                    int(metrics.get(k) or 0)
                    for k in ("like_count", "retweet_count", "reply_count", "quote_count")
                ),
                topics=(*topics, *tags),
                seen_at=clock.now(),
            )
        )
    return found


@dataclass
class XSource:
    """One place on X read through one API call (search, a timeline, the notes feed)."""

    name: str
    api: XApi
    clock: Clock
    read: Fetch
    topics: tuple[str, ...] = ()
    cursor_from_meta: bool = True

    async def fetch(self, cursor: str | None, limit: int) -> Batch:
        """Return up to limit posts newer than cursor, and the newest id as the next cursor."""
        try:
            body = await self.read(cursor, limit)
            me = await self.api.me()
        except XRateLimitedError as exc:
            raise SourceUnavailableError(str(exc), retry_after=exc.retry_after) from exc
        except XApiError as exc:
            raise SourceUnavailableError(str(exc)) from exc
        notes = self.name == NOTES_FEED
        found = candidates_of(
            body, self.name, me, self.clock, topics=self.topics, context=notes, leads=notes
        )[-limit:]
        newest = (body.get("meta") or {}).get("newest_id") if self.cursor_from_meta else None
        return Batch(candidates=found, cursor=str(newest) if newest else None)


def build_sources(
    settings: XSettings,
    api: XApi,
    clock: Clock,
    *,
    notes: NotesApi | None = None,
    languages: Sequence[str] = (),
) -> list[CandidateSource]:
    """Return the sources the settings name (`languages`: those the deployment serves)."""
    sources: list[CandidateSource] = []
    for query in settings.watch_queries:
        sources.append(XSource(f"x:search:{query}", api, clock, _search(api, query)))
    for user_id in settings.watch_accounts:
        sources.append(XSource(f"x:account:{user_id}", api, clock, _timeline(api, user_id)))
    for tag in settings.watch_hashtags:
        tag = tag.lstrip("#")
        query = f"#{tag} -is:retweet"
        sources.append(XSource(f"x:hashtag:{tag}", api, clock, _search(api, query), (tag,)))
    if settings.notes_enabled:
        sources.append(
            XSource(
                NOTES_FEED,
                api,
                clock,
                _feed(notes or NotesApi(api), settings, feed_languages(settings, languages)),
                ("community-notes",),
                False,
            )
        )
    return sources


def _search(api: XApi, query: str) -> Fetch:
    async def read(cursor: str | None, limit: int) -> dict[str, Any]:
        return await api.search(query, cursor, limit)

    return read


def _timeline(api: XApi, user_id: str) -> Fetch:
    async def read(cursor: str | None, limit: int) -> dict[str, Any]:
        return await api.timeline(user_id, cursor, limit)

    return read


def feed_languages(settings: XSettings, served: Sequence[str]) -> tuple[str, ...]:
    """Return the `feed_lang` values to read in turn: the setting's, else the languages the
    deployment serves (ISO 639-1: zh-Hans and zh-Hant read zh), else English."""
    if settings.notes_feed_lang:
        return (settings.notes_feed_lang,)
    codes = [code.split("-")[0].lower() for code in served if code.strip()]
    return tuple(dict.fromkeys(codes)) or ("en",)


def _feed(notes: NotesApi, settings: XSettings, languages: Sequence[str]) -> Fetch:
    turn = itertools.cycle(languages)

    async def read(cursor: str | None, limit: int) -> dict[str, Any]:
        del cursor  # the feed answers what is eligible now
        return await notes.eligible(
            test_mode=settings.notes_test_mode,
            limit=limit,
            size=settings.notes_feed_size,
            lang=next(turn),
        )

    return read
