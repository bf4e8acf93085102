"""Watched Slack channels as proactive-monitor sources (`conversations.history`, polled).

Each channel in `FACTBOT_MONITOR__SLACK_CHANNELS` is one `CandidateSource` named
`slack:channel:<channel>` (or `slack:channel:<team>:<channel>` with OAuth installs). A fetch
reads the channel's top-level messages newer than the cursor (a message `ts`, exclusive) in
pages of up to 200 (`has_more` + `response_metadata.next_cursor`), oldest first, at most
`limit` of them; the cursor returned is the newest `ts` taken. The first fetch (no cursor)
takes the newest `limit` messages, without reading the channel's whole history. A backlog
longer than `MAX_PAGES` pages is read from its newest pages (Slack lists newest first).

What the monitor scores a Slack message on: its text (markup decoded), the channel's member
count as reach (who sees it), reactions plus thread replies as engagement, and whether it
mentions factbot. Posts by bots (`bot_id`, `subtype: bot_message`) and channel events (joins,
topic changes) are dropped here.

Failure policy: a rate limit (429 after the client's Retry-After retries), a refused call
(`not_in_channel`, `channel_not_found`, `invalid_auth`) and a connection failure raise
`SourceUnavailableError` naming the cause: the scan is skipped, the cursor kept.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError

from bots.platforms.slack._events import Target, actor, destination, message_post
from bots.platforms.slack._sender import SlackSender, web_client
from bots.runtime.monitor.candidates import Batch, Candidate, SourceUnavailableError

PAGE = 200  # conversations.history's recommended page size
MAX_PAGES = 10
_KEPT_SUBTYPES = (None, "file_share", "thread_broadcast", "me_message")


class SlackChannelSource:
    """One watched Slack channel (`CandidateSource`)."""

    def __init__(self, sender: SlackSender, channel: str, *, team_id: str | None = None) -> None:
        self.sender = sender
        self.channel = channel
        self.team_id = team_id
        self.name = f"slack:channel:{team_id}:{channel}" if team_id else f"slack:channel:{channel}"
        self._identity: Mapping[str, Any] | None = None

    async def fetch(self, cursor: str | None, limit: int) -> Batch:
        """Return up to limit messages newer than cursor (module doc), and the next cursor."""
        try:
            return await self._fetch(cursor, limit)
        except SlackApiError as exc:
            error = str(exc.response.get("error") or exc.response.status_code)
            retry = exc.response.headers.get("Retry-After") if exc.response.headers else None
            raise SourceUnavailableError(
                f"Slack refused to list {self.channel}: {error}",
                retry_after=float(retry) if retry else None,
            ) from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise SourceUnavailableError(f"Slack could not be reached: {exc!r}") from exc

    async def _fetch(self, cursor: str | None, limit: int) -> Batch:
        token = await self.sender.token(self.team_id or "")
        client = web_client(self.sender.settings, token)
        if self._identity is None:
            self._identity = dict((await client.auth_test()).data)  # type: ignore[arg-type]
        team_id = self.team_id or str(self._identity.get("team_id") or "")
        bot_user = str(self._identity.get("user_id") or "") or None
        domain = _domain(str(self._identity.get("url") or ""))
        info = await client.conversations_info(channel=self.channel, include_num_members=True)
        members = int((info.get("channel") or {}).get("num_members") or 0)
        messages = await self._history(client, cursor, limit)
        taken = messages[-limit:] if cursor is None else messages[:limit]
        candidates = [
            self._candidate(m, team_id, bot_user, domain, members)
            for m in taken
            if m.get("subtype") in _KEPT_SUBTYPES and not m.get("bot_id")
        ]
        next_cursor = str(taken[-1]["ts"]) if taken else None
        return Batch(candidates, next_cursor)

    async def _history(self, client: Any, cursor: str | None, limit: int) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        page_cursor: str | None = None
        for _ in range(MAX_PAGES):
            params: dict[str, Any] = {"channel": self.channel, "limit": min(PAGE, max(limit, 1))}
            if cursor is not None:
                params["oldest"] = cursor
            if page_cursor:
                params["cursor"] = page_cursor
            response = await client.conversations_history(**params)
            found.extend(m for m in response.get("messages") or [] if m.get("ts"))
            page_cursor = (response.get("response_metadata") or {}).get("next_cursor")
            if not response.get("has_more") or not page_cursor:
                break
            if cursor is None and len(found) >= limit:
                break  # the first read takes only the newest messages
        newer = [m for m in found if cursor is None or float(m["ts"]) > float(cursor)]
        return sorted({m["ts"]: m for m in newer}.values(), key=lambda m: float(m["ts"]))

    def _candidate(
        self,
        message: Mapping[str, Any],
        team_id: str,
        bot_user: str | None,
        domain: str | None,
        members: int,
    ) -> Candidate:
        ts = str(message["ts"])
        target = Target(team_id, self.channel, message, domain)
        post, _ = message_post(target)
        where = destination(target, requester="", event_key=f"monitor:{ts}")
        reactions = sum(int(r.get("count") or 0) for r in message.get("reactions") or [])
        text = str(message.get("text") or "")
        return Candidate(
            source=self.name,
            post=post,
            author=actor(message.get("user"), bot_user_id=bot_user),
            destination=dataclasses.replace(where, private={}),
            thread_key=f"{team_id}:{self.channel}:{message.get('thread_ts') or ts}",
            mentions_bot=bool(bot_user) and f"<@{bot_user}" in text,
            followers=members,
            engagement=reactions + int(message.get("reply_count") or 0),
            topics=(),
            seen_at=None,
        )


def _domain(url: str) -> str | None:
    """Return the workspace subdomain of auth.test's url (https://acme.slack.com/)."""
    host = url.removeprefix("https://").split("/", 1)[0]
    return host.removesuffix(".slack.com") if host.endswith(".slack.com") else None
