"""Slack events, slash commands and shortcuts → `CheckRequest`s (pure translation).

Slack sends message text in its own markup: `<https://x|label>` links, `<@U…>` user and
`<#C…|name>` channel mentions, `<!here>` specials and `&amp;`/`&lt;`/`&gt;` escapes. The
pipeline checks what a reader sees, so the markup is decoded first; the URLs go to `links`.

A post's id on Slack is `<team>:<channel>:<ts>`. Image files become `image_refs` (their
`url_private`): downloading them needs the workspace's bot token (`Authorization: Bearer`),
which the Destination records as `public["image_auth"] = "slack-bot-token"` for the image
stage. Files that are not images, too large or unreadable become a note in the reply; the
text is still checked.
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from bots.runtime.platform.contract import Actor, CheckRequest, Destination, Note
from bots.runtime.platform.messages import attachment_note
from pipeline.records.domain import Post, new_id
from pipeline.util.text import URL_RE

PLATFORM = "slack"
MAX_IMAGE_BYTES = 20_000_000  # larger files are not downloaded for the image stage
_MARKUP_RE = re.compile(r"<([^<>]*)>")
_LINK_RE = re.compile(
    r"^https://(?P<domain>[\w.-]+)\.slack\.com/archives/(?P<channel>[CGD][A-Z0-9]+)/"
    r"p(?P<sec>\d{10})(?P<frac>\d{6})(?:\?\S*)?$"
)

Via = Literal["command", "menu", "mention", "shortcut"]


@dataclass(frozen=True)
class Target:
    """The Slack message to check, and where it lives."""

    team_id: str
    channel_id: str
    message: Mapping[str, Any]
    domain: str | None = None  # the workspace's subdomain, for the permalink


def decode_markup(text: str) -> str:
    """Return Slack-formatted text as a reader sees it (links, mentions, escapes decoded)."""

    def one(match: re.Match[str]) -> str:
        inner = match.group(1)
        target, _, label = inner.partition("|")
        if target.startswith("@"):
            return "@" + (label or target[1:])
        if target.startswith("#"):
            return "#" + (label or target[1:])
        if target.startswith("!"):
            name = target[1:].split("^", 1)[0]
            return label or "@" + name
        if label and label != target and label != target.removeprefix("mailto:"):
            return f"{label} ({target})"
        return target.removeprefix("mailto:")

    return html.unescape(_MARKUP_RE.sub(one, text))


def strip_mention(text: str, user_id: str | None) -> str:
    """Return raw Slack text without the mentions of user_id (factbot's own user)."""
    if not user_id:
        return text
    return re.sub(rf"<@{re.escape(user_id)}(?:\|[^>]*)?>", " ", text).strip()


def is_bot_message(message: Mapping[str, Any]) -> bool:
    """Return whether a message was written by a bot or an integration."""
    return bool(message.get("bot_id")) or message.get("subtype") == "bot_message"


def parse_message_link(text: str) -> tuple[str, str] | None:
    """Return (channel, ts) of a Slack message permalink, or None when text is not one."""
    match = _LINK_RE.match(text.strip().strip("<>").split("|", 1)[0])
    if match is None:
        return None
    return match["channel"], f"{match['sec']}.{match['frac']}"


def permalink(domain: str | None, channel: str, ts: str) -> str | None:
    """Return a message's permalink when the workspace's domain is known."""
    if not domain:
        return None
    return f"https://{domain}.slack.com/archives/{channel}/p{ts.replace('.', '')}"


def ts_time(ts: str) -> datetime | None:
    """Return the time of a Slack timestamp, or None when it is not one."""
    try:
        return datetime.fromtimestamp(float(ts), UTC)
    except (TypeError, ValueError, OverflowError):
        return None


def files_of(message: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[Note, ...]]:
    """Return (image URLs, notes) for the files attached to a message."""
    images: list[str] = []
    notes: list[Note] = []
    for file in message.get("files") or ():
        if not isinstance(file, Mapping):
            continue
        # A name that reads as a link ("notes.md") is not shown (`attachment_note`).
        name = str(file.get("name") or file.get("title") or "")
        mimetype = str(file.get("mimetype") or "")
        url = file.get("url_private")
        size = file.get("size")
        hidden = file.get("file_access") in ("check_file_info", "access_denied")
        if file.get("mode") in ("tombstone", "hidden_by_limit") or hidden:
            notes.append(attachment_note("unreadable", name))
        elif not mimetype.startswith("image/"):
            notes.append(attachment_note("not an image", name))
        elif not isinstance(url, str) or not url.startswith("https://"):
            notes.append(attachment_note("unreadable", name))
        elif isinstance(size, int) and size > MAX_IMAGE_BYTES:
            notes.append(
                attachment_note(
                    "too large", name, size_mb=size / 1e6, limit_mb=MAX_IMAGE_BYTES / 1e6
                )
            )
        elif not isinstance(size, int) or size <= 0:
            notes.append(attachment_note("unreadable", name))
        else:
            images.append(url)
    return tuple(images), tuple(notes)


def message_post(target: Target, *, text: str | None = None) -> tuple[Post, tuple[Note, ...]]:
    """Return the Post for a Slack message (text overrides its text) and notes about files."""
    message = target.message
    ts = str(message.get("ts") or "")
    decoded = decode_markup(str(message.get("text") or "") if text is None else text)
    images, notes = files_of(message)
    post = Post(
        id=new_id(),
        platform=PLATFORM,
        platform_id=f"{target.team_id}:{target.channel_id}:{ts}",
        text=decoded,
        url=permalink(target.domain, target.channel_id, ts),
        author=None,  # a raw user id is personal data: it lives only in the request's Actor
        created_at=ts_time(ts),
        links=tuple(dict.fromkeys(URL_RE.findall(decoded))),
        image_refs=images,
    )
    return post, notes


def actor(user_id: str | None, *, bot_user_id: str | None, is_bot: bool = False) -> Actor:
    """Return the Actor of a Slack user id (factbot's own user is marked)."""
    uid = user_id or ""
    return Actor(
        PLATFORM, uid, is_bot=is_bot or uid == bot_user_id, is_self=bool(uid) and uid == bot_user_id
    )


def destination(
    target: Target,
    *,
    requester: str,
    event_key: str,
    response_url: str | None = None,
    public: bool = True,
) -> Destination:
    """Return where the answer to a check of target goes: the message's thread."""
    message = target.message
    ts = message.get("ts")
    routing = {"event_key": event_key}
    if message.get("files"):
        routing["image_auth"] = "slack-bot-token"  # url_private needs the workspace's bot token
    private = {"user_id": requester}
    if response_url:
        private["response_url"] = response_url
    return Destination(
        platform=PLATFORM,
        workspace_id=target.team_id,
        channel_id=target.channel_id,
        message_id=str(ts) if ts and public else None,
        thread_id=str(message.get("thread_ts") or ts) if ts and public else None,
        public=routing,
        private=private,
    )


def check_request(
    target: Target,
    *,
    requester: str,
    bot_user_id: str | None,
    event_key: str,
    via: Via,
    text: str | None = None,
    response_url: str | None = None,
    extra_notes: Sequence[Note] = (),
) -> CheckRequest:
    """Return the request to check target's message, asked by requester."""
    post, notes = message_post(target, text=text)
    message = target.message
    author = None
    if message.get("user") or message.get("bot_id"):
        author = actor(
            str(message.get("user") or message.get("bot_id")),
            bot_user_id=bot_user_id,
            is_bot=is_bot_message(message),
        )
    return CheckRequest(
        post=post,
        requester=actor(requester, bot_user_id=bot_user_id),
        destination=destination(
            target, requester=requester, event_key=event_key, response_url=response_url
        ),
        event_key=event_key,
        author=author,
        via=via,
        notes=(*extra_notes, *notes),
    )


def mention_request(
    body: Mapping[str, Any], *, bot_user_id: str | None, parent: Mapping[str, Any] | None
) -> CheckRequest:
    """Return the request an `app_mention` event makes: check the thread's parent, else the
    mention's own text without the mention."""
    event = body["event"]
    team = str(body.get("team_id") or event.get("team") or "")
    channel = str(event["channel"])
    if parent is not None:
        # Answer in the mention's thread; check the parent message.
        target = Target(team, channel, {**parent, "thread_ts": event.get("thread_ts")})
        text = None
    else:
        target = Target(team, channel, event)
        text = strip_mention(str(event.get("text") or ""), bot_user_id)
    request = check_request(
        target,
        requester=str(event.get("user") or ""),
        bot_user_id=bot_user_id,
        event_key=str(body.get("event_id") or f"{channel}:{event.get('ts')}"),
        via="mention",
        text=text,
    )
    if not event.get("ts"):
        return request
    # The mention itself gets the acknowledgement (:eyes:, then the verdict's emoji).
    dest = request.destination
    marked = dataclasses.replace(dest, public={**dest.public, "ack_ts": str(event["ts"])})
    return dataclasses.replace(request, destination=marked)


def shortcut_request(payload: Mapping[str, Any], *, bot_user_id: str | None) -> CheckRequest:
    """Return the request the message shortcut "Fact-check this message" makes."""
    team = payload.get("team") or {}
    channel = str((payload.get("channel") or {}).get("id") or "")
    target = Target(str(team.get("id") or ""), channel, payload["message"], team.get("domain"))
    return check_request(
        target,
        requester=str((payload.get("user") or {}).get("id") or ""),
        bot_user_id=bot_user_id,
        event_key=str(payload.get("trigger_id") or f"{channel}:{payload['message'].get('ts')}"),
        via="shortcut",
        response_url=payload.get("response_url"),
    )


def command_text_request(
    command: Mapping[str, Any], text: str, *, bot_user_id: str | None
) -> CheckRequest:
    """Return the request `/factcheck <text>` makes: a new post, answered in the channel."""
    team, channel = str(command.get("team_id") or ""), str(command.get("channel_id") or "")
    requester = str(command.get("user_id") or "")
    key = str(command.get("trigger_id") or new_id())
    target = Target(team, channel, {"ts": "", "text": text}, command.get("team_domain"))
    post, _ = message_post(target)
    post = Post(
        id=post.id,
        platform=PLATFORM,
        platform_id=f"{team}:{channel}:command:{key}",
        text=post.text,
        links=post.links,
    )
    return CheckRequest(
        post=post,
        requester=actor(requester, bot_user_id=bot_user_id),
        destination=destination(
            target, requester=requester, event_key=key, response_url=command.get("response_url")
        ),
        event_key=key,
        author=actor(requester, bot_user_id=bot_user_id),
        via="command",
    )


def command_link_request(
    command: Mapping[str, Any], message: Mapping[str, Any], channel: str, *, bot_user_id: str | None
) -> CheckRequest:
    """Return the request `/factcheck <link to a Slack message>` makes: check that message."""
    team = str(command.get("team_id") or "")
    target = Target(team, channel, message, command.get("team_domain"))
    return check_request(
        target,
        requester=str(command.get("user_id") or ""),
        bot_user_id=bot_user_id,
        event_key=str(command.get("trigger_id") or new_id()),
        via="command",
        response_url=command.get("response_url"),
    )


Command = tuple[Literal["check", "optout", "optin", "help"], str]


def parse_command(text: str) -> Command:
    """Return what `/factcheck` text asks: ("check", text), ("optout"|"optin", "user"|
    "channel"), or ("help", the command whose scope was wrong, else "")."""
    words = text.split()
    if not words or words[0].lower() == "help":
        return ("help", "")
    head = words[0].lower()
    if head in ("optout", "optin"):
        scope = {"me": "user", "channel": "channel"}.get(words[1].lower() if len(words) > 1 else "")
        if scope is None or len(words) > 2:
            return ("help", head)
        return (head, scope)  # type: ignore[return-value]
    return ("check", text.strip())
