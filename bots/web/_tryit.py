"""Try it: paste a text, a link or an image, watch the check run, then read it.

The form stores a post and a check job exactly as the API does (`submit_check`), unless a
stored check already answers the same post (reuse), which is shown at once. The progress page
lists the job's stages as stored; with JavaScript on, app.js follows the API's server-sent
events (/api/checks/{job}/events) and opens the check when the job ends; with it off, the page
refreshes itself every two seconds until then.
"""

from __future__ import annotations

import base64
import dataclasses
from typing import Annotated

from fastapi import APIRouter, Depends, File, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from bots.runtime.checks import submit_check
from bots.web._access import Access, Principal
from bots.web._deps import needs
from bots.web._jobview import job_view
from bots.web._views import Views
from pipeline.errors import FactbotError, InputError, NotFoundError
from pipeline.posts import ensure_checkable, post_from_text, post_from_url
from pipeline.records import Post, new_id

IMAGE_TYPES = ("image/jpeg", "image/png", "image/webp", "image/gif", "image/heic")


def router(access: Access, views: Views) -> APIRouter:
    """Return the try-it routes."""
    routes = APIRouter()
    as_reviewer = Depends(needs(access, "reviewer"))
    as_viewer = Depends(needs(access, "viewer"))
    app = access.app

    @routes.get("/try", response_class=HTMLResponse)
    async def try_page(request: Request, me: Principal = as_viewer) -> HTMLResponse:
        return views.render(request, "try.html", error=None, text="", url="")

    @routes.post("/try", response_class=HTMLResponse)
    async def try_submit(
        request: Request,
        text: str = Form(default=""),
        url: str = Form(default=""),
        image: Annotated[UploadFile | None, File()] = None,
        me: Principal = as_reviewer,
    ) -> Response:
        try:
            post = await _post(text.strip(), url.strip(), image)
            ensure_checkable(post)
        except FactbotError as exc:
            return views.render(request, "try.html", code=422, error=str(exc), text=text, url=url)
        hit = await app.reuse.find(post)
        if hit is not None:
            try:
                app.store.checks.get(hit.check_id)
                return RedirectResponse(f"/check/{hit.check_id}?reused=1", status_code=303)
            except NotFoundError:
                pass
        submission = submit_check(app.store, post, max_attempts=app.settings.jobs.max_attempts)
        return RedirectResponse(f"/try/{submission.job.id}", status_code=303)

    async def _post(text: str, url: str, image: UploadFile | None) -> Post:
        max_chars = app.settings.max_post_chars
        picture = await _image(image)
        if url and not text and picture is None:
            fetcher = await app.fetcher()
            return await post_from_url(url, fetcher=fetcher, max_chars=max_chars, cpu=app.cpu)
        if url:
            text = f"{text}\n{url}".strip()
        if picture is None:
            return post_from_text(text, max_chars=max_chars, platform="web")
        identifier = new_id()
        base = (
            post_from_text(text, max_chars=max_chars, platform="web")
            if text
            else Post(id=identifier, platform="web", platform_id=identifier, text="")
        )
        return dataclasses.replace(base, image_refs=(picture,))

    async def _image(image: UploadFile | None) -> str | None:
        if image is None or not image.filename:
            return None
        limit = app.settings.images.max_bytes
        data = await image.read(limit + 1)
        if not data:
            return None
        if len(data) > limit:
            raise InputError(
                f"the image is larger than {limit:,} bytes (FACTBOT_IMAGES__MAX_BYTES)"
            )
        kind = image.content_type if image.content_type in IMAGE_TYPES else "image/jpeg"
        return f"data:{kind};base64,{base64.b64encode(data).decode()}"

    @routes.get("/try/{job_id}", response_class=HTMLResponse)
    async def progress(request: Request, job_id: str, me: Principal = as_viewer) -> Response:
        job = app.store.jobs.get(job_id)
        if job is None:
            raise NotFoundError(f"no job {job_id!r}")
        if job.status == "done" and job.result_id:
            return RedirectResponse(f"/check/{job.result_id}", status_code=303)
        return views.render(request, "progress.html", job=job_view(app.store, job))

    return routes
