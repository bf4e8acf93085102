"""Wiring: the middleware, static files, error pages and every page's router."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from bots.app.deps import StoreDep
from bots.app.root import App
from bots.dashboard import _checks, _factchecks, _ops, _overview, _review, _signin, _tryit
from bots.dashboard._access import Access
from bots.dashboard._deps import ForbiddenError, SignInRequiredError, signin_url
from bots.dashboard._guard import install_guard
from bots.dashboard._views import HERE, Views
from bots.dashboard.report import report_html


def mount(api: FastAPI, app: App) -> None:
    """Add the dashboard to api."""
    access = Access(app)
    views = Views(access)
    install_guard(api, access)
    api.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    @api.get("/checks/{check_id}", response_class=HTMLResponse)
    async def report(check_id: str, store: StoreDep) -> HTMLResponse:
        """The full report of a check (what platform replies link to)."""
        check = await store.call(
            store.checks.get, check_id
        )  # NotFoundError → 404 (the API's error handler)
        return HTMLResponse(report_html(check))

    if not app.settings.dashboard.enabled:
        return

    @api.exception_handler(SignInRequiredError)
    async def _to_signin(request: Request, exc: SignInRequiredError) -> Response:
        if request.headers.get("hx-request"):
            return Response(status_code=401, headers={"HX-Redirect": signin_url(exc.next_path)})
        return RedirectResponse(signin_url(exc.next_path), status_code=303)

    @api.exception_handler(ForbiddenError)
    async def _forbidden(request: Request, exc: ForbiddenError) -> Response:
        if request.url.path.endswith(".json"):
            return JSONResponse(
                status_code=403, content={"error": "Forbidden", "detail": exc.reason}
            )
        await access.resolve(request)
        return views.render(
            request, "error.html", code=403, title="Not allowed", message=exc.reason
        )

    for module in (_signin, _checks, _tryit, _ops, _factchecks, _overview, _review):
        api.include_router(module.router(access, views))
