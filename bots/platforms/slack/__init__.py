"""The Slack adapter (issue #9): mentions, `/factcheck` and a message shortcut, answered in
the thread with Block Kit.

`setup(ctx)` builds it from `FACTBOT_SLACK__*` settings: a single workspace with a bot token
(the simple path), or any number of workspaces installed through Slack's OAuth flow, their
installations kept in factbot's database. Events arrive over HTTP (`mount`: the events
endpoint `factbot serve` serves) or Socket Mode (`listen`, when an app token is set). Only this
package imports slack_bolt and slack_sdk; the modules inside are private:
`_events` (Slack → CheckRequest), `_render` (Answer → blocks), `_sender` (posting),
`_installs` (Bolt's stores over the database), `_app` (the Bolt app) and `_sources` (watched
channels, read by the proactive monitor).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from bots.runtime.monitor.candidates import CandidateSource
from bots.runtime.platform.contract import PlatformContext, ReplySender


class SlackAdapter:
    """The Slack platform: its sender, its Socket Mode listener and its HTTP routes."""

    name = "slack"

    def __init__(self, context: PlatformContext) -> None:
        from bots.platforms.slack._app import SlackBot
        from bots.platforms.slack._installs import SlackInstallationStore, SlackStateStore
        from bots.platforms.slack._sender import SlackSender
        from storage.slack_installs import SlackInstallRepo

        settings = context.settings.slack
        self.watched = tuple(context.settings.monitor.slack_channels)
        installations = states = None
        if settings.client_id is not None:
            repo = SlackInstallRepo(context.store.db, clock=context.clock)
            installations = SlackInstallationStore(repo)
            states = SlackStateStore(repo)
        lookup = installations.bot_token if installations is not None else None
        self.context = context
        self._sender = SlackSender(settings, installed=lookup)
        self.bot = SlackBot(settings, context.service, self._sender, installations, states)
        self.review: Any = None  # the review channel, when FACTBOT_REVIEW__PLATFORM is slack
        if context.settings.review.platform == self.name:
            from bots.platforms.slack._review import SlackReview, SlackReviewChannel
            from bots.runtime.review.proposals import ReviewQueue

            queue = ReviewQueue(context.store, context.settings, clock=context.clock)
            self.review = SlackReviewChannel(self._sender, context.settings.review)
            SlackReview(queue, self.review).register(self.bot.app)

    def sender(self) -> ReplySender:
        """Return the outbound half (workers use it to post answers)."""
        return self._sender

    async def listen(self, stop: asyncio.Event) -> None:
        """Run Socket Mode until stop is set (return at once in HTTP mode)."""
        await self.bot.listen(stop)

    def job_handlers(self) -> Mapping[str, Any]:
        """Return the `review:post` handler when the review channel is on Slack."""
        if self.review is None:
            return {}
        from bots.runtime.delivery.review_post import ReviewPostJobs
        from bots.runtime.review.proposals import REVIEW_POST

        ctx = self.context
        return {REVIEW_POST: ReviewPostJobs(ctx.store, ctx.settings, self.review, clock=ctx.clock)}

    def mount(self, api: Any) -> None:
        """Add the events endpoint and, with OAuth, the install pages to the FastAPI app."""
        self.bot.mount(api)

    def candidate_sources(self) -> list[CandidateSource]:
        """Return the watched channels (`FACTBOT_MONITOR__SLACK_CHANNELS`) as monitor sources."""
        from bots.platforms.slack._sources import SlackChannelSource

        sources: list[CandidateSource] = []
        for entry in self.watched:
            team, _, channel = entry.rpartition(":")
            sources.append(SlackChannelSource(self._sender, channel, team_id=team or None))
        return sources


def setup(context: PlatformContext) -> SlackAdapter:
    """Return the Slack adapter for the context's settings."""
    return SlackAdapter(context)
