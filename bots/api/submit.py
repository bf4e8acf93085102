"""POST /api/checks: a post to check, as JSON or as a multipart form with image files.

The request goes in the one way every request does (`bots.runtime.checking.requests`): a stored
check that answers it is returned at once (200, `reused`), else a post and a check job are
stored (202 with the job; with ?wait=N, 201 and the check when it is done in time).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from bots.api.forms import bounded_form, form_cap, read_upload
from bots.api.jobs import job_to_json, wait_for_job
from bots.api.results import check_content
from bots.api.statuses import error_kind, status_for
from bots.app.deps import RequestsDep, SettingsDep, StoreDep
from bots.runtime.checking.requests import RequestToCheck
from bots.runtime.checking.reuse import ReuseHit
from bots.runtime.checking.uploads import Upload, gather_images
from bots.settings import Settings
from pipeline.errors import InputError
from pipeline.inputs.leads import clean_leads, with_leads
from pipeline.inputs.posts import ensure_checkable, page_request, post_from_text
from pipeline.records.domain import MAX_LEADS
from storage import Store


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
    leads: list[str] = Field(
        default_factory=list,
        max_length=MAX_LEADS,
        description=(
            "http(s) URLs of pages suggested as evidence: fetched beside the search results "
            "and read like them (a page from a publisher that may not be cited is not read)"
        ),
    )

    @field_validator("leads")
    @classmethod
    def _usable_leads(cls, leads: list[str]) -> list[str]:
        cleaned = clean_leads(leads)
        if cleaned.dropped:
            url, reason = cleaned.dropped[0]
            raise ValueError(f"lead {url[:200]!r} cannot be used: {reason}")
        return list(cleaned.kept)

    @model_validator(mode="after")
    def _one_input(self, info: ValidationInfo) -> CheckRequest:
        if self.text is not None and self.url is not None:
            raise ValueError("give exactly one of 'text' or 'url'")
        uploads = (info.context or {}).get("uploads", 0)
        if self.text is None and self.url is None and not self.images and not uploads:
            raise ValueError("give 'text', 'url' or 'images' (or upload an image)")
        return self


FORM_FIELDS = ("text", "url", "before", "image", "images", "leads")
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
        "leads": {
            "type": "array",
            "items": {"type": "string"},
            "maxItems": MAX_LEADS,
            "description": "http(s) URLs of pages suggested as evidence (repeatable)",
        },
    },
}


def submit_router() -> APIRouter:
    """Return the route that takes check requests."""
    router = APIRouter()

    @router.post(
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
        post = with_leads(post, body.leads)
        ensure_checkable(post)
        requested = await requests.submit(
            RequestToCheck(
                post,
                origin="api",
                key=idempotency_key or None,
                fresh=fresh,
                before=body.before,
                notes=notes,
            )
        )
        if requested.reused is not None:
            return await store.call(_reused, store, requested.reused)
        assert requested.check_job is not None  # not reused: a check job is stored
        job = requested.check_job
        if wait > 0:
            job = await wait_for_job(store, job.id, min(wait, settings.jobs.wait_max))
            if job.status == "done" and job.result_id:
                return JSONResponse(
                    status_code=201,
                    content=await store.call(check_content, store, job.result_id),
                    headers={"Location": f"/api/checks/{job.result_id}"},
                )
            if job.status == "dead":
                return JSONResponse(
                    status_code=status_for(error_kind(job.last_error)),
                    content=await store.call(job_to_json, store, job),
                    headers={"Location": f"/api/jobs/{job.id}"},
                )
        return JSONResponse(
            status_code=202,
            content=await store.call(job_to_json, store, job),
            headers={"Location": f"/api/jobs/{job.id}"},
        )

    return router


async def _json_request(request: Request) -> CheckRequest:
    try:
        return CheckRequest.model_validate_json(await request.body())
    except ValidationError as exc:
        raise RequestValidationError(exc.errors(include_url=False)) from exc


async def _form_request(request: Request, settings: Settings) -> tuple[CheckRequest, list[Upload]]:
    """Read a multipart check request: its fields, and its image files (bounded)."""
    limits = settings.images
    form = await bounded_form(request, cap=form_cap(limits), max_files=limits.max_images * 4)
    try:
        uploads: list[Upload] = []
        fields: dict[str, Any] = {"images": [], "leads": []}
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
            elif key == "leads":
                fields["leads"].append(value)
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
    content = check_content(store, hit.check_id)
    content["reused"] = {
        "reason": hit.reason,
        "similarity": round(hit.similarity, 4),
        "age_seconds": round(hit.age.total_seconds(), 1),
    }
    return JSONResponse(content=content, headers={"Location": f"/api/checks/{hit.check_id}"})
