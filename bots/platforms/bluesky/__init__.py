"""The Bluesky adapter (issue #10): mentions answered with a threaded reply, monitor sources.

`setup(ctx)` builds it from `FACTBOT_BLUESKY__*` settings. `listen` polls notifications (there
is no push for a bot account short of the firehose); the sender posts reply threads. Only this
package imports atproto; the modules inside are private: `_session` (one resumed session per
process, kept in the database), `_events` (XRPC JSON → CheckRequest / Candidate), `_render`
(Answer → posts with link facets), `_sender` (posting once), `_listen` (the notification poll
and the bot label) and `_sources` (search, hashtags, watched accounts for the monitor).
"""

from __future__ import annotations

import asyncio
from typing import Any

from bots.runtime.monitor.candidates import CandidateSource
from bots.runtime.platform.contract import PlatformContext, ReplySender


class BlueskyAdapter:
    """The Bluesky platform: its sender, its notification poll, its monitor sources."""

    name = "bluesky"

    def __init__(self, context: PlatformContext) -> None:
        from bots.platforms.bluesky._listen import BlueskyListener
        from bots.platforms.bluesky._sender import BlueskySender
        from bots.platforms.bluesky._session import BlueskySession

        self.settings = context.settings.bluesky
        self.clock = context.clock
        self.session = BlueskySession(self.settings, context.store.state)
        self._sender = BlueskySender(self.settings, self.session, context.store.state)
        self.listener = BlueskyListener(
            self.settings, self.session, context.store.state, context.service, clock=self.clock
        )

    def sender(self) -> ReplySender:
        """Return the outbound half (workers use it to post answers)."""
        return self._sender

    async def listen(self, stop: asyncio.Event) -> None:
        """Poll notifications until stop is set."""
        try:
            await self.listener.run(stop)
        finally:
            await self.session.aclose()

    def mount(self, api: Any) -> None:
        """Add no routes: Bluesky is polled."""

    def candidate_sources(self) -> list[CandidateSource]:
        """Return the searches, hashtags and accounts the monitor reads on Bluesky."""
        from bots.platforms.bluesky._sources import BlueskySource

        s = self.settings
        kinds = [
            ("search", s.search_queries),
            ("hashtag", s.hashtags),
            ("account", s.watched_accounts),
        ]
        return [
            BlueskySource(self.session, kind, value, clock=self.clock)
            for kind, values in kinds
            for value in values
        ]


def setup(context: PlatformContext) -> BlueskyAdapter:
    """Return the Bluesky adapter for the context's settings."""
    return BlueskyAdapter(context)
