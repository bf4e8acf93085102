"""Reading results: a job, a check (202 while it is being made) and a check's progress as
server-sent events, stage by stage, resumable after `Last-Event-ID`."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Header
from fastapi.responses import JSONResponse
from sse_starlette import EventSourceResponse, ServerSentEvent

from bots.api.jobs import TERMINAL, job_to_json
from bots.app.deps import StoreDep
from bots.render import check_to_json
from pipeline.errors import NotFoundError
from storage import Store
from storage.jobs import Job, JobEvent


def results_router(stopping: asyncio.Event) -> APIRouter:
    """Return the result routes; event streams end when `stopping` is set (shutdown)."""
    router = APIRouter()

    @router.get("/api/jobs/{job_id}")
    async def get_job(job_id: str, store: StoreDep) -> dict[str, Any]:
        """One job: its kind, status (queued, running, done, failed, dead), attempts and last
        error."""
        job = await store.call(store.jobs.get, job_id)
        if job is None:
            raise NotFoundError(f"no job {job_id!r}")
        return await store.call(job_to_json, store, job)

    @router.get("/api/checks/{check_id}")
    async def get_check(check_id: str, store: StoreDep) -> JSONResponse:
        """One check as JSON: verdict, claims, cited evidence and the correction text."""
        try:
            return JSONResponse(await store.call(check_content, store, check_id))
        except NotFoundError:
            job = await store.call(store.jobs.for_check, check_id)
            if job is None:
                raise
            return JSONResponse(
                status_code=202,
                content=await store.call(job_to_json, store, job),
                headers={"Location": f"/api/jobs/{job.id}"},
            )

    @router.get("/api/checks/{check_id}/events")
    async def check_events(
        check_id: str, store: StoreDep, last_event_id: str | None = Header(default=None)
    ) -> EventSourceResponse:
        """A check's progress as server-sent events, stage by stage; resumes after `Last-Event-
        ID`."""
        job = await store.call(_job_of, store, check_id)
        if job is None:
            stored = await store.call(store.checks.get, check_id)  # 404 when unknown
            return _event_stream(_replay(stored.id, stored.timings))
        after = int(last_event_id) if last_event_id and last_event_id.isdigit() else 0
        return _event_stream(_stream(store, job.id, after), headers={"Cache-Control": "no-cache"})

    async def _stream(store: Store, job_id: str, after: int) -> AsyncIterator[ServerSentEvent]:
        # sse-starlette ends this generator when the client goes away.
        while True:
            job, events = await store.call(_poll, store, job_id, after)
            for event in events:
                after = event.seq
                data = {"stage": event.stage, "status": event.status, "at": event.at.isoformat()}
                data.update(event.detail)
                kind = "stage" if event.stage != "job" else "job"
                yield _sse(kind, data, event.seq)
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

    return router


def _job_of(store: Store, check_id: str) -> Job | None:
    """Return the job named check_id, or the job that makes the check check_id."""
    return store.jobs.get(check_id) or store.jobs.for_check(check_id)


def _poll(store: Store, job_id: str, after: int) -> tuple[Job | None, list[JobEvent]]:
    """Return the job, then its events after `after`, read in that order.

    The job first: when it is over, every event of it was committed before (each status change
    is written with its event, in one transaction, and a job's stages are stored one after the
    other), so the events read next are all there are and the stream can end. Read the other
    way round, a job that ended between the two reads would end the stream without its last
    events.
    """
    job = store.jobs.get(job_id)
    return job, store.jobs.events(job_id, after=after)


def check_content(store: Store, check_id: str) -> dict[str, Any]:
    """Return a stored check as JSON, with the notes its request left (none: [])."""
    content = check_to_json(store.checks.get(check_id))  # NotFoundError → 404
    job = store.jobs.for_check(check_id)
    content["notes"] = [str(n) for n in (job.payload.get("notes") or ())] if job else []
    return content


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
