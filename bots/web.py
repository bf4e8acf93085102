"""The web server: the JSON API with the dashboard mounted on it, one FastAPI application.

The API (`bots.api`) never imports the dashboard; this module puts the two together. The
dashboard adds the pages under `/`, the public report of a check (GET /checks/{id}), the static
files and the access guard that decides who may call the API (`bots.dashboard._guard`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bots.api.routes import create_api
from bots.dashboard import mount_dashboard

if TYPE_CHECKING:
    from fastapi import FastAPI

    from bots.app.root import App


def create_web(app: App, *, workers: int | None = None, monitor: bool = False) -> FastAPI:
    """Return the API over an App with the dashboard mounted (see `create_api`)."""
    api = create_api(app, workers=workers, monitor=monitor)
    mount_dashboard(api, app)
    return api
