"""X API v2 payloads → factbot's requests and candidates.

A mention asks factbot to check the post it replies to or quotes (its target), else itself.
The target's text, author, time and media come in the same response, through expansions
(`referenced_tweets.id`, `referenced_tweets.id.author_id`,
`referenced_tweets.id.attachments.media_keys`): `includes.tweets`, `includes.users`,
`includes.media`. A long post's full text is in `note_tweet.text`. Newer API versions spell
`referenced_tweets` as `referenced_posts` (and may answer `includes.posts`): both are read.

A post eligible for a Community Note may carry what the people who asked for one pointed at
(`suggested_source_links`, `suggested_source_links_with_counts`, `note_request_suggestions`):
`note_leads` returns those URLs, most suggested first, as leads for retrieval; and notes X
matched to its media (`matched_media_notes`): `media_note` says the claim is in the media.

The text is the post's own, with X's t.co links replaced by the URLs they stand for (the
pipeline fetches those) and media links dropped (the media are image references). Nothing in a
post is acted on: its text is only checked (prompt injection is inert here).

Malformed payloads (no id, no text) raise `MalformedPayloadError` naming what is missing, so
the poller logs the mention and goes on without losing the others.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bots.runtime.platform.contract import Actor, CheckRequest, Destination, Note
from pipeline.records.domain import Post, new_id
from pipeline.util.i18n import N_

# A fixed note: the reply job writes it in the reply's language (`N_` marks it for the catalogue).
UNREAD_PARENT = N_("The post this mention answers could not be read; its own text was checked.")

PLATFORM = "x"
_MEDIA_HOSTS = ("pic.twitter.com", "pic.x.com")
_LEADING_HANDLES = re.compile(r"^(?:\s*@\w{1,15})+\s*")
_LEAD_URL = re.compile(r"https?://[^\s\"'<>]+", re.IGNORECASE)


class MalformedPayloadError(ValueError):
    """An X payload lacks what factbot needs (an id, a text)."""


@dataclass(frozen=True)
class Includes:
    """A response's expansions, by id."""

    tweets: Mapping[str, Mapping[str, Any]]
    users: Mapping[str, Mapping[str, Any]]
    media: Mapping[str, Mapping[str, Any]]

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> Includes:
        """Return the includes of a response body."""
        inc = body.get("includes") or {}
        posts = [*(inc.get("tweets") or []), *(inc.get("posts") or [])]
        return cls(
            tweets={str(t["id"]): t for t in posts if "id" in t},
            users={str(u["id"]): u for u in inc.get("users") or [] if "id" in u},
            media={str(m["media_key"]): m for m in inc.get("media") or [] if "media_key" in m},
        )


def tweets_of(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Return a response's posts (`data`), oldest first."""
    data = body.get("data") or []
    if isinstance(data, dict):
        data = [data]
    return sorted(
        data, key=lambda t: int(str(t.get("id") or "0")) if str(t.get("id") or "0").isdigit() else 0
    )


def target_id(tweet: Mapping[str, Any]) -> str | None:
    """Return the id of the post a post replies to or quotes, or None."""
    refs = {str(r.get("type")): str(r.get("id")) for r in references(tweet)}
    return refs.get("replied_to") or refs.get("quoted")


def references(tweet: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Return the posts a post references (`referenced_tweets`, or `referenced_posts`)."""
    refs = tweet.get("referenced_tweets") or tweet.get("referenced_posts") or []
    return [r for r in refs if isinstance(r, Mapping)]


def _urls_in(item: Any) -> list[str]:
    if isinstance(item, str):
        return [m.group(0) for m in _LEAD_URL.finditer(item)]
    if isinstance(item, Mapping):
        found: list[str] = []
        for key in ("url", "link", "source_link", "expanded_url", "text", "source", "links"):
            found += _urls_in(item.get(key))
        return found
    if isinstance(item, list):
        return [url for part in item for url in _urls_in(part)]
    return []


def note_leads(tweet: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the URLs note requesters suggested as sources, the most suggested first."""
    counted = []
    for entry in tweet.get("suggested_source_links_with_counts") or []:
        count = entry.get("count", 0) if isinstance(entry, Mapping) else 0
        counted += [(-int(count or 0), url) for url in _urls_in(entry)]
    ranked = [url for _, url in sorted(counted, key=lambda pair: pair[0])]
    ranked += _urls_in(tweet.get("suggested_source_links") or [])
    ranked += _urls_in(tweet.get("note_request_suggestions") or [])
    return tuple(dict.fromkeys(url.rstrip(".,;)") for url in ranked))


def media_note(tweet: Mapping[str, Any]) -> bool:
    """Return whether X matched notes to the post's media (the claim is in an image)."""
    return bool(tweet.get("matched_media_notes"))


def post_text(tweet: Mapping[str, Any]) -> str:
    """Return a post's full text with t.co links expanded and media links dropped."""
    note = tweet.get("note_tweet") or {}
    text = str(note.get("text") or tweet.get("text") or "")
    entities = note.get("entities") or tweet.get("entities") or {}
    for url in entities.get("urls") or []:
        short = str(url.get("url") or "")
        if not short:
            continue
        expanded = str(url.get("expanded_url") or short)
        media = url.get("media_key") or str(url.get("display_url") or "").startswith(_MEDIA_HOSTS)
        text = text.replace(short, "" if media else expanded)
    return " ".join(text.split())


def post_links(tweet: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the URLs a post links to (expanded), media links left out."""
    entities = (tweet.get("note_tweet") or {}).get("entities") or tweet.get("entities") or {}
    links = []
    for url in entities.get("urls") or []:
        display = str(url.get("display_url") or "")
        expanded = str(url.get("expanded_url") or url.get("url") or "")
        if expanded and not url.get("media_key") and not display.startswith(_MEDIA_HOSTS):
            links.append(expanded)
    return tuple(dict.fromkeys(links))


def media_refs(tweet: Mapping[str, Any], includes: Includes) -> tuple[str, ...]:
    """Return the image URLs of a post's media (a video's preview image)."""
    keys = (tweet.get("attachments") or {}).get("media_keys") or []
    refs = []
    for key in keys:
        media = includes.media.get(str(key)) or {}
        url = media.get("url") if media.get("type") == "photo" else media.get("preview_image_url")
        if url:
            refs.append(str(url))
    return tuple(refs)


def to_post(tweet: Mapping[str, Any], includes: Includes, *, strip_handles: bool = False) -> Post:
    """Return the Post of an X post (its author left for the service to pseudonymise)."""
    tweet_id = str(tweet.get("id") or "")
    if not tweet_id.isdigit():
        raise MalformedPayloadError(f"an X post without a numeric id: {tweet_id!r}")
    if "text" not in tweet and "note_tweet" not in tweet:
        raise MalformedPayloadError(f"X post {tweet_id} has no text")
    text = post_text(tweet)
    if strip_handles:
        text = _LEADING_HANDLES.sub("", text)
    author = includes.users.get(str(tweet.get("author_id") or "")) or {}
    username = author.get("username") or "i"
    created = tweet.get("created_at")
    return Post(
        id=new_id(),
        platform=PLATFORM,
        platform_id=tweet_id,
        text=text,
        url=f"https://x.com/{username}/status/{tweet_id}",
        created_at=datetime.fromisoformat(str(created).replace("Z", "+00:00")) if created else None,
        links=post_links(tweet),
        image_refs=media_refs(tweet, includes),
    )


def actor(user_id: str, includes: Includes, me: str) -> Actor:
    """Return the Actor of an X account."""
    user = includes.users.get(user_id) or {}
    return Actor(PLATFORM, user_id, is_self=user_id == me, name=user.get("username"))


def mention_request(
    mention: Mapping[str, Any], includes: Includes, me: str, *, lookups: Includes | None = None
) -> CheckRequest:
    """Return the CheckRequest of one mention: check its target, answer under the mention.

    `lookups` holds targets read separately (absent from the mention's expansions).
    """
    mention_id = str(mention.get("id") or "")
    if not mention_id.isdigit():
        raise MalformedPayloadError(f"a mention without a numeric id: {mention_id!r}")
    requester = str(mention.get("author_id") or "")
    if not requester:
        raise MalformedPayloadError(f"mention {mention_id} has no author_id")
    wanted = target_id(mention)
    notes: tuple[Note, ...] = ()
    target: Mapping[str, Any] | None = None
    found_in = includes
    if wanted is not None:
        target = includes.tweets.get(wanted)
        if target is None and lookups is not None:
            target, found_in = lookups.tweets.get(wanted), lookups
        if target is None:
            notes = (Note(UNREAD_PARENT),)
    if target is None:
        post = to_post(mention, includes, strip_handles=True)
        author_id = requester
    else:
        merged = Includes(
            tweets=found_in.tweets,
            users={**includes.users, **found_in.users},
            media={**includes.media, **found_in.media},
        )
        post = to_post(target, merged)
        author_id = str(target.get("author_id") or "")
        includes = merged
    conversation = str(mention.get("conversation_id") or post.platform_id)
    destination = Destination(
        platform=PLATFORM,
        workspace_id="",
        channel_id=conversation,
        message_id=mention_id,  # X takes a reply only under the post that mentioned the bot
        thread_id=conversation,
        public={"mention_id": mention_id, "target_id": post.platform_id},
    )
    return CheckRequest(
        post=post,
        requester=actor(requester, includes, me),
        destination=destination,
        event_key=mention_id,
        author=actor(author_id, includes, me) if author_id else None,
        via="mention",
        notes=notes,
    )


def missing_targets(mentions: Sequence[Mapping[str, Any]], includes: Includes) -> list[str]:
    """Return the ids of targets the expansions did not include (deleted, or cut off)."""
    wanted = [target_id(m) for m in mentions]
    return sorted({t for t in wanted if t is not None and t not in includes.tweets})
