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
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import httpx
from fastapi import FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError, ValidationInfo, model_validator
from sse_starlette import EventSourceResponse, ServerSentEvent

from bots.api.forms import BodyTooLargeError, bounded_form, form_cap, read_upload
from bots.api.jobs import TERMINAL, job_to_json, wait_for_job
from bots.api.metrics import mount_metrics
from bots.app.deps import RequestsDep, SettingsDep, StoreDep
from bots.app.deps import install as install_deps
from bots.app.diagnosis import diagnose
from bots.app.root import App
from bots.render import check_to_json
from bots.runtime.checking.reuse import ReuseHit
from bots.runtime.checking.uploads import Upload, gather_images
from bots.runtime.service import serve_parts
from bots.runtime.supervisor import Supervisor
from bots.settings import Settings
from pipeline import errors
from pipeline.errors import (
    ExtractionError,
    FactbotError,
    FetchError,
    InputError,
    NotFoundError,
    UnsafeURLError,
)
from pipeline.inputs.posts import ensure_checkable, page_request, post_from_text
from storage import Store

log = logging.getLogger(__name__)
DOCTOR_TTL = 30.0  # seconds /readyz reuses the doctor's facts


class CheckRequest(BaseModel):
    """A request to check a text or the page at a URL, with the post's images."""

    text: str | None = Field(default=None, description="the post text to check")
    url: str | None = Field(default=None, description="a page to fetch and check")
    images: list[str] = Field(
        default_factory=list,
        max_length=64,
        description="http(s) URLs of the post's images (read like a platform attachment)",
    )
    before: datetime | None = Field(
        default=None, description="only use evidence published before this time"
    )

    @model_validator(mode="after")
    def _one_input(self, info: ValidationInfo) -> CheckRequest:
        if self.text is not None and self.url is not None:
            raise ValueError("give exactly one of 'text' or 'url'")
        uploads = (info.context or {}).get("uploads", 0)
        if self.text is None and self.url is None and not self.images and not uploads:
            raise ValueError("give 'text', 'url' or 'images' (or upload an image)")
        return self


FORM_FIELDS = ("text", "url", "before", "image", "images")
_MULTIPART_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "the post text to check"},
        "url": {"type": "string", "description": "a page to fetch and check"},
        "before": {"type": "string", "format": "date-time"},
        "image": {
            "type": "array",
            "items": {"type": "string", "format": "binary"},
            "description": "image files of the post (repeat the field for several)",
        },
        "images": {
            "type": "array",
            "items": {"type": "string"},
            "description": "http(s) URLs of the post's images (repeatable)",
        },
    },
}


def _status(kind: type[BaseException]) -> int:
    """Return the HTTP status for an error of this kind, raised now or by a job that died."""
    if issubclass(kind, BodyTooLargeError):
        return 413
    if issubclass(kind, NotFoundError):
        return 404
    if issubclass(kind, (UnsafeURLError, InputError)):
        return 422
    if issubclass(kind, (FetchError, ExtractionError)):
        return 502
    return 500


def _error_kind(error: str | None) -> type[BaseException]:
    """Return the factbot error class a job's `last_error` ("Name: message") names."""
    kind = getattr(errors, (error or "").split(":", 1)[0], None)
    return kind if isinstance(kind, type) and issubclass(kind, FactbotError) else Exception


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
            status_code=_status(type(exc)),
            content={"error": type(exc).__name__, "detail": str(exc)},
        )

    @api.get("/healthz")
    async def healthz() -> dict[str, Any]:
        """Liveness: the process answers, with the evidence index's size."""
        stats = app.store.documents.stats()
        return {
            "status": "ok",
            "documents": stats.documents,
            "passages": stats.passages,
            "sources": app.store.sources.count(),
        }

    doctor_cache: list[tuple[float, dict[str, Any]]] = []
    doctor_lock = asyncio.Lock()

    async def doctor_part() -> dict[str, Any]:
        # Probes and quick_check cost a little: a probe hitting /readyz every second must not.
        async with doctor_lock:
            if doctor_cache and time.monotonic() - doctor_cache[0][0] < DOCTOR_TTL:
                return doctor_cache[0][1]
            async with httpx.AsyncClient(verify=await app.tls()) as http:
                diagnosis = await diagnose(
                    app.settings, probe=app.resources.search_probe, http=http
                )
            doctor_cache[:] = [(time.monotonic(), diagnosis.to_json(with_settings=False))]
            return doctor_cache[0][1]

    @api.get("/readyz")
    async def readyz() -> JSONResponse:
        """Readiness: 200 when the database answers and a worker is alive, else 503 with the
        problems."""
        problems: list[str] = []
        try:
            app.store.ping()
            database = "ok"
        except Exception as exc:  # noqa: BLE001 - any database failure means not ready
            database = f"failed: {exc}"
            problems.append(f"database {database}")
        within = 3 * max(app.settings.jobs.heartbeat_seconds, 5.0)
        alive = [w.id for w in app.store.workers.alive(within=within)] if not problems else []
        if not alive:
            problems.append(
                "no worker is running: set FACTBOT_JOBS__WORKERS above 0 or start `factbot worker`"
            )
        model = app.model_choice
        body = {
            "status": "ready" if not problems else "not ready",
            "database": database,
            "workers": alive,
            "jobs": app.store.jobs.counts() if database == "ok" else {},
            "model": model,
            "embedder": "loaded" if app.embedder_loaded else "not loaded",
            "platforms": sorted(adapters),
            "problems": problems,
            "doctor": await doctor_part(),
        }
        return JSONResponse(status_code=200 if not problems else 503, content=body)

    @api.post(
        "/api/checks",
        status_code=202,
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": CheckRequest.model_json_schema()},
                    "multipart/form-data": {"schema": _MULTIPART_SCHEMA},
                },
            }
        },
    )
    async def create_check(
        request: Request,
        settings: SettingsDep,
        store: StoreDep,
        requests: RequestsDep,
        wait: float = Query(default=0, ge=0, description="seconds to wait for the result"),
        fresh: bool = Query(default=False, description="check again even if a stored check fits"),
        idempotency_key: str | None = Header(default=None, max_length=200),
    ) -> JSONResponse:
        """Submit a post (text, a page to fetch, images) for checking: 202 with its job, or the
        result once done within `wait` seconds."""
        kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if kind == "multipart/form-data":
            body, uploads = await _form_request(request, settings)
        else:
            body, uploads = await _json_request(request), []
        max_chars = settings.max_post_chars
        limits = settings.images
        given = gather_images(
            uploads, body.images, max_images=limits.max_images, max_bytes=limits.max_bytes
        )
        notes = list(given.notes)
        if body.url is not None:  # the worker fetches the page (a fetch error ends the job)
            post = page_request(body.url, image_refs=given.refs)
        elif not given.refs and not (body.text or "").strip() and notes:
            raise InputError("nothing to check: " + " ".join(notes))
        else:
            post = post_from_text(
                body.text or "", max_chars=max_chars, platform="api", image_refs=given.refs
            )
        ensure_checkable(post)
        requested = await requests.submit(
            post,
            origin="api",
            key=idempotency_key or None,
            fresh=fresh,
            before=body.before,
            notes=notes,
        )
        if requested.reused is not None:
            return _reused(store, requested.reused)
        assert requested.check_job is not None  # not reused: a check job is stored
        job = requested.check_job
        if wait > 0:
            job = await wait_for_job(store, job.id, min(wait, settings.jobs.wait_max))
            if job.status == "done" and job.result_id:
                return JSONResponse(
                    status_code=201,
                    content=_check_content(store, job.result_id),
                    headers={"Location": f"/api/checks/{job.result_id}"},
                )
            if job.status == "dead":
                return JSONResponse(
                    status_code=_status(_error_kind(job.last_error)),
                    content=job_to_json(store, job),
                    headers={"Location": f"/api/jobs/{job.id}"},
                )
        return JSONResponse(
            status_code=202,
            content=job_to_json(store, job),
            headers={"Location": f"/api/jobs/{job.id}"},
        )

    def _check_content(store: Store, check_id: str) -> dict[str, Any]:
        """Return a stored check as JSON, with the notes its request left (none: [])."""
        content = check_to_json(store.checks.get(check_id))  # NotFoundError → 404
        job = store.jobs.for_check(check_id)
        content["notes"] = [str(n) for n in (job.payload.get("notes") or ())] if job else []
        return content

    async def _json_request(request: Request) -> CheckRequest:
        try:
            return CheckRequest.model_validate_json(await request.body())
        except ValidationError as exc:
            raise RequestValidationError(exc.errors(include_url=False)) from exc

    async def _form_request(
        request: Request, settings: Settings
    ) -> tuple[CheckRequest, list[Upload]]:
        """Read a multipart check request: its fields, and its image files (bounded)."""
        limits = settings.images
        form = await bounded_form(request, cap=form_cap(limits), max_files=limits.max_images * 4)
        try:
            uploads: list[Upload] = []
            fields: dict[str, Any] = {"images": []}
            for key, value in form.multi_items():
                if key not in FORM_FIELDS:
                    raise InputError(
                        f"unknown form field {key!r}; the fields are {', '.join(FORM_FIELDS)}"
                    )
                if not isinstance(value, str):
                    if key != "image":
                        raise InputError(f"the form field {key!r} takes text, not a file")
                    uploads.append(await read_upload(value, max_bytes=limits.max_bytes))
                elif key in ("image", "images"):
                    fields["images"].append(value)
                elif value.strip():
                    fields[key] = value
            try:
                context = {"uploads": len(uploads)}
                return CheckRequest.model_validate(fields, context=context), uploads
            except ValidationError as exc:
                raise RequestValidationError(exc.errors(include_url=False)) from exc
        finally:
            await form.close()

    def _reused(store: Store, hit: ReuseHit) -> JSONResponse:
        content = _check_content(store, hit.check_id)
        content["reused"] = {
            "reason": hit.reason,
            "similarity": round(hit.similarity, 4),
            "age_seconds": round(hit.age.total_seconds(), 1),
        }
        return JSONResponse(content=content, headers={"Location": f"/api/checks/{hit.check_id}"})

    @api.get("/api/jobs/{job_id}")
    async def get_job(job_id: str, store: StoreDep) -> dict[str, Any]:
        """One job: its kind, status (queued, running, done, failed, dead), attempts and last
        error."""
        job = store.jobs.get(job_id)
        if job is None:
            raise NotFoundError(f"no job {job_id!r}")
        return job_to_json(store, job)

    @api.get("/api/checks/{check_id}")
    async def get_check(check_id: str, store: StoreDep) -> JSONResponse:
        """One check as JSON: verdict, claims, cited evidence and the correction text."""
        try:
            return JSONResponse(_check_content(store, check_id))
        except NotFoundError:
            job = store.jobs.for_check(check_id)
            if job is None:
                raise
            return JSONResponse(
                status_code=202,
                content=job_to_json(store, job),
                headers={"Location": f"/api/jobs/{job.id}"},
            )

    @api.get("/api/checks/{check_id}/events")
    async def check_events(
        check_id: str, store: StoreDep, last_event_id: str | None = Header(default=None)
    ) -> EventSourceResponse:
        """A check's progress as server-sent events, stage by stage; resumes after `Last-Event-
        ID`."""
        job = store.jobs.get(check_id) or store.jobs.for_check(check_id)
        if job is None:
            stored = store.checks.get(check_id)  # 404 when unknown
            return _event_stream(_replay(stored.id, stored.timings))
        after = int(last_event_id) if last_event_id and last_event_id.isdigit() else 0
        return _event_stream(_stream(store, job.id, after), headers={"Cache-Control": "no-cache"})

    async def _stream(store: Store, job_id: str, after: int) -> AsyncIterator[ServerSentEvent]:
        # sse-starlette ends this generator when the client goes away.
        while True:
            for event in store.jobs.events(job_id, after=after):
                after = event.seq
                data = {"stage": event.stage, "status": event.status, "at": event.at.isoformat()}
                data.update(event.detail)
                kind = "stage" if event.stage != "job" else "job"
                yield _sse(kind, data, event.seq)
            job = store.jobs.get(job_id)
            if job is None or job.status in TERMINAL:
                if job is not None:
                    end = {"status": job.status, "check_id": job.result_id, "error": job.last_error}
                    if job.result_id:
                        end["url"] = f"/api/checks/{job.result_id}"
                    yield _sse("end", end, after)
                return
            if stopping.is_set():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), 0.2)

    return api


KEEP_ALIVE = 15.0  # seconds between comment lines that keep proxies from closing the stream


def _event_stream(
    events: AsyncIterator[ServerSentEvent], *, headers: dict[str, str] | None = None
) -> EventSourceResponse:
    """Return a server-sent event stream (lines end in LF, a `: keep-alive` comment every 15 s)."""
    return EventSourceResponse(
        events,
        headers=headers,
        sep="\n",
        ping=KEEP_ALIVE,
        ping_message_factory=lambda: ServerSentEvent(comment="keep-alive"),
    )


def _sse(event: str, data: dict[str, Any], seq: int) -> ServerSentEvent:
    return ServerSentEvent(data=json.dumps(data, default=str), event=event, id=str(seq))


async def _replay(check_id: str, timings: Any) -> AsyncIterator[ServerSentEvent]:
    """The stages of a check made without a job (e.g. by `factbot check`), then the end."""
    for n, timing in enumerate(timings, start=1):
        yield _sse("stage", {"stage": timing.stage, "status": "done", "seconds": timing.seconds}, n)
    end = {"status": "done", "check_id": check_id, "url": f"/api/checks/{check_id}"}
    yield _sse("end", end, len(timings))
