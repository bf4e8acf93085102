"""The HTTP API: the first adapter. A check request is stored as a post plus a job, then answered.

POST /api/checks            {"text": "..."} or {"url": "..."}, optional "images" (http(s) image
                            URLs) and "before" (ISO date); or multipart/form-data with the
                            fields text, url, before and image (files, repeatable; or URLs)
                            → 202 {job} with Location: /api/jobs/{id}; with ?wait=N, 201 and the
                            check when it finishes within N seconds (else still 202; a job that
                            died, e.g. on a page that could not be fetched, answers with its
                            error's status); 200 and a stored check when one answers the same
                            or a near-duplicate post (`"reused"` says why; ?fresh=true checks
                            again). A URL's page is fetched by the worker, never here.
GET  /api/jobs/{id}         status, attempts, error and stage progress
GET  /api/checks/{id}       the stored check; 202 {job} while it is being made; 404 when unknown
GET  /api/checks/{id}/events  server-sent events: each stage as it starts and ends, then the end
GET  /healthz               alive (and index counts)
GET  /readyz                ready: database, workers, model (503 with the reasons when not),
                            and `doctor`: `factbot doctor`'s facts (no settings), cached 30 s
GET  /metrics               Prometheus' text format, read from the database (bots/api/metrics.py)

The API never imports the dashboard (an import contract): `bots.web.create_web` mounts the
dashboard on it, with the report pages (GET /checks/{id}) and who may call the API.

`Idempotency-Key: K` makes a retried POST answer with the first one's job instead of a new one.
Images become the post's `image_refs` as a platform attachment's do
(`bots.runtime.checking.uploads`): what the image stage cannot read is in the check's
`images.not_read` with its reason, what never reached it (a file over FACTBOT_IMAGES__MAX_BYTES, a
link that is not http(s)) in `notes`; the check goes on with the rest. A body over
FACTBOT_IMAGES__MAX_IMAGES x MAX_BYTES (+1 MB) is 413. Workers run beside the API
(`FACTBOT_JOBS__WORKERS`) or in `factbot worker` processes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from bots.api.health import health_router
from bots.api.metrics import mount_metrics
from bots.api.results import results_router
from bots.api.statuses import status_for
from bots.api.submit import submit_router
from bots.app.deps import install as install_deps
from bots.app.root import App
from bots.runtime.service import serve_parts
from bots.runtime.supervisor import Supervisor
from pipeline.errors import FactbotError


def create_api(app: App, *, workers: int | None = None, monitor: bool = False) -> FastAPI:
    """Return the FastAPI application over an App, running `workers` worker tasks beside it.

    With `monitor`, the proactive monitor's scheduler runs beside them too (it stands by while
    another process holds the monitor lease).
    """
    count = app.settings.jobs.workers if workers is None else workers
    stopping = asyncio.Event()  # set at shutdown: the parts stop, event streams end
    adapters = app.adapters  # the configured platforms; their libraries are imported here

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await app.start()  # the store, and the embedder warmed off the event loop
        # Workers, relay, listeners, monitor and sweep (bots.runtime.service.serve_parts).
        parts = Supervisor(stopping)
        serve_parts(app, parts, workers=count, monitor=monitor)
        parts.start()
        try:
            yield
        finally:
            await parts.shutdown()

    api = FastAPI(title="factbot", version="0.1.0", lifespan=lifespan)
    install_deps(api, app)  # what the routes below use, as dependencies (bots.app.deps)
    for adapter in adapters.values():
        adapter.mount(api)  # e.g. Slack's events endpoint and OAuth routes
    mount_metrics(api, app)  # GET /metrics for Prometheus (bots/api/metrics.py)

    @api.exception_handler(FactbotError)
    async def _factbot_error(request: Request, exc: FactbotError) -> JSONResponse:
        return JSONResponse(
            status_code=status_for(type(exc)),
            content={"error": type(exc).__name__, "detail": str(exc)},
        )

    api.include_router(health_router(app))
    api.include_router(submit_router())
    api.include_router(results_router(stopping))
    return api
