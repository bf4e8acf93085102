"""Posting answers on Discord over REST only (worker processes have no gateway connection).

A correction goes into the thread on the message checked (when `create_threads` is on and the
channel allows threads): the thread already there (one started by an earlier answer or by
people: its id is the message's, so `GET /channels/{message id}` finds it) or, when there is
none, a new one; else it replies to the message (`message_reference`); a
message already in a thread is answered in that thread; a `/factcheck text:` request, which has
no message, gets a message in its channel. Then, best effort, the requester's private
"checking…" response is edited to say where the answer is (the interaction token lasts 15
minutes; an expired one never fails the reply). A private answer (a failure, a refusal) edits
that response while the token lives, else replies to the message.

Every channel message carries a `nonce` with `enforce_nonce`, so a send repeated after a lost
response returns Discord's first message instead of posting a second; every message allows no
mentions. discord.py's HTTP client honours 429 Retry-After (up to a minute; a longer wait ends
the attempt, so the job retries later) and retries 50x itself.

Failure policy: what surely posted nothing (403, 404, 400 on the message post, a 429 asking for
more than a minute, no connection to Discord, a failed log-in) raises `ReplyRejectedError` (a
later attempt may post); anything else (50x after discord.py's retries, a lost response)
propagates and leaves the reply pending, never repeated.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import Any

import aiohttp
import discord
from discord.http import Route

from bots.platforms.discord._http import RoutedHTTPClient
from bots.platforms.discord._render import DiscordReply, render
from bots.runtime.delivery.replies import ReplyRejectedError
from bots.runtime.platform import messages
from bots.runtime.platform.contract import Answer, Destination, Rendered
from bots.settings import DiscordSettings
from pipeline.util.clock import Clock
from pipeline.util.i18n import translator

log = logging.getLogger(__name__)
THREAD_EXISTS = 160004  # "A thread has already been created for this message"
THREAD_ARCHIVE_MINUTES = 1440
THREAD_TYPES = (10, 11)  # announcement and public threads: those a message can start
MAX_RATE_LIMIT_WAIT = 60.0  # a longer Retry-After ends the attempt; the job retries later
_NONE: dict[str, Any] = {"parse": []}  # allowed mentions: nobody


class DiscordSender:
    """The outbound half of the Discord adapter (`ReplySender`)."""

    platform = "discord"

    def __init__(self, settings: DiscordSettings, *, clock: Clock) -> None:
        self.settings = settings
        self.clock = clock
        self._http: RoutedHTTPClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._login = asyncio.Lock()

    def render(self, answer: Answer, destination: Destination) -> Rendered:
        """Return the Discord message for answer, within Discord's limits."""
        return render(answer, destination)

    async def send(self, destination: Destination, rendered: Rendered) -> str | None:
        """Post rendered where destination says; return the id of the message posted."""
        reply: DiscordReply = rendered.payload
        http = await self._client()
        if reply.private:
            posted = await self._edit_original(http, destination, reply.body())
            if posted is not None:
                return posted
        channel, reference = await self._place(http, destination, reply)
        body = reply.body() | {"nonce": reply.nonce, "enforce_nonce": True}
        if reference is not None:
            body["message_reference"] = reference
        try:
            message = await http.request(
                Route("POST", "/channels/{channel_id}/messages", channel_id=channel), json=body
            )
        except discord.RateLimited as exc:  # raised instead of a long wait: nothing was sent
            raise ReplyRejectedError(f"Discord asks to wait {exc.retry_after:.0f} s") from exc
        except aiohttp.ClientConnectorError as exc:  # no connection, so no request
            raise ReplyRejectedError(f"Discord could not be reached: {exc}") from exc
        except (discord.Forbidden, discord.NotFound) as exc:
            raise ReplyRejectedError(f"Discord refused the message: {exc}") from exc
        except discord.HTTPException as exc:
            if exc.status == 400:
                raise ReplyRejectedError(f"Discord refused the message: {exc}") from exc
            raise
        if not reply.private:
            t = translator(reply.language)
            if destination.message_id is None:
                pointer = t.gettext(messages.ANSWERED_HERE)
            elif channel == destination.channel_id:
                pointer = t.gettext(messages.ANSWERED_AS_REPLY)
            else:
                pointer = t.gettext(messages.ANSWERED_IN, channel=f"<#{channel}>")
            note = {"content": pointer, "allowed_mentions": _NONE}
            await self._edit_original(http, destination, note)
        return str(message["id"])

    async def rest(self, method: str, path: str, body: dict[str, Any], **ids: str) -> Any:
        """Send one REST request (path with `{ids}`); map what surely posted nothing as `send`.

        Raises ReplyRejectedError for a refusal (403, 404, 400, a long 429, no connection).
        """
        http = await self._client()
        try:
            return await http.request(Route(method, path, **ids), json=body)
        except discord.RateLimited as exc:
            raise ReplyRejectedError(f"Discord asks to wait {exc.retry_after:.0f} s") from exc
        except aiohttp.ClientConnectorError as exc:
            raise ReplyRejectedError(f"Discord could not be reached: {exc}") from exc
        except (discord.Forbidden, discord.NotFound) as exc:
            raise ReplyRejectedError(f"Discord refused the request: {exc}") from exc
        except discord.HTTPException as exc:
            if exc.status == 400:
                raise ReplyRejectedError(f"Discord refused the request: {exc}") from exc
            raise

    async def client(self) -> RoutedHTTPClient:
        """Return the logged-in REST client of the running loop (the monitor's sources read it)."""
        return await self._client()

    async def close(self) -> None:
        """Close the HTTP session."""
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def _client(self) -> RoutedHTTPClient:
        """Return the logged-in HTTP client of the running event loop (one session per loop)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a session belongs to the loop that opened it
            self._http, self._loop, self._login = None, loop, asyncio.Lock()
        async with self._login:
            if self._http is None:
                if self.settings.token is None:
                    raise ReplyRejectedError("FACTBOT_DISCORD__TOKEN is not set")
                http = RoutedHTTPClient(
                    loop,
                    api_base=self.settings.api_base,
                    gateway_url=self.settings.gateway_url,
                    max_ratelimit_timeout=MAX_RATE_LIMIT_WAIT,
                )
                try:
                    await http.static_login(self.settings.token.get_secret_value())
                except (discord.HTTPException, aiohttp.ClientConnectorError) as exc:
                    await http.close()
                    raise ReplyRejectedError(f"could not log in to Discord: {exc}") from exc
                self._http = http
            return self._http

    async def _place(
        self, http: RoutedHTTPClient, destination: Destination, reply: DiscordReply
    ) -> tuple[str, dict[str, Any] | None]:
        """Return the channel to post in and the message reference, starting a thread if due."""
        target = destination.message_id
        if destination.thread_id is not None:
            reference = None if target is None else _reference(destination, destination.thread_id)
            return destination.thread_id, reference
        if target is None:
            return destination.channel_id, None
        threads = self.settings.create_threads and destination.public.get("threads") == "1"
        if threads and not reply.private:
            if await self._thread_of(http, destination.channel_id, target):
                return target, None
            route = Route(
                "POST",
                "/channels/{channel_id}/messages/{message_id}/threads",
                channel_id=destination.channel_id,
                message_id=target,
            )
            payload = {"name": reply.thread_name, "auto_archive_duration": THREAD_ARCHIVE_MINUTES}
            try:
                thread = await http.request(route, json=payload)
                return str(thread["id"]), None
            except discord.HTTPException as exc:
                if exc.code == THREAD_EXISTS:  # started meanwhile (Discord answers 160004)
                    return target, None  # a thread started on a message has the message's id
                if exc.status not in (400, 403):
                    raise
                log.info(
                    "thread refused; replying to the message",
                    extra={"channel": destination.channel_id, "status": exc.status},
                )
        return destination.channel_id, _reference(destination, destination.channel_id)

    async def _thread_of(self, http: RoutedHTTPClient, channel_id: str, message_id: str) -> bool:
        """Return whether the message has a thread already (found by its id, the message's)."""
        try:
            found = await http.request(
                Route("GET", "/channels/{channel_id}", channel_id=message_id)
            )
        except discord.HTTPException as exc:  # none (10003), none to see, or no answer
            if exc.status != 404:  # starting one says what is there (160004 if one is)
                log.info("thread look-up failed", extra={"status": exc.status})
            return False
        return str(found.get("parent_id")) == channel_id and found.get("type") in THREAD_TYPES

    async def _edit_original(
        self, http: RoutedHTTPClient, destination: Destination, body: dict[str, Any]
    ) -> str | None:
        """Edit the interaction's private response; return its id, or None without a live token."""
        token = destination.private.get("interaction_token")
        app = destination.public.get("application_id")
        expires = destination.private.get("token_expires_at")
        if not token or not app or not expires:
            return None
        if self.clock.now() >= datetime.fromisoformat(expires):
            return None
        route = Route(
            "PATCH",
            "/webhooks/{webhook_id}/{webhook_token}/messages/@original",
            webhook_id=app,
            webhook_token=token,
        )
        try:
            message = await http.request(route, json=body)
        except discord.HTTPException as exc:  # an expired or revoked token: not the reply's fault
            log.info("interaction response not edited", extra={"status": exc.status})
            return None
        return str(message["id"])


def _reference(destination: Destination, channel: str) -> dict[str, Any]:
    return {
        "message_id": destination.message_id,
        "channel_id": channel,
        "guild_id": destination.workspace_id or None,
        "fail_if_not_exists": False,
    }
