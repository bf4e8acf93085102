"""The HTTP API: submit a check, read a stored check, health.

POST /api/checks        {"text": "..."} or {"url": "..."}, optional "before" (ISO date)
GET  /api/checks/{id}
GET  /healthz
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, model_validator

from bots.app.root import App
from bots.render import check_to_json
from pipeline.errors import (
    ExtractionError,
    FactbotError,
    FetchError,
    InputError,
    NotFoundError,
    UnsafeURLError,
)
from pipeline.posts import post_from_text, post_from_url


class CheckRequest(BaseModel):
    """A request to check a text or the page at a URL."""

    text: str | None = Field(default=None, description="the post text to check")
    url: str | None = Field(default=None, description="a page to fetch and check")
    before: datetime | None = Field(
        default=None, description="only use evidence published before this time"
    )

    @model_validator(mode="after")
    def _one_input(self) -> CheckRequest:
        if (self.text is None) == (self.url is None):
            raise ValueError("give exactly one of 'text' or 'url'")
        return self


def _status(exc: FactbotError) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, (UnsafeURLError, InputError)):
        return 422
    if isinstance(exc, (FetchError, ExtractionError)):
        return 502
    return 500


def create_api(app: App) -> FastAPI:
    """Return the FastAPI application bound to the composition root."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            # The shared fetcher lives in the server's event loop: close it before the loop ends.
            await app.close_fetcher()

    api = FastAPI(title="factbot", version="0.1.0", lifespan=lifespan)

    @api.exception_handler(FactbotError)
    async def _factbot_error(request: Request, exc: FactbotError) -> JSONResponse:
        return JSONResponse(
            status_code=_status(exc), content={"error": type(exc).__name__, "detail": str(exc)}
        )

    @api.get("/healthz")
    async def healthz() -> dict[str, Any]:
        stats = app.store.documents.stats()
        return {
            "status": "ok",
            "documents": stats.documents,
            "passages": stats.passages,
            "sources": app.store.sources.count(),
        }

    @api.post("/api/checks", status_code=201)
    async def create_check(body: CheckRequest) -> dict[str, Any]:
        max_chars = app.settings.max_post_chars
        if body.url is not None:
            fetcher = await app.fetcher()
            post = await post_from_url(body.url, fetcher=fetcher, max_chars=max_chars)
        else:
            post = post_from_text(body.text or "", max_chars=max_chars, platform="api")
        check = await app.check(post, before=body.before)
        return check_to_json(check)

    @api.get("/api/checks/{check_id}")
    async def get_check(check_id: str) -> dict[str, Any]:
        return check_to_json(app.store.checks.get(check_id))

    return api
