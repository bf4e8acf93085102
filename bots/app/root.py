"""The composition root: one process's resources, its check factory and its services.

Open it once per process — a CLI command, the server, a worker — as an async context manager:

    async with App(settings) as app:        # opens the store, warms the embedder off the loop
        check = await app.check(post)
    # closed newest first: the loop's clients, the local model server, the CPU pool, the store

Three parts, by lifetime:

- `app.resources` (`bots.app.resources.Resources`): what lives as long as the process — the
  store, the embedder, the CPU pool, the local model server, the image readers, and one
  fetcher, one search HTTP client and one model client per event loop — in one
  `AsyncExitStack`;
- `app.checks` (`bots.app.checks.CheckFactory`): what one check needs, made from the settings
  and those resources (no client is built per check);
- `app.services` (`bots.app.services.Services`): the request service, the platforms, the
  monitor and the review queue.

Dependencies can be injected through the constructor (`store=`, `embedder=`, `clock=`), so tests
share one loaded embedder or a hand-moved clock. Everything heavy is otherwise created lazily on
first use, so `factbot --help` and `factbot show` stay fast. The members below are the ones the
CLI, the API and the workers use; the rest is on the three parts.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from datetime import datetime
from types import TracebackType
from typing import Self

from bots.app.checks import CheckFactory
from bots.app.model_choice import Choice
from bots.app.resources import Resources
from bots.app.services import Services
from bots.runtime.checking.requests import CheckRequests
from bots.runtime.checking.reuse import ReuseIndex
from bots.runtime.monitor.candidates import CandidateSource
from bots.runtime.monitor.scheduler import MonitorScheduler
from bots.runtime.platform.contract import PlatformAdapter, ReplySender
from bots.runtime.platform.intake import PlatformService
from bots.runtime.workers.pool import JobHandler
from bots.settings import Settings
from pipeline.embedding.embedder import LocalEmbedder
from pipeline.fetch.fetcher import Fetcher
from pipeline.records.domain import Check, Post
from pipeline.run import Progress
from pipeline.util.clock import SYSTEM, Clock
from pipeline.util.cpu import CpuPool
from storage import Store
from storage.tx import DatabaseUnavailableError

log = logging.getLogger(__name__)


class App:
    """One process's resources, check factory and services (module doc)."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: Store | None = None,
        embedder: LocalEmbedder | None = None,
        clock: Clock = SYSTEM,
        resources: Resources | None = None,
    ) -> None:
        self.clock = clock
        self.resources = resources or Resources(
            settings, store=store, embedder=embedder, clock=clock
        )
        self.checks = CheckFactory(settings, self.resources)
        self.services = Services(settings, self.resources)
        self.settings = settings

    @property
    def settings(self) -> Settings:
        """Return the settings every part reads."""
        return self._settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        # Replaced before anything is built (e.g. `factbot eval --graph`): every part reads them.
        self._settings = self.resources.settings = settings
        self.checks.settings = self.services.settings = settings

    # -- resources -------------------------------------------------------------------------

    @property
    def store(self) -> Store:
        """Return the database (opened on first use)."""
        return self.resources.store

    @property
    def embedder(self) -> LocalEmbedder:
        """Return the sentence embedder (loaded on first use or at warm-up)."""
        return self.resources.embedder

    @property
    def cpu(self) -> CpuPool:
        """Return the CPU pool that runs model inference off the event loop."""
        return self.resources.cpu

    @property
    def model_choice(self) -> Choice:
        """Return which model path checks use: an endpoint, the local model, or none."""
        return self.resources.model_choice

    @property
    def embedder_loaded(self) -> bool:
        """Return whether the embedder's model is loaded (warm-up done)."""
        return self.resources.embedder_loaded

    async def fetcher(self) -> Fetcher:
        """Return the shared SSRF-safe fetcher of the running event loop."""
        return await self.resources.fetcher()

    async def close_fetcher(self) -> None:
        """Close the running loop's clients (call it before the loop ends); next use reopens."""
        await self.resources.close_fetcher()

    async def tls(self) -> ssl.SSLContext:
        """Return the TLS context every HTTP client of the process shares."""
        return await self.resources.tls()

    # -- checks ----------------------------------------------------------------------------

    async def check(self, post: Post, *, before: datetime | None = None) -> Check:
        """Run a check (with web search and reference checks when configured) and store it."""
        result = await self.run_check(post, before=before)
        await self.store.call(self.store.checks.save, result)
        return result

    async def run_check(
        self, post: Post, *, before: datetime | None = None, progress: Progress | None = None
    ) -> Check:
        """Run a check and return it unsaved (a worker stores it with its job)."""
        return await self.checks.run_check(post, before=before, progress=progress)

    # -- services --------------------------------------------------------------------------

    @property
    def reuse(self) -> ReuseIndex:
        """Return the index that answers repeated posts from stored checks."""
        return self.services.reuse

    @property
    def requests(self) -> CheckRequests:
        """Return the one way in for every request to check a post."""
        return self.services.requests

    @property
    def service(self) -> PlatformService:
        """Return the service platform adapters hand their requests to."""
        return self.services.service

    @property
    def adapters(self) -> dict[str, PlatformAdapter]:
        """Return the adapter of every configured platform."""
        return self.services.adapters

    @property
    def monitor_sources(self) -> dict[str, CandidateSource]:
        """Return the proactive monitor's sources."""
        return self.services.monitor_sources

    def senders(self) -> dict[str, ReplySender]:
        """Return the outbound half of every configured platform, by name."""
        return self.services.senders()

    def job_handlers(self) -> dict[str, JobHandler]:
        """Return the job handlers beyond checks and replies."""
        return self.services.job_handlers()

    def monitor_scheduler(self) -> MonitorScheduler:
        """Return the monitor's scheduler over its sources."""
        return self.services.monitor_scheduler()

    # -- lifetime --------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def start(self, *, warm: bool = True) -> None:
        """Open the store and, with warm, load the models and start the local model server
        where checks call it (`Resources.runs_local_model`).

        The embedder and lingua load in the CPU pool, off the event loop; the local
        server is forked from the loop's thread (it dies with that thread) and awaited.
        """
        await asyncio.to_thread(self._open_store)  # migrations: off the event loop
        if warm:
            await self.cpu.run(self.embedder.warm_up)
            await self.warm_languages()
            if self.settings.reuse.enabled:
                try:
                    await self.cpu.run(self.reuse.warm)
                except DatabaseUnavailableError as exc:  # e.g. PostgreSQL restarting
                    log.warning("reuse index not warmed (it loads on first use): %s", exc)
            if self.resources.runs_local_model:
                await self.resources.local_model.endpoint_async()

    def _open_store(self) -> Store:
        return self.store

    async def warm_languages(self) -> None:
        """Load lingua's models now: they take seconds and hold the interpreter while they load.

        Loaded on the first post instead, they would stall the event loop mid-check (a thread
        does not help: the load keeps the GIL) and could let a job's lease lapse.
        """
        languages = self.resources.languages
        if languages is not None:
            await self.cpu.run(languages.warm)

    async def aclose(self) -> None:
        """Close every resource, newest first."""
        await self.resources.aclose()

    def close(self) -> None:
        """Close every resource from synchronous code (a loop's clients at its next turn)."""
        self.resources.close()
