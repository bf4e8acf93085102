"""The Discord adapter (discord.py): a gateway listener for commands and a REST-only sender.

`setup(context)` returns the adapter; `bots.runtime.platform.contract.load_adapters` calls it when
`FACTBOT_DISCORD__TOKEN` is set. Only this package imports discord.py. The listener
(`listen`) turns interactions and mentions into `CheckRequest`s for the service; the sender
(`sender()`), used by workers, renders answers as embeds and posts them; watched channels
are the proactive monitor's sources (`candidate_sources()`, `_sources`). See
docs/platforms/discord.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from bots.platforms.discord._bot import FactbotClient
from bots.platforms.discord._http import route_interactions
from bots.platforms.discord._sender import DiscordSender
from bots.platforms.discord._sources import DiscordChannelSource
from bots.runtime.monitor.candidates import CandidateSource
from bots.runtime.platform.contract import PlatformContext
from pipeline.errors import ConfigError

log = logging.getLogger(__name__)


class DiscordAdapter:
    """The Discord platform: its sender, its gateway listener (no HTTP routes)."""

    name = "discord"

    def __init__(self, context: PlatformContext) -> None:
        self.context = context
        self.settings = context.settings.discord
        self.client: FactbotClient | None = None  # while listening
        self._sender: DiscordSender | None = None

    def sender(self) -> DiscordSender:
        """Return the outbound half (REST only; one per adapter, its session per event loop)."""
        if self._sender is None:
            self._sender = DiscordSender(self.settings, clock=self.context.clock)
        return self._sender

    def job_handlers(self) -> Mapping[str, Any]:
        """Return the `review:post` handler when the review channel is on Discord."""
        ctx = self.context
        if ctx.settings.review.platform != self.name:
            return {}
        from bots.platforms.discord._review import DiscordReviewChannel
        from bots.runtime.delivery.review_post import ReviewPostJobs
        from bots.runtime.review.proposals import REVIEW_POST

        channel = DiscordReviewChannel(self.sender(), ctx.settings.review)
        return {REVIEW_POST: ReviewPostJobs(ctx.store, ctx.settings, channel, clock=ctx.clock)}

    async def listen(self, stop: asyncio.Event) -> None:
        """Connect to the gateway and answer commands until stop is set."""
        if self.settings.token is None:
            raise ConfigError(
                "FACTBOT_DISCORD__TOKEN is not set: copy the bot token from the Developer "
                "Portal (your app > Bot > Reset Token) into it"
            )
        route_interactions(self.settings.api_base)  # this task's interaction responses
        client = FactbotClient(self.context, self.settings)
        self.client = client
        try:
            async with client:
                await client.login(self.settings.token.get_secret_value())
                gateway = asyncio.create_task(client.connect(reconnect=True))
                stopped = asyncio.create_task(stop.wait())
                await asyncio.wait({gateway, stopped}, return_when=asyncio.FIRST_COMPLETED)
                stopped.cancel()
                await client.close()
                if gateway.done():
                    gateway.result()  # a bad token or a lost gateway: raise it
                else:
                    gateway.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await gateway
        finally:
            self.client = None

    def mount(self, api: Any) -> None:
        """Add nothing: Discord events arrive over the gateway."""

    def candidate_sources(self) -> list[CandidateSource]:
        """Return the watched channels (`FACTBOT_MONITOR__DISCORD_CHANNELS`) as monitor sources."""
        sender = self.sender()  # its own REST session, in the loop that scans
        channels = self.context.settings.monitor.discord_channels
        return [DiscordChannelSource(sender, channel) for channel in channels]


def setup(context: PlatformContext) -> DiscordAdapter:
    """Return the Discord adapter."""
    return DiscordAdapter(context)
