"""The middleware in front of every route: the session, who may use the API, security headers.

Dashboard routes check roles and CSRF themselves (`_deps`); this middleware guards what
`bots/api/routes.py` serves without knowing about users:
- writes under /api/ (POST, ...): an API key, or a signed-in reviewer or admin whose request
  carries the CSRF header; 401 otherwise (403 when only the CSRF token is missing);
- reads under /api/: an API key, a signed-in user, or `public_checks`;
- the report pages /checks/{id}: public when `public_checks` or a public base URL is set (replies
  link there), else for signed-in users;
- /metrics: `Access.metrics_ok` (FACTBOT_METRICS__PUBLIC, the metrics token or an API key as a
  bearer, a signed-in admin; the open mode only while no metrics token is set); 401 otherwise;
- in the open mode (no user, no API key) everything is allowed, as before the dashboard existed.
Platform routes (Slack's events, OAuth) and health checks pass untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import quote

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse, RedirectResponse

from bots.dashboard._access import COOKIE, CSRF_HEADER, Access

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; object-src 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}
WRITES = ("POST", "PUT", "PATCH", "DELETE")


def install_guard(api: FastAPI, access: Access) -> None:
    """Add the session and access middleware to the API."""

    @api.middleware("http")
    async def guard(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        session = access.load(request)
        fresh = session is None
        if session is None:
            session = access.new_session()
        request.state.session = session
        request.state.cookie = fresh  # handlers that sign in or out set it and a new session
        refused = None
        if _guarded(request):  # these ask the users table: in a storage thread, off the loop
            refused = await access.app.store.call(_refusal, request, access)
        response = refused if refused is not None else await call_next(request)
        for name, value in HEADERS.items():
            response.headers.setdefault(name, value)
        if request.state.cookie:
            response.set_cookie(
                COOKIE,
                access.cookie_value(request.state.session),
                max_age=access.max_age,
                httponly=True,
                samesite="lax",
                secure=access.secure,
                path="/",
            )
        return response


def _guarded(request: Request) -> bool:
    """Return whether the middleware decides on this request (the rest pass untouched)."""
    path = request.url.path
    report = path.startswith("/checks/") and request.method == "GET"
    return path == "/metrics" or path.startswith("/api/") or report


def _refusal(request: Request, access: Access) -> Response | None:
    """Return the response that refuses this request, or None when it may go on."""
    path = request.url.path
    if path == "/metrics":
        if access.metrics_ok(request):
            return None
        return _json(401, "send the metrics token (Authorization: Bearer) or sign in as an admin")
    api = path.startswith("/api/")
    report = path.startswith("/checks/") and request.method == "GET"
    if not (api or report) or access.open_mode():
        return None
    if access.api_key_ok(request):
        return None
    principal = access.principal(request.state.session)
    if api and request.method in WRITES:
        if principal is None or not principal.may("reviewer"):
            return _json(401, "sign in as a reviewer or send an API key (Authorization: Bearer)")
        if not access.csrf_ok(request.state.session, request.headers.get(CSRF_HEADER)):
            return _json(403, "the X-CSRF-Token header is missing or wrong")
        return None
    if principal is not None or access.checks_public():
        return None
    if report and access.app.settings.replies.public_base_url:
        return None
    if api:
        return _json(401, "checks are not public: sign in or send an API key")
    return RedirectResponse(f"/signin?next={quote(path)}", status_code=303)


def _json(status: int, detail: str) -> JSONResponse:
    error = "Unauthorized" if status == 401 else "Forbidden"
    return JSONResponse(status_code=status, content={"error": error, "detail": detail})
