"""The web dashboard: checks, try it, review, jobs, sources, fact-checks and the overview.

Server-rendered pages (FastAPI + Jinja2) that htmx only enhances: every page reads with
JavaScript off. htmx 2.0 and Chart.js 4 are shipped in `static/` with their licences (no CDN).
`mount_dashboard` is the one door: `bots.web.create_web` calls it; the implementation modules are
private and imported inside it. See `_access` for sessions, roles and the open mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI

    from bots.app.root import App


def mount_dashboard(api: FastAPI, app: App) -> None:
    """Add the dashboard's routes, static files and access middleware to the API."""
    from bots.dashboard._mount import mount

    mount(api, app)


def render_template(name: str, **context: Any) -> str:
    """Return one of the dashboard's templates rendered (autoescaped) outside a request."""
    from bots.dashboard._views import ENV

    return ENV.get_template(name).render(**context)
