"""The X adapter (issue #10): mentions answered as numbered reply threads, watched sources for
the monitor, and Community Notes through the AI Note Writer API.

`setup(ctx)` builds it from `FACTBOT_X__*` settings. Mentions are polled (`listen`) with a
persisted `since_id`; the reply job posts the thread under the mention (`XSender`, exactly once
per post). `candidate_sources()` gives the monitor recent search, watched accounts, hashtags and
the eligible-posts feed; `job_handlers()` runs `x:note` and `x:notes-status`; `mount` serves
`GET /api/x/notes/summary`. Only this package imports tweepy, and only inside its private
modules: `_client` (the API, its limits), `_community` (the Community Notes calls),
`_events` (payload → request), `_render`, `_sender`, `_mentions`, `_sources`, `_notes`
(writing and scoring) and `_notes_jobs`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from bots.runtime.platform.contract import PlatformContext, ReplySender
from storage.x_notes import NOTE_KIND, NOTES_STATUS_KIND, ApiCosts, XNotesRepo, notes_summary

SUMMARY_PATH = "/api/x/notes/summary"


class XAdapter:
    """The X platform: its sender, its mention poller, its sources, jobs and routes."""

    name = "x"

    def __init__(self, context: PlatformContext) -> None:
        from bots.platforms.x._client import XApi
        from bots.platforms.x._community import NotesApi
        from bots.platforms.x._mentions import MentionPoller
        from bots.platforms.x._sender import XSender

        self.context = context
        settings = context.settings.x
        store = context.store
        self.notes = XNotesRepo(store.db, clock=context.clock)
        self.api = XApi(settings, ApiCosts(store.db, clock=context.clock), clock=context.clock)
        self.notes_api = NotesApi(self.api)  # one per client: it remembers X's spellings
        self._sender = XSender(settings, self.api, store.state)
        self.poller = MentionPoller(
            settings, self.api, context.service, store.state, clock=context.clock
        )

    def sender(self) -> ReplySender:
        """Return the outbound half (workers use it to post reply threads)."""
        return self._sender

    async def listen(self, stop: asyncio.Event) -> None:
        """Poll mentions until stop is set."""
        try:
            await self.poller.listen(stop)
        finally:
            await self.api.close()

    def mount(self, api: Any) -> None:
        """Add `GET /api/x/notes/summary` (the last 50 notes against admission)."""
        notes = self.notes

        async def summary() -> dict[str, Any]:
            return notes_summary(notes).to_json()

        api.add_api_route(SUMMARY_PATH, summary, methods=["GET"])

    def candidate_sources(self) -> list[Any]:
        """Return the monitor's sources on X (`bots.runtime.monitor.candidates.CandidateSource`)."""
        from bots.platforms.x._sources import build_sources

        settings = self.context.settings
        return build_sources(
            settings.x,
            self.api,
            self.context.clock,
            notes=self.notes_api,
            languages=settings.languages.split(","),
        )

    def job_handlers(self) -> Mapping[str, Any]:
        """Return the handlers of `x:note` and `x:notes-status`."""
        from bots.platforms.x._notes_jobs import NoteJobs, NoteStatusJobs

        settings = self.context.settings
        return {
            NOTE_KIND: NoteJobs(settings, self.context.store, self.notes_api, self.notes),
            NOTES_STATUS_KIND: NoteStatusJobs(settings, self.notes_api, self.notes),
        }


def setup(context: PlatformContext) -> XAdapter:
    """Return the X adapter for the context's settings."""
    return XAdapter(context)
