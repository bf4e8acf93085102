"""The services over the shared resources: the one way in, platforms, the monitor, review.

`Services` builds each once, on first use: the reuse index and the request service every
request goes through (`bots.runtime.checking.requests.CheckRequests`), the platform service and the
adapters of the configured platforms (`PlatformContext.service` is that service, typed), their
senders, the proactive monitor's sources, handlers and scheduler, and the review queue's jobs.
"""

from __future__ import annotations

from functools import cached_property

from bots.app.resources import Resources
from bots.runtime.checking.requests import CheckRequests
from bots.runtime.checking.reuse import ReuseIndex
from bots.runtime.monitor import gather_sources, monitor_handlers
from bots.runtime.monitor.candidates import CandidateSource
from bots.runtime.monitor.scheduler import MonitorScheduler, Periodic
from bots.runtime.platform.contract import (
    HandlesJobs,
    PlatformAdapter,
    PlatformContext,
    ReplySender,
    load_adapters,
)
from bots.runtime.platform.intake import PlatformService
from bots.runtime.review.proposals import ReviewQueue
from bots.runtime.workers.pool import JobHandler
from bots.settings import Settings
from storage.x_notes import NOTES_STATUS_KIND


class Services:
    """The service graph of one process, built lazily over its resources."""

    def __init__(self, settings: Settings, resources: Resources) -> None:
        self.settings = settings
        self.resources = resources
        self.clock = resources.clock

    @cached_property
    def reuse(self) -> ReuseIndex:
        """Return the index that answers repeated and near-duplicate posts from stored checks."""
        r = self.resources
        return ReuseIndex(r.store.reuse, r.embedder, self.settings.reuse, clock=self.clock)

    @cached_property
    def requests(self) -> CheckRequests:
        """Return the one way in: reuse a stored check, else submit a check job (and its pair)."""
        return CheckRequests(
            self.resources.store,
            self.reuse if self.settings.reuse.enabled else None,
            max_attempts=self.settings.jobs.max_attempts,
        )

    @cached_property
    def service(self) -> PlatformService:
        """Return the service platform adapters hand their requests to."""
        store = self.resources.store
        return PlatformService(
            store,
            self.settings,
            clock=self.clock,
            requests=self.requests,
            languages=self.resources.languages,
        )

    @cached_property
    def adapters(self) -> dict[str, PlatformAdapter]:
        """Return the adapter of every platform whose credentials are set (imported lazily)."""
        store = self.resources.store
        return load_adapters(PlatformContext(self.settings, store, self.service, self.clock))

    def senders(self) -> dict[str, ReplySender]:
        """Return the outbound half of every configured platform, by name."""
        return {name: adapter.sender() for name, adapter in self.adapters.items()}

    def job_handlers(self) -> dict[str, JobHandler]:
        """Return the job handlers beyond checks and replies: each adapter's own job kinds.

        An adapter may be a `HandlesJobs` (e.g. X's Community Notes jobs); service parts such
        as the monitor and the review queue add theirs here.
        """
        handlers: dict[str, JobHandler] = {}
        for adapter in self.adapters.values():
            if isinstance(adapter, HandlesJobs):
                handlers.update(adapter.job_handlers())
        if self.settings.monitor.enabled:
            store = self.resources.store
            handlers.update(
                monitor_handlers(
                    store,
                    self.settings,
                    self.monitor_sources,
                    requests=self.requests,
                    review=ReviewQueue(store, self.settings, clock=self.clock),
                    factchecks=self.resources.fact_checks
                    if self.settings.factchecks.enabled
                    else None,
                    clock=self.clock,
                )
            )
        return handlers

    @cached_property
    def monitor_sources(self) -> dict[str, CandidateSource]:
        """Return the proactive monitor's sources: what the configured adapters offer."""
        return gather_sources(self.adapters.values())

    def monitor_scheduler(self) -> MonitorScheduler:
        """Return the monitor's scheduler over its sources (run it with `run(stop)`)."""
        periodic = []
        x = self.settings.x
        if "x" in self.adapters and x.notes_enabled:  # notes' later status: helpful or not
            periodic.append(Periodic("x-notes-status", NOTES_STATUS_KIND, x.notes_status_seconds))
        return MonitorScheduler(
            self.resources.store,
            self.settings.monitor,
            sorted(self.monitor_sources),
            clock=self.clock,
            max_attempts=self.settings.jobs.max_attempts,
            periodic=periodic,
        )
