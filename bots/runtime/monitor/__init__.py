"""The proactive monitor: find suspicious posts, check the worthy ones, route the results.

    scheduler (one process, a DB lease)      workers
      tick ─enqueue─> monitor:scan ─────────> scan: fetch from the kept cursor, store, score,
                                               budget ─> check job + monitor:route job
                                              route (after the check): the posting policy ─>
                                               reply:<platform> | x:note | review | nothing

Modules: `scheduler` (APScheduler + lease), `candidates` (what a source returns), `scan` (the
scan job; its checks go in through `CheckRequests.submit`), `priority` (candidates a published
fact-check answers first), `worthiness` (the check-worthiness score), `budget` (checks and
money), `policy` (where a result goes), `route` (the route job).
Sources come from the platform adapters (`OffersSources.candidate_sources()`, optional); the
composition root's services (`bots.app.services.Services`) gather them and the handlers below.
See docs/monitor.md.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from bots.runtime.checking.requests import CheckRequests
from bots.runtime.checking.reuse import ReuseIndex
from bots.runtime.monitor.candidates import CandidateSource, OffersSources
from bots.runtime.monitor.priority import MatchesFactChecks
from bots.runtime.monitor.route import Proposer, RouteJobs
from bots.runtime.monitor.scan import ROUTE, SCAN, ScanJobs
from bots.runtime.workers.pool import JobHandler
from bots.settings import Settings
from pipeline.util.clock import SYSTEM, Clock
from storage import Store

__all__ = ["ROUTE", "SCAN", "gather_sources", "monitor_handlers"]

log = logging.getLogger(__name__)


def gather_sources(adapters: Iterable[object]) -> dict[str, CandidateSource]:
    """Return every candidate source the adapters offer, by name (a repeated name is an error)."""
    sources: dict[str, CandidateSource] = {}
    for adapter in adapters:
        if not isinstance(adapter, OffersSources):
            continue
        for source in adapter.candidate_sources():
            if source.name in sources:
                raise ValueError(f"two monitor sources are named {source.name!r}")
            sources[source.name] = source
    return sources


def monitor_handlers(
    store: Store,
    settings: Settings,
    sources: Mapping[str, CandidateSource],
    *,
    reuse: ReuseIndex | None = None,
    requests: CheckRequests | None = None,
    review: Proposer | None = None,
    factchecks: MatchesFactChecks | None = None,
    clock: Clock = SYSTEM,
) -> dict[str, JobHandler]:
    """Return the handlers of the monitor's job kinds (scan and route); `factchecks`, the
    fact-check matcher, puts the candidates a published review answers first."""
    return {
        SCAN: ScanJobs(
            store,
            settings,
            sources,
            reuse=reuse,
            requests=requests,
            factchecks=factchecks,
            clock=clock,
        ),
        ROUTE: RouteJobs(store, settings, review=review, clock=clock),
    }
