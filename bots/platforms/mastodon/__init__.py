"""The Mastodon adapter (issue #10): mentions answered with a threaded reply, monitor sources.

`setup(ctx)` builds it from `FACTBOT_MASTODON__*` settings. `listen` polls mention
notifications with a kept `since_id` (polling also backfills whatever a dropped connection
missed; there is no streaming connection to lose); the sender posts reply threads. Only this
package imports Mastodon.py, which is synchronous: every call runs in a thread. The modules
inside are private: `_api` (the client, rate limits, the instance's limits), `_events` (API
JSON → CheckRequest / Candidate), `_render` (Answer → statuses), `_sender` (posting once),
`_listen` (the notification poll) and `_sources` (hashtags, accounts, trends for the monitor).
"""

from __future__ import annotations

import asyncio
from typing import Any

from bots.runtime.monitor.candidates import CandidateSource
from bots.runtime.platform.contract import PlatformContext, ReplySender


class MastodonAdapter:
    """The Mastodon platform: its sender, its notification poll, its monitor sources."""

    name = "mastodon"

    def __init__(self, context: PlatformContext) -> None:
        from bots.platforms.mastodon._api import MastodonApi
        from bots.platforms.mastodon._listen import MastodonListener
        from bots.platforms.mastodon._sender import MastodonSender

        self.settings = context.settings.mastodon
        self.clock = context.clock
        state = context.store.state
        self.api = MastodonApi(self.settings, state)
        self._sender = MastodonSender(self.settings, self.api, state)
        self.listener = MastodonListener(
            self.settings, self.api, state, context.service, clock=self.clock
        )

    def sender(self) -> ReplySender:
        """Return the outbound half (workers use it to post answers)."""
        return self._sender

    async def listen(self, stop: asyncio.Event) -> None:
        """Poll mention notifications until stop is set."""
        await self.listener.run(stop)

    def mount(self, api: Any) -> None:
        """Add no routes: Mastodon is polled."""

    def candidate_sources(self) -> list[CandidateSource]:
        """Return the hashtags, accounts and trends the monitor reads on Mastodon."""
        from bots.platforms.mastodon._sources import MastodonSource

        s = self.settings
        sources: list[CandidateSource] = [
            MastodonSource(self.api, "hashtag", tag, clock=self.clock) for tag in s.hashtags
        ]
        sources += [
            MastodonSource(self.api, "account", acct, clock=self.clock)
            for acct in s.watched_accounts
        ]
        if s.trending:
            sources.append(MastodonSource(self.api, "trending", clock=self.clock))
        return sources


def setup(context: PlatformContext) -> MastodonAdapter:
    """Return the Mastodon adapter for the context's settings."""
    return MastodonAdapter(context)
