"""Watched Discord channels as proactive-monitor sources (REST channel messages, polled).

Each channel id in `FACTBOT_MONITOR__DISCORD_CHANNELS` is one `CandidateSource` named
`discord:channel:<id>`. A fetch reads `GET /channels/{id}/messages` over the sender's logged-in
REST client: with a cursor (a message id), the messages `after` it in pages of up to 100, oldest
first, at most `limit`; without one, the newest `limit` (at most 100). The cursor returned is
the newest id taken. Reading message text needs the message-content intent (privileged; enable
it in the Developer Portal) and the Read Message History permission.

What the monitor scores a Discord message on: its content plus link-preview titles, the
guild's approximate member count as reach, the reactions' total as engagement, and whether it
mentions factbot. Messages by bots, webhooks and the system are dropped here.

Failure policy: a 429 asking for a longer wait than the sender allows (`discord.RateLimited`),
403/404 and other HTTP errors, and connection failures raise `SourceUnavailableError`; the
scan is skipped, the cursor kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import aiohttp
import discord
from discord.http import Route

from bots.platforms.discord._sender import DiscordSender
from bots.runtime.delivery.replies import ReplyRejectedError
from bots.runtime.monitor.candidates import Batch, Candidate, SourceUnavailableError
from bots.runtime.platform.contract import Actor, Destination
from pipeline.records.domain import Post, new_id
from pipeline.util.text import URL_RE

PLATFORM = "discord"
PAGE = 100  # Discord's largest page of channel messages
MAX_PAGES = 10
_THREADABLE = (0, 5)  # text and announcement channels: a reply may start a thread
_PREVIEW_TYPES = ("link", "article", "video", "image", "gifv")


class DiscordChannelSource:
    """One watched Discord channel (`CandidateSource`)."""

    def __init__(self, sender: DiscordSender, channel_id: str) -> None:
        self.sender = sender
        self.channel_id = channel_id
        self.name = f"discord:channel:{channel_id}"
        self._channel: Mapping[str, Any] | None = None
        self._me: str | None = None

    async def fetch(self, cursor: str | None, limit: int) -> Batch:
        """Return up to limit messages newer than cursor (module doc), and the next cursor."""
        try:
            return await self._fetch(cursor, limit)
        except discord.RateLimited as exc:
            raise SourceUnavailableError(
                f"Discord asks to wait {exc.retry_after:.0f} s", retry_after=exc.retry_after
            ) from exc
        except discord.HTTPException as exc:
            raise SourceUnavailableError(
                f"Discord refused to list channel {self.channel_id}: {exc.status} {exc.text}"
            ) from exc
        except (ReplyRejectedError, aiohttp.ClientError, TimeoutError) as exc:
            raise SourceUnavailableError(f"Discord could not be reached: {exc}") from exc

    async def _fetch(self, cursor: str | None, limit: int) -> Batch:
        http = await self.sender.client()
        if self._me is None:
            self._me = str((await http.request(Route("GET", "/users/@me")))["id"])
        if self._channel is None:
            self._channel = dict(await http.get_channel(int(self.channel_id)))
        guild_id = str(self._channel.get("guild_id") or "")
        members = 0
        if guild_id:
            guild: Mapping[str, Any] = await http.get_guild(int(guild_id), with_counts=True)
            members = int(guild.get("approximate_member_count") or 0)
        me = self._me
        found: list[Mapping[str, Any]] = []
        if cursor is None:
            found = list(await http.logs_from(int(self.channel_id), min(limit, PAGE)))
        else:
            after = int(cursor)
            for _ in range(MAX_PAGES):
                page = list(
                    await http.logs_from(
                        int(self.channel_id), min(PAGE, limit - len(found)), after=after
                    )
                )
                found.extend(page)
                if len(page) < PAGE or len(found) >= limit:
                    break
                after = max(int(m["id"]) for m in page)
        messages = sorted({str(m["id"]): m for m in found}.values(), key=lambda m: int(m["id"]))
        messages = messages[:limit] if cursor is not None else messages[-limit:]
        candidates = [
            self._candidate(m, guild_id, me, members)
            for m in messages
            if not _automated(m) and str(m["author"]["id"]) != me
        ]
        return Batch(candidates, str(messages[-1]["id"]) if messages else None)

    def _candidate(
        self, message: Mapping[str, Any], guild_id: str, me: str, members: int
    ) -> Candidate:
        embeds = [e for e in message.get("embeds") or [] if e.get("type") in _PREVIEW_TYPES]
        parts = [str(message.get("content") or "")]
        for embed in embeds:
            parts += [str(embed.get("title") or ""), str(embed.get("description") or "")]
        text = "\n".join(p for p in parts if p.strip())
        links = list(URL_RE.findall(text)) + [str(e["url"]) for e in embeds if e.get("url")]
        mid = str(message["id"])
        post = Post(
            id=new_id(),
            platform=PLATFORM,
            platform_id=mid,
            text=text,
            url=f"https://discord.com/channels/{guild_id or '@me'}/{self.channel_id}/{mid}",
            created_at=_time(message.get("timestamp")),
            links=tuple(dict.fromkeys(links)),
        )
        channel = self._channel or {}
        threads = channel.get("type") in _THREADABLE
        public = {"event_key": f"monitor:{mid}", "threads": "1" if threads else "0"}
        author = message["author"]
        mentioned = any(str(u.get("id")) == me for u in message.get("mentions") or [])
        return Candidate(
            source=self.name,
            post=post,
            author=Actor(PLATFORM, str(author["id"]), is_bot=bool(author.get("bot"))),
            destination=Destination(
                platform=PLATFORM,
                workspace_id=guild_id,
                channel_id=self.channel_id,
                message_id=mid,
                public=public,
            ),
            thread_key=f"{self.channel_id}:{mid}",
            mentions_bot=mentioned,
            followers=members,
            engagement=sum(int(r.get("count") or 0) for r in message.get("reactions") or []),
        )


def _automated(message: Mapping[str, Any]) -> bool:
    author = message.get("author") or {}
    return bool(author.get("bot") or author.get("system") or message.get("webhook_id"))


def _time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None
