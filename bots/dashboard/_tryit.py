"""Try it: paste a text, a link or images, watch the check run, then read it.

Images are uploaded as the API's are (`bots.api.forms`, `bots.runtime.checking.uploads`): each
becomes one of the post's image refs, read by the image stage, whose report (and the notes on files
that never reached it) the check page shows.

The form goes in the one way every request does (`bots.runtime.checking.requests.CheckRequests`): a
stored check that answers the same post (reuse) is shown at once, else a post and a check job
are stored. The progress page
lists the job's stages as stored; with JavaScript on, app.js follows the API's server-sent
events (/api/checks/{job}/events) and opens the check when the job ends; with it off, the page
refreshes itself every two seconds until then.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.datastructures import FormData

from bots.api.forms import bounded_form, form_cap, read_upload
from bots.api.jobview import job_view
from bots.app.deps import RequestsDep, StoreDep
from bots.dashboard._access import Access, Principal
from bots.dashboard._deps import needs
from bots.dashboard._views import Views
from bots.runtime.checking.requests import RequestToCheck
from bots.runtime.checking.uploads import gather_images
from pipeline.errors import FactbotError, InputError, NotFoundError
from pipeline.inputs.posts import ensure_checkable, page_request, post_from_text
from pipeline.records.domain import Post


def _field(form: FormData, name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


def router(access: Access, views: Views) -> APIRouter:
    """Return the try-it routes."""
    routes = APIRouter()
    as_reviewer = Depends(needs(access, "reviewer"))
    as_viewer = Depends(needs(access, "viewer"))
    app = access.app

    def form_limits() -> dict[str, Any]:
        images = app.settings.images
        return {"max_images": images.max_images, "max_mb": f"{images.max_bytes / 1e6:g}"}

    @routes.get("/try", response_class=HTMLResponse)
    async def try_page(request: Request, me: Principal = as_viewer) -> HTMLResponse:
        """Try it: a form to check a text, a link or images."""
        return views.render(request, "try.html", error=None, text="", url="", **form_limits())

    async def read_form(request: Request) -> FormData:
        """The form, read within bounds before the CSRF check reads its token from it."""
        limits = app.settings.images
        return await bounded_form(request, cap=form_cap(limits), max_files=limits.max_images * 4)

    read_first = Depends(read_form)  # before as_reviewer, whose CSRF check reads the form

    @routes.post("/try", response_class=HTMLResponse)
    async def try_submit(
        request: Request,
        requests: RequestsDep,
        form: FormData = read_first,
        me: Principal = as_reviewer,
    ) -> Response:
        """Submit a Try-it check (the same way in as the API); shows its progress page."""
        text = _field(form, "text")
        url = _field(form, "url")
        limits = app.settings.images
        uploads = [
            await read_upload(f, max_bytes=limits.max_bytes)
            for f in form.getlist("image")
            if not isinstance(f, str) and f.filename
        ]
        given = gather_images(uploads, [], max_images=limits.max_images, max_bytes=limits.max_bytes)
        try:
            if not given.refs and not text.strip() and not url.strip() and given.notes:
                raise InputError(" ".join(given.notes))
            post = _post(text.strip(), url.strip(), given.refs)
            ensure_checkable(post)
        except FactbotError as exc:
            return views.render(
                request, "try.html", code=422, error=str(exc), text=text, url=url, **form_limits()
            )
        requested = await requests.submit(RequestToCheck(post, origin="web", notes=given.notes))
        if requested.reused is not None:
            return RedirectResponse(f"/check/{requested.check_id}?reused=1", status_code=303)
        assert requested.check_job is not None  # not reused: a check job is stored
        return RedirectResponse(f"/try/{requested.check_job.id}", status_code=303)

    def _post(text: str, url: str, images: tuple[str, ...]) -> Post:
        max_chars = app.settings.max_post_chars
        if url and not text and not images:  # the worker fetches the page
            return page_request(url)
        if url:
            text = f"{text}\n{url}".strip()
        return post_from_text(text, max_chars=max_chars, platform="web", image_refs=images)

    @routes.get("/try/{job_id}", response_class=HTMLResponse)
    async def progress(
        request: Request, job_id: str, store: StoreDep, me: Principal = as_viewer
    ) -> Response:
        """A Try-it check's progress, then its result."""
        job = await store.call(store.jobs.get, job_id)
        if job is None:
            raise NotFoundError(f"no job {job_id!r}")
        if job.status == "done" and job.result_id:
            return RedirectResponse(f"/check/{job.result_id}", status_code=303)
        view = await store.call(job_view, store, job)
        return views.render(request, "progress.html", job=view)

    return routes
