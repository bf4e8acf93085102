"""Bluesky notifications and posts (XRPC JSON) → `CheckRequest`s and `Candidate`s (translation).

A mention is a notification with reason `mention`, or `reply` when the reply mentions the bot
(its facets or its text name the bot). The post checked is the one the mention replies to when
it is a reply, else the mention itself (without the bot's handle). The answer replies to the
mention: `parent` is the mention, `root` is the mention's own root (or the mention when it
starts a thread) — both as strong references (URI + CID), kept in `Destination.public`.

A post's id is its `at://` URI; its link is the bsky.app page. Links come from the text, link
facets and an external embed; images from an images embed's view (`fullsize`). A notification
that lacks what a reply needs raises `MalformedNotificationError` naming what is missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bots.runtime.platform.contract import Actor, CheckRequest, Destination
from pipeline.records.domain import Post, new_id
from pipeline.util.text import URL_RE

PLATFORM = "bluesky"
POST_TYPE = "app.bsky.feed.post"


class MalformedNotificationError(ValueError):
    """A notification or post lacks a field factbot needs; the message says which."""


@dataclass(frozen=True)
class Ref:
    """A strong reference to a record: its URI and the CID of the version meant."""

    uri: str
    cid: str


def _str(data: Mapping[str, Any], key: str, what: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise MalformedNotificationError(f"{what} has no {key!r}")
    return value


def _ref(data: Any, what: str) -> Ref:
    if not isinstance(data, Mapping):
        raise MalformedNotificationError(f"{what} is not a strong reference")
    return Ref(_str(data, "uri", what), _str(data, "cid", what))


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def rkey(uri: str) -> str:
    """Return the record key (last part) of an at:// URI."""
    return uri.rsplit("/", 1)[-1]


def web_url(handle: str | None, uri: str) -> str | None:
    """Return the bsky.app page of a post."""
    if not handle:
        return None
    return f"https://bsky.app/profile/{handle}/post/{rkey(uri)}"


def mentions_did(record: Mapping[str, Any], did: str) -> bool:
    """Return whether a post record's facets mention did."""
    for facet in record.get("facets") or ():
        for feature in (facet or {}).get("features") or ():
            if isinstance(feature, Mapping) and feature.get("did") == did:
                return True
    return False


def record_links(record: Mapping[str, Any], text: str) -> tuple[str, ...]:
    """Return the links of a post record: its text, its link facets, its external embed."""
    links = list(URL_RE.findall(text))
    for facet in record.get("facets") or ():
        for feature in (facet or {}).get("features") or ():
            uri = feature.get("uri") if isinstance(feature, Mapping) else None
            if isinstance(uri, str) and uri.startswith(("https://", "http://")):
                links.append(uri)
    embed = record.get("embed")
    external = embed.get("external") if isinstance(embed, Mapping) else None
    if isinstance(external, Mapping) and isinstance(external.get("uri"), str):
        links.append(external["uri"])
    return tuple(dict.fromkeys(links))


def view_images(view: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the full-size image URLs of a post view's images embed."""
    embed = view.get("embed")
    if not isinstance(embed, Mapping):
        return ()
    media = embed.get("media") if isinstance(embed.get("media"), Mapping) else embed
    images = media.get("images") if isinstance(media, Mapping) else None
    out = []
    for image in images or ():
        url = image.get("fullsize") if isinstance(image, Mapping) else None
        if isinstance(url, str) and url.startswith("https://"):
            out.append(url)
    return tuple(out)


def view_post(view: Mapping[str, Any], *, text: str | None = None) -> Post:
    """Return the Post of a post view (getPosts, a feed, a search hit)."""
    uri = _str(view, "uri", "the post")
    record = view.get("record")
    if not isinstance(record, Mapping):
        raise MalformedNotificationError(f"the post {uri} has no record")
    body = record.get("text") if text is None else text
    if not isinstance(body, str):
        raise MalformedNotificationError(f"the post {uri} has no text")
    found = view.get("author")
    author: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    return Post(
        id=new_id(),
        platform=PLATFORM,
        platform_id=uri,
        text=body,
        url=web_url(author.get("handle"), uri),
        author=None,  # personal data: the raw DID lives only in the request's Actor
        created_at=_time(record.get("createdAt")) or _time(view.get("indexedAt")),
        links=record_links(record, body),
        image_refs=view_images(view),
        language=(record.get("langs") or [None])[0],
    )


def author_of(view: Mapping[str, Any], *, me: str) -> Actor:
    """Return the Actor of a post view's or a notification's author."""
    author = view.get("author")
    if not isinstance(author, Mapping):
        raise MalformedNotificationError("the post has no author")
    did = _str(author, "did", "the author")
    labels = {
        label.get("val") for label in author.get("labels") or () if isinstance(label, Mapping)
    }
    return Actor(
        PLATFORM,
        did,
        is_bot=did == me or "bot" in labels,
        is_self=did == me,
        name=author.get("handle"),
    )


def engagement(view: Mapping[str, Any]) -> int:
    """Return likes + reposts + replies + quotes of a post view."""
    keys = ("likeCount", "repostCount", "replyCount", "quoteCount")
    return sum(int(view.get(k) or 0) for k in keys if isinstance(view.get(k), int))


def thread_refs(view_or_note: Mapping[str, Any]) -> tuple[Ref, Ref | None, Ref]:
    """Return (the post itself, the post it replies to, the thread's root) as strong refs."""
    me = Ref(_str(view_or_note, "uri", "the post"), _str(view_or_note, "cid", "the post"))
    record = view_or_note.get("record")
    if not isinstance(record, Mapping):
        raise MalformedNotificationError(f"the post {me.uri} has no record")
    reply = record.get("reply")
    if reply is None:
        return me, None, me
    if not isinstance(reply, Mapping):
        raise MalformedNotificationError(f"the post {me.uri} has a malformed reply reference")
    return me, _ref(reply.get("parent"), "the reply's parent"), _ref(reply.get("root"), "the root")


def reply_destination(post: Ref, root: Ref, *, event_key: str, target: str) -> Destination:
    """Return the destination of a reply to post in the thread rooted at root."""
    return Destination(
        platform=PLATFORM,
        workspace_id="",
        channel_id=root.uri,  # a thread is the channel: its rate limit and its one answer
        message_id=target,
        thread_id=root.uri,
        public={
            "event_key": event_key,
            "parent_uri": post.uri,
            "parent_cid": post.cid,
            "root_uri": root.uri,
            "root_cid": root.cid,
        },
    )


@dataclass(frozen=True)
class Mention:
    """A notification that asks factbot: the mention, what it replies to, who wrote it."""

    note: Mapping[str, Any]
    post: Ref
    parent: Ref | None
    root: Ref


def mention_of(note: Any, *, me: str, handle: str) -> Mention | None:
    """Return the mention a notification carries, None when it asks nothing of factbot.

    Raise MalformedNotificationError when it is a mention but lacks what a reply needs.
    """
    if not isinstance(note, Mapping):
        raise MalformedNotificationError("a notification is not an object")
    reason = note.get("reason")
    if reason not in ("mention", "reply"):
        return None
    record = note.get("record")
    if not isinstance(record, Mapping) or record.get("$type", POST_TYPE) != POST_TYPE:
        raise MalformedNotificationError(
            f"the {reason} notification {note.get('uri')!r} carries no post record"
        )
    text = record.get("text")
    if not isinstance(text, str):
        raise MalformedNotificationError(f"the post {note.get('uri')!r} has no text")
    if reason == "reply" and not (mentions_did(record, me) or f"@{handle}" in text):
        return None  # a reply to factbot's own post that does not ask it anything
    post, parent, root = thread_refs(note)
    return Mention(note, post, parent, root)


def strip_handle(text: str, handle: str) -> str:
    """Return text without the @handle of factbot."""
    return " ".join(text.replace(f"@{handle}", " ").split())


def check_request(
    mention: Mention, target: Mapping[str, Any] | None, *, me: str, handle: str
) -> CheckRequest:
    """Return the request to check target (the post replied to), or the mention itself."""
    note = mention.note
    requester = author_of(note, me=me)
    if target is None:
        record = note["record"]
        post = view_post(note, text=strip_handle(str(record.get("text") or ""), handle))
        author = requester
    else:
        post = view_post(target)
        author = author_of(target, me=me)
    return CheckRequest(
        post=post,
        requester=requester,
        destination=reply_destination(
            mention.post, mention.root, event_key=mention.post.uri, target=post.platform_id
        ),
        event_key=mention.post.uri,
        author=author,
        via="mention",
    )
