"""Discord messages and interactions → `CheckRequest`: the only place that reads their fields.

The message checked becomes a `Post`: its content plus the text of its link previews (what a
reader of the channel sees), the URLs of both as `links`, and its image attachments as
`image_refs`. An attachment factbot cannot use (not an image, larger than the cap, or an image
Discord could not decode: it then reports no size) becomes a note said in the reply; the text
is still checked. The `Destination` keeps the ids the reply needs (guild, channel, thread,
message, application, the event key the message nonce is made from) in `public`, and the
interaction token, which lets factbot edit the requester's private "checking…" message for
15 minutes, in `private` (no token when the interaction expired before it was acknowledged:
there is no private message to edit).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import discord

from bots.runtime.platform.contract import Actor, CheckRequest, Destination, Note
from bots.runtime.platform.messages import attachment_note
from pipeline.records.domain import Post, new_id
from pipeline.util.text import URL_RE

PLATFORM = "discord"
TOKEN_LIFETIME = timedelta(minutes=14)  # Discord's is 15; keep a margin for the clock and the call
_THREADABLE = (discord.ChannelType.text, discord.ChannelType.news)
_PREVIEW_TYPES = ("link", "article", "video", "image", "gifv")


def actor(user: discord.abc.User, *, own_id: int | None) -> Actor:
    """Return the account as an `Actor`."""
    return Actor(
        platform=PLATFORM,
        user_id=str(user.id),
        is_bot=user.bot or user.system,
        is_self=own_id is not None and user.id == own_id,
        name=user.display_name,
    )


def post_from_message(
    message: discord.Message, *, max_image_bytes: int
) -> tuple[Post, tuple[Note, ...]]:
    """Return the post a message is, and the notes about attachments that could not be read."""
    previews = [e for e in message.embeds if e.type in _PREVIEW_TYPES]
    parts = [message.content]
    for embed in previews:
        parts += [embed.title or "", embed.description or ""]
    text = "\n".join(p for p in parts if p.strip())
    links = list(URL_RE.findall(text)) + [e.url for e in previews if e.url]
    images: list[str] = []
    notes: list[Note] = []
    for attachment in message.attachments:
        note = _unreadable(attachment, max_image_bytes=max_image_bytes)
        if note is None:
            images.append(attachment.url)
        else:
            notes.append(note)
    post = Post(
        id=new_id(),
        platform=PLATFORM,
        platform_id=str(message.id),
        text=text,
        url=message.jump_url,
        author=message.author.display_name,
        created_at=message.created_at,
        links=tuple(dict.fromkeys(links)),
        image_refs=tuple(images),
    )
    return post, tuple(notes)


def _unreadable(attachment: discord.Attachment, *, max_image_bytes: int) -> Note | None:
    """Return the note about an attachment factbot cannot read as an image, or None."""
    name = attachment.filename
    if not (attachment.content_type or "").startswith("image/"):
        return attachment_note("not an image", name)
    if attachment.size > max_image_bytes:
        size, limit = attachment.size / 1e6, max_image_bytes / 1e6
        return attachment_note("too large", name, size_mb=size, limit_mb=limit)
    if attachment.width is None or attachment.height is None:  # Discord could not decode it
        return attachment_note("damaged", name)
    return None


def destination_for(
    channel: discord.abc.MessageableChannel | discord.interactions.InteractionChannel | None,
    *,
    guild_id: int | None,
    channel_id: int,
    message_id: int | None,
    event_key: str,
    application_id: int | None,
    interaction: discord.Interaction | None = None,
    now: datetime | None = None,
    live: bool = True,
) -> Destination:
    """Return where the answer to an event in channel goes."""
    thread_id: str | None = None
    parent = str(channel_id)
    threads = False
    if isinstance(channel, discord.Thread):
        thread_id, parent = str(channel.id), str(channel.parent_id)
    elif channel is not None:
        threads = getattr(channel, "type", None) in _THREADABLE
    public = {"event_key": event_key, "threads": "1" if threads else "0"}
    if application_id is not None:
        public["application_id"] = str(application_id)
    private: dict[str, str] = {}
    if interaction is not None and now is not None:
        public["threads"] = "1" if threads and _may_thread(interaction) else "0"
    if interaction is not None and now is not None and live:
        private = {
            "interaction_token": interaction.token,
            "token_expires_at": (now + TOKEN_LIFETIME).isoformat(),
        }
    return Destination(
        platform=PLATFORM,
        workspace_id=str(guild_id or ""),
        channel_id=parent,
        message_id=None if message_id is None else str(message_id),
        thread_id=thread_id,
        public=public,
        private=private,
    )


def _may_thread(interaction: discord.Interaction) -> bool:
    perms = interaction.app_permissions
    return perms.create_public_threads and perms.send_messages_in_threads


def request_for_message(
    interaction: discord.Interaction,
    target: discord.Message,
    *,
    max_image_bytes: int,
    now: datetime,
    live: bool = True,
) -> CheckRequest:
    """Return the request of a context-menu check of target (live: its token still answers)."""
    post, notes = post_from_message(target, max_image_bytes=max_image_bytes)
    own = _own_id(interaction)
    return CheckRequest(
        post=post,
        requester=actor(interaction.user, own_id=own),
        destination=_interaction_destination(
            interaction, target.channel, target.channel.id, target.id, now=now, live=live
        ),
        event_key=str(interaction.id),
        author=actor(target.author, own_id=own),
        via="menu",
        notes=notes,
    )


def request_for_text(
    interaction: discord.Interaction,
    text: str,
    *,
    links: Sequence[str] = (),
    now: datetime,
    live: bool = True,
) -> CheckRequest:
    """Return the request of `/factcheck text:` or `/factcheck link:` (no message to answer)."""
    key = str(interaction.id)
    found = list(URL_RE.findall(text)) + list(links)
    post = Post(
        id=new_id(),
        platform=PLATFORM,
        platform_id=key,
        text=text,
        author=None,
        created_at=None,  # typed by the requester: no publication time of its own
        links=tuple(dict.fromkeys(found)),
    )
    channel_id = interaction.channel_id or 0
    return CheckRequest(
        post=post,
        requester=actor(interaction.user, own_id=_own_id(interaction)),
        destination=_interaction_destination(
            interaction, interaction.channel, channel_id, None, now=now, live=live
        ),
        event_key=key,
        via="command",
    )


def _own_id(interaction: discord.Interaction) -> int | None:
    own = interaction.client.user
    return own.id if own else None


def _interaction_destination(
    interaction: discord.Interaction,
    channel: discord.abc.MessageableChannel | discord.interactions.InteractionChannel | None,
    channel_id: int,
    message_id: int | None,
    *,
    now: datetime,
    live: bool,
) -> Destination:
    return destination_for(
        channel,
        guild_id=interaction.guild_id,
        channel_id=channel_id,
        message_id=message_id,
        event_key=str(interaction.id),
        application_id=interaction.application_id,
        interaction=interaction,
        now=now,
        live=live,
    )


def request_for_mention(
    mention: discord.Message,
    target: discord.Message,
    *,
    own_id: int,
    application_id: int | None,
    max_image_bytes: int,
) -> CheckRequest:
    """Return the request of a mention of factbot in a reply to target."""
    post, notes = post_from_message(target, max_image_bytes=max_image_bytes)
    key = str(mention.id)
    return CheckRequest(
        post=post,
        requester=actor(mention.author, own_id=own_id),
        destination=destination_for(
            target.channel,
            guild_id=target.guild.id if target.guild else None,
            channel_id=target.channel.id,
            message_id=target.id,
            event_key=key,
            application_id=application_id,
        ),
        event_key=key,
        author=actor(target.author, own_id=own_id),
        via="mention",
        notes=notes,
    )
