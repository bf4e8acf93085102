"""Jobs (queued, running, dead, with a retry button) and Sources (ratings, rules, imports)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from bots.api.jobview import job_view
from bots.dashboard._access import Access, Principal
from bots.dashboard._deps import needs
from bots.dashboard._views import Views
from pipeline.credibility.importers import FORMATS, import_sources
from pipeline.errors import FactbotError, NotFoundError
from pipeline.records.domain import Tier
from storage import Store
from storage.browse import find_sources
from storage.jobs import STATUSES

MAX_IMPORT = 20_000_000


def router(access: Access, views: Views) -> APIRouter:
    """Return the jobs and sources routes."""
    routes = APIRouter()
    as_admin = Depends(needs(access, "admin"))
    as_viewer = Depends(needs(access, "viewer"))
    app = access.app
    store = app.store

    @routes.get("/jobs", response_class=HTMLResponse)
    async def jobs(request: Request, status: str = "", me: Principal = as_viewer) -> HTMLResponse:
        """The job queue: the latest 100 jobs, by status, with attempts and errors."""
        shown = status if status in STATUSES else None
        listed, counts = await store.call(_jobs_page, store, shown)
        return views.render(request, "jobs.html", jobs=listed, counts=counts, status=shown or "")

    @routes.post("/jobs/{job_id}/retry", response_class=HTMLResponse)
    async def retry(request: Request, job_id: str, me: Principal = as_admin) -> Response:
        """Queue a dead job again with fresh attempts (admins)."""
        retried, view = await store.call(_retry, store, job_id)
        if request.headers.get("hx-request"):
            return views.render(request, "_job_row.html", job=view, retried=retried)
        return RedirectResponse("/jobs?status=dead", status_code=303)

    @routes.get("/sources", response_class=HTMLResponse)
    async def sources(
        request: Request,
        q: str = "",
        domain: str = "",
        me: Principal = as_viewer,
    ) -> HTMLResponse:
        """The publisher rating table, searchable."""
        rule = None
        if domain.strip():
            policy = app.checks.rater
            rating = policy.rate(domain.strip()[:500])
            rule = {"rating": rating, "citable": policy.citable(rating)}
        return views.render(
            request,
            "sources.html",
            q=q,
            domain=domain,
            rule=rule,
            rows=await store.call(find_sources, store.db, q.strip()[:200]),
            total=await store.call(store.sources.count),
            formats=FORMATS,
            tiers=[t.value for t in Tier],
            report=None,
            error=None,
        )

    @routes.post("/sources/import", response_class=HTMLResponse)
    async def import_table(
        request: Request,
        table: Annotated[UploadFile, File()],
        fmt: str = Form(default=""),
        tier: str = Form(default=""),
        me: Principal = as_admin,
    ) -> HTMLResponse:
        """Import a publisher rating table (tiers, blocklist, mbfc, scores, perennial, ratings;
        admins)."""
        report, error = None, None
        data = await table.read(MAX_IMPORT + 1)
        name = Path(table.filename or "upload.csv").name or "upload.csv"
        if len(data) > MAX_IMPORT:
            error = f"the table is larger than {MAX_IMPORT:,} bytes"
        else:
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / name
                path.write_bytes(data)
                try:
                    report = await store.call(
                        import_sources,
                        store.sources,
                        path,
                        fmt=fmt or None,
                        tier=Tier(tier) if tier in {t.value for t in Tier} else None,
                    )
                except FactbotError as exc:
                    error = str(exc)
        return views.render(
            request,
            "sources.html",
            code=200 if error is None else 422,
            q="",
            domain="",
            rule=None,
            rows=await store.call(find_sources, store.db, ""),
            total=await store.call(store.sources.count),
            formats=FORMATS,
            tiers=[t.value for t in Tier],
            report=report,
            error=error,
        )

    return routes


def _jobs_page(store: Store, status: str | None) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Return the latest 100 jobs (with status, if given) as the page shows them, and counts."""
    listed = [job_view(store, j) for j in store.jobs.list(status=status, limit=100)]
    return listed, store.jobs.counts()


def _retry(store: Store, job_id: str) -> tuple[bool, dict[str, Any]]:
    """Queue a dead job again; return whether it was, and the job as the page shows it."""
    if store.jobs.get(job_id) is None:
        raise NotFoundError(f"no job {job_id!r}")
    retried = store.jobs.retry(job_id)
    job = store.jobs.get(job_id)
    assert job is not None
    return retried, job_view(store, job)
