"""The review queue page: waits for `bots/runtime/review.py` (the review helper's branch)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from bots.web._access import Access, Principal
from bots.web._deps import needs
from bots.web._views import Views


def router(access: Access, views: Views) -> APIRouter:
    """Return the review routes."""
    routes = APIRouter()
    as_viewer = Depends(needs(access, "viewer"))

    @routes.get("/review", response_class=HTMLResponse)
    async def review(request: Request, me: Principal = as_viewer) -> HTMLResponse:
        return views.render(
            request,
            "error.html",
            title="Review queue",
            message="The review queue is not part of this build yet.",
        )

    return routes
