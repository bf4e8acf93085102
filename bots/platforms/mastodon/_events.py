"""Mastodon notifications and statuses (API JSON) → `CheckRequest`s and `Candidate`s.

A status's content is HTML: it is turned into the text a reader sees (paragraphs and line
breaks kept, tags dropped, entities decoded); its links are the anchors that are neither a
mention nor a hashtag, and the preview card's URL; its images the image attachments.

The post checked is the status the mention replies to, when it is a reply, else the mention
(without factbot's handle). The answer replies to the mention (`in_reply_to_id`) with the
narrowest of the two statuses' visibilities — a reply never reaches more people than the posts
it quotes (direct < private < unlisted < public). A direct reply keeps every account the
mention addressed, or nobody could read it; any reply names the asker.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from html.parser import HTMLParser
from typing import Any

from bots.runtime.platform.contract import Actor, CheckRequest, Destination
from pipeline.records.domain import Post, new_id

PLATFORM = "mastodon"
VISIBILITIES = ("direct", "private", "unlisted", "public")  # narrowest first


class MalformedNotificationError(ValueError):
    """A notification or status lacks a field factbot needs; the message says which."""


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.parts.append("\n")
        elif tag == "p" and self.parts:
            self.parts.append("\n\n")
        elif tag == "a":
            found = dict(attrs)
            classes = (found.get("class") or "").split()
            href = found.get("href") or ""
            if "mention" not in classes and "hashtag" not in classes and href.startswith("http"):
                self.links.append(href)

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_text(content: str) -> tuple[str, tuple[str, ...]]:
    """Return (the text a reader sees, the links) of a status's HTML content."""
    parser = _Text()
    parser.feed(content)
    parser.close()
    text = html.unescape("".join(parser.parts))
    text = "\n".join(" ".join(line.split()) for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip(), tuple(dict.fromkeys(parser.links))


def _field(data: Mapping[str, Any], key: str, what: str) -> Any:
    value = data.get(key)
    if value is None or value == "":
        raise MalformedNotificationError(f"{what} has no {key!r}")
    return value


def parse_time(value: Any) -> datetime | None:
    """Return a Mastodon timestamp (a string or what Mastodon.py parsed) as a datetime."""
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, str):
        try:
            found = datetime.fromisoformat(value.replace("Z", "+00:00"))
            return found if found.tzinfo is not None else found.replace(tzinfo=UTC)
        except ValueError:
            return None
    return None


def narrowest(*visibilities: str) -> str:
    """Return the narrowest of visibilities (an unknown one counts as direct)."""
    return min(visibilities, key=lambda v: VISIBILITIES.index(v) if v in VISIBILITIES else 0)


def account_actor(account: Any, *, me: str) -> Actor:
    """Return the Actor of an account object."""
    if not isinstance(account, Mapping):
        raise MalformedNotificationError("the status has no account")
    uid = str(_field(account, "id", "the account"))
    return Actor(
        PLATFORM,
        uid,
        is_bot=bool(account.get("bot")) or uid == me,
        is_self=uid == me,
        name=account.get("acct"),
    )


def status_post(status: Mapping[str, Any], *, drop: Sequence[str] = ()) -> Post:
    """Return the Post of a status (without the handles in drop)."""
    content = _field(status, "content", "the status")
    if not isinstance(content, str):
        raise MalformedNotificationError("the status's content is not text")
    text, links = html_text(content)
    for handle in drop:
        text = re.sub(rf"@{re.escape(handle)}(?![\w@.-])", " ", text)
    text = "\n".join(" ".join(line.split()) for line in text.split("\n")).strip()
    card = status.get("card")
    if isinstance(card, Mapping) and isinstance(card.get("url"), str):
        links = (*links, card["url"])
    images = tuple(
        str(m["url"])
        for m in status.get("media_attachments") or ()
        if isinstance(m, Mapping)
        and m.get("type") == "image"
        and str(m.get("url", "")).startswith("https://")
    )
    return Post(
        id=new_id(),
        platform=PLATFORM,
        platform_id=str(status.get("uri") or _field(status, "id", "the status")),
        text=text,
        url=status.get("url") or status.get("uri"),
        author=None,  # personal data: the raw account id lives only in the request's Actor
        created_at=parse_time(status.get("created_at")),
        links=tuple(dict.fromkeys(links)),
        image_refs=images,
        language=status.get("language"),
    )


def engagement(status: Mapping[str, Any]) -> int:
    """Return favourites + boosts + replies (+ quotes) of a status."""
    keys = ("favourites_count", "reblogs_count", "replies_count", "quotes_count")
    return sum(int(status.get(k) or 0) for k in keys if isinstance(status.get(k), int))


def mention_status(note: Any) -> Mapping[str, Any] | None:
    """Return the status of a mention notification, None for other notifications."""
    if not isinstance(note, Mapping):
        raise MalformedNotificationError("a notification is not an object")
    if note.get("type") != "mention":
        return None
    status = note.get("status")
    if not isinstance(status, Mapping):
        raise MalformedNotificationError(
            f"the mention notification {note.get('id')!r} has no status"
        )
    _field(status, "id", "the mention")
    _field(status, "visibility", "the mention")
    return status


def check_request(
    note: Mapping[str, Any],
    status: Mapping[str, Any],
    target: Mapping[str, Any] | None,
    *,
    me: Mapping[str, Any],
    public_replies: str = "public",
) -> CheckRequest:
    """Return the request to check target (the status replied to), or the mention itself."""
    my_id = str(me.get("id") or "")
    my_acct = str(me.get("acct") or me.get("username") or "")
    requester = account_actor(status.get("account"), me=my_id)
    if target is None:
        post = status_post(status, drop=[my_acct, my_acct.split("@")[0]])
        author, target = requester, status
    else:
        post = status_post(target)
        author = account_actor(target.get("account"), me=my_id)
    visibility = narrowest(str(status["visibility"]), str(target.get("visibility") or "direct"))
    if visibility == "public" and public_replies == "unlisted":
        visibility = "unlisted"
    asker = str((status.get("account") or {}).get("acct") or "")
    addressed = [asker] + [
        str(m.get("acct"))
        for m in status.get("mentions") or ()
        if isinstance(m, Mapping) and m.get("acct") and str(m.get("id")) != my_id
    ]
    event_key = str(_field(note, "id", "the notification"))
    return CheckRequest(
        post=post,
        requester=requester,
        destination=Destination(
            platform=PLATFORM,
            workspace_id="",
            channel_id=str(target.get("id")),  # the post checked: one answer per thread
            message_id=str(target.get("id")),
            thread_id=str(status["id"]),
            public={
                "event_key": event_key,
                "in_reply_to_id": str(status["id"]),
                "visibility": visibility,
            },
            # Account names are personal data: they go with the reply and are deleted after it.
            private={
                "asker": f"@{asker}" if asker else "",
                "mentions": " ".join(f"@{a}" for a in dict.fromkeys(addressed) if a),
            },
        ),
        event_key=event_key,
        author=author,
        via="mention",
    )
