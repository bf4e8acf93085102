"""Posting answers to Slack (worker processes): the thread reply, or a private message.

A public answer is `chat.postMessage` in the checked message's thread (`thread_ts`), Block Kit
plus the text fallback, links and media not unfurled, with message metadata naming the request
(`factbot_reply` with the reply key), so `find_sent` can tell whether a send that lost its
connection did post: the runtime then settles the reply instead of posting it twice. A
private answer goes to the requester only: through the interaction's `response_url` while it
is valid, else `chat.postEphemeral`.

The token is the single-workspace bot token, or the workspace's from the installation store.
The client retries a 429 after its Retry-After (`AsyncRateLimitErrorRetryHandler`) and
nothing else: a connection lost after the request left might have posted, and a duplicate
correction is worse than a late one.

Failure policy (what `send_once` needs to know): Slack's `ok: false` answers (`not_in_channel`,
`channel_not_found`, `is_archived`, `msg_too_long`, `invalid_blocks`, `ratelimited` after the
retries, …), a refused response URL and a connection that never opened are "surely not
posted": `ReplyRejectedError`. A timeout or a connection lost mid-request propagates as is.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bots.platforms.slack import _render
from bots.runtime.delivery.replies import ReplyRejectedError
from bots.runtime.platform.contract import Answer, Destination, Rendered
from bots.settings import SlackSettings
from pipeline.records.domain import Label

log = logging.getLogger(__name__)
TokenLookup = Callable[[str], Awaitable[str | None]]
METADATA_TYPE = "factbot_reply"  # the event_type of the metadata every public reply carries
ACK_REACTION = "eyes"  # on the mention while its check runs (bots.runtime.delivery.acks)
VERDICT_REACTIONS = {  # what replaces it once the answer is posted
    Label.ACCURATE: "white_check_mark",
    Label.PARTLY_ACCURATE: "large_yellow_circle",
    Label.MISLEADING: "warning",
    Label.FALSE: "x",
    Label.UNVERIFIABLE: "grey_question",
}


def web_client(settings: SlackSettings, token: str | None = None) -> AsyncWebClient:
    """Return a Web API client at settings' base URL that honours Retry-After on 429."""
    return AsyncWebClient(
        token=token,
        base_url=settings.api_base,
        retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=2)],
    )


class SlackSender:
    """Render answers as Slack messages and post them."""

    platform = "slack"

    def __init__(self, settings: SlackSettings, *, installed: TokenLookup | None = None) -> None:
        self.settings = settings
        self.installed = installed

    def render(self, answer: Answer, destination: Destination) -> Rendered:
        """Return the Slack message for answer, within Slack's limits."""
        return _render.render(answer, destination)

    async def token(self, team_id: str) -> str:
        """Return the bot token for a workspace; raise ReplyRejectedError when there is none."""
        if self.installed is not None:
            found = await self.installed(team_id)
            if found:
                return found
        if self.settings.bot_token is not None:
            return self.settings.bot_token.get_secret_value()
        raise ReplyRejectedError(f"factbot is not installed in Slack workspace {team_id}")

    async def send(self, destination: Destination, rendered: Rendered) -> str | None:
        """Post rendered where destination says; return the ts of the message posted."""
        payload: dict[str, Any] = rendered.payload
        if payload.get("private"):
            return await self._private(destination, payload)
        client = web_client(self.settings, await self.token(destination.workspace_id))
        response = await _call(
            client.chat_postMessage(
                channel=destination.channel_id,
                thread_ts=destination.thread_id,
                text=payload["text"],
                blocks=payload["blocks"],
                unfurl_links=False,
                unfurl_media=False,
                metadata={"event_type": METADATA_TYPE, "event_payload": {"key": _key(destination)}},
            )
        )
        return str(response.get("ts") or "") or None

    async def acknowledge(self, destination: Destination) -> None:
        """Add :eyes: to the mention that asked (only mentions carry `ack_ts`)."""
        ts = destination.public.get("ack_ts")
        if ts:
            await self._react("reactions_add", destination, ts, ACK_REACTION, "already_reacted")

    async def settle_ack(self, destination: Destination, answer: Answer | None) -> None:
        """Replace :eyes: by the verdict's emoji (a correction), or take it off (None)."""
        ts = destination.public.get("ack_ts")
        if not ts:
            return
        await self._react("reactions_remove", destination, ts, ACK_REACTION, "no_reaction")
        label = answer.correction.label if answer and answer.correction else None
        if label is not None:
            name = VERDICT_REACTIONS[label]
            await self._react("reactions_add", destination, ts, name, "already_reacted")

    async def _react(
        self, method: str, destination: Destination, ts: str, name: str, done: str
    ) -> None:
        client = web_client(self.settings, await self.token(destination.workspace_id))
        try:
            await getattr(client, method)(channel=destination.channel_id, timestamp=ts, name=name)
        except SlackApiError as exc:
            if exc.response.get("error") != done:  # already so: the call is idempotent
                raise

    async def find_sent(self, destination: Destination) -> str | None:
        """Return the ts of the public reply carrying destination's reply key, or None.

        Asked when a worker died (or lost the connection) mid-send: the thread (or, for a
        reply outside a thread, the channel's latest messages) is read with message metadata.
        A private answer cannot be looked up (ephemeral messages are not stored): None, so it
        is sent again, to the requester only.
        """
        key = _key(destination)
        client = web_client(self.settings, await self.token(destination.workspace_id))
        if destination.thread_id:
            found = await client.conversations_replies(
                channel=destination.channel_id,
                ts=destination.thread_id,
                include_all_metadata=True,
                limit=200,
            )
        else:
            found = await client.conversations_history(
                channel=destination.channel_id, include_all_metadata=True, limit=100
            )
        for message in found.get("messages") or []:
            metadata = message.get("metadata") or {}
            payload = metadata.get("event_payload") or {}
            if metadata.get("event_type") == METADATA_TYPE and payload.get("key") == key:
                return str(message["ts"])
        return None

    async def _private(self, destination: Destination, payload: dict[str, Any]) -> str | None:
        url = destination.private.get("response_url")
        if url:
            try:
                return await self._respond(url, payload)
            except ReplyRejectedError:
                if not destination.private.get("user_id"):
                    raise
                log.info("response_url refused; sending an ephemeral message instead")
        user = destination.private.get("user_id")
        if not user:
            raise ReplyRejectedError("a private answer needs the requester's user id")
        client = web_client(self.settings, await self.token(destination.workspace_id))
        response = await _call(
            client.chat_postEphemeral(
                channel=destination.channel_id,
                user=user,
                thread_ts=destination.thread_id,
                text=payload["text"],
                blocks=payload["blocks"],
            )
        )
        return str(response.get("message_ts") or "") or None

    async def _respond(self, url: str, payload: dict[str, Any]) -> str | None:
        hook = AsyncWebhookClient(url, retry_handlers=[AsyncRateLimitErrorRetryHandler()])
        try:
            response = await hook.send(
                text=payload["text"],
                blocks=payload["blocks"],
                response_type="ephemeral",
                replace_original=False,
            )
        except aiohttp.ClientConnectorError as exc:
            raise ReplyRejectedError(f"could not connect to Slack: {exc}") from exc
        if response.status_code != 200:
            raise ReplyRejectedError(
                f"response_url refused: {response.status_code} {response.body}"
            )
        return None


def _key(destination: Destination) -> str:
    """Return the key naming this reply on Slack (the runtime's reply key, else the event's)."""
    public = destination.public
    return public.get("reply_key") or public.get("event_key") or destination.message_id or ""


async def _call(request: Awaitable[Any]) -> Any:
    """Await a Web API call, mapping what surely did not post to ReplyRejectedError."""
    try:
        return await request
    except SlackApiError as exc:
        status = exc.response.status_code
        error = exc.response.get("error") if isinstance(exc.response.data, dict) else None
        if status < 500:
            raise ReplyRejectedError(f"Slack refused the message: {error or status}") from exc
        raise
    except aiohttp.ClientConnectorError as exc:  # the connection never opened
        raise ReplyRejectedError(f"could not connect to Slack: {exc}") from exc
