"""Overview: checks per day by verdict, latency per stage, cost per day, references reachable.

The page shows every figure as a table (readable with JavaScript off); app.js draws the same
figures with Chart.js from /overview/data.json. Days are UTC days; latency is over the latest
5,000 checks of the period.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse

from bots.dashboard._access import Access, Principal
from bots.dashboard._deps import needs
from bots.dashboard._views import Views
from storage.x_notes import XNotesRepo, notes_summary


def percentile(values: list[float], share: float) -> float:
    """Return the nearest-rank percentile (share in 0..1) of values (0 when empty)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


class Figures:
    """Compute the overview's figures from the store."""

    def __init__(self, access: Access) -> None:
        self.app = access.app

    def compute(self, days: int) -> dict[str, Any]:
        """Return every figure of the last `days` days."""
        since = self.app.clock.now() - timedelta(days=days)
        browse = self.app.store.browse
        per_day = browse.checks_per_day(since)
        verdicts = sorted({v for counts in per_day.values() for v in counts})
        stages = browse.stage_seconds(since)
        return {
            "days": sorted(per_day),
            "verdicts": verdicts,
            "checks_per_day": per_day,
            "latency": [
                {
                    "stage": stage,
                    "p50": round(percentile(values, 0.5), 3),
                    "p95": round(percentile(values, 0.95), 3),
                    "count": len(values),
                }
                for stage, values in sorted(stages.items())
            ],
            "cost_per_day": {d: round(c, 4) for d, c in browse.cost_per_day(since).items()},
            "references": browse.reachability(),
            "agreement": browse.agreement(since),
            "x_notes": self._x_notes(),
        }

    def _x_notes(self) -> dict[str, Any] | None:
        """Return the X Community Notes summary (admission, daily limit), when X is set up."""
        if not self.app.settings.x.configured:
            return None
        return notes_summary(XNotesRepo(self.app.store.db, clock=self.app.clock)).to_json()


def router(access: Access, views: Views) -> APIRouter:
    """Return the overview routes."""
    routes = APIRouter()
    as_viewer = Depends(needs(access, "viewer"))
    figures = Figures(access)
    store = access.app.store

    @routes.get("/overview", response_class=HTMLResponse)
    async def overview(request: Request, days: int = 30, me: Principal = as_viewer) -> HTMLResponse:
        """Figures over the last `days` days (1-365): checks by verdict and day, stage latency,
        cost, reference reachability and review agreement."""
        days = min(max(days, 1), 365)
        computed = await store.call(figures.compute, days)
        return views.render(request, "overview.html", f=computed, days=days)

    @routes.get("/overview/data.json")
    async def data(days: int = 30, me: Principal = as_viewer) -> JSONResponse:
        """The overview's figures as JSON."""
        return JSONResponse(await store.call(figures.compute, min(max(days, 1), 365)))

    return routes
