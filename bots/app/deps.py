"""What the routes use, as FastAPI dependencies: each route names its parts, never the App.

`install(api, app)` puts the process's parts on `api.state` once; a route asks for them by type
(`store: StoreDep`), so it says what it reads and a test may swap one part
(`api.dependency_overrides[store] = ...`) without building the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, FastAPI, Request

from bots.app.root import App
from bots.runtime.checking.requests import CheckRequests
from bots.settings import Settings
from storage import Store


@dataclass(frozen=True)
class Parts:
    """The parts of one process that routes may use."""

    app: App  # held here only: routes get the parts below, through the dependencies

    @property
    def store(self) -> Store:
        """Return the database (opened on first use)."""
        return self.app.store


def install(api: FastAPI, app: App) -> None:
    """Make app's parts available to the routes of api."""
    api.state.parts = Parts(app)


def _parts(request: Request) -> Parts:
    parts: Parts = request.app.state.parts
    return parts


def settings(request: Request) -> Settings:
    """Return the settings of the process."""
    return _parts(request).app.settings


def store(request: Request) -> Store:
    """Return the database."""
    return _parts(request).store


def requests(request: Request) -> CheckRequests:
    """Return the one way in for a request to check a post."""
    return _parts(request).app.requests


SettingsDep = Annotated[Settings, Depends(settings)]
StoreDep = Annotated[Store, Depends(store)]
RequestsDep = Annotated[CheckRequests, Depends(requests)]
