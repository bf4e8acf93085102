"""Dashboard fixtures: an App over a fresh database, and TestClients signed in by role."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from bots.app.root import App
from bots.settings import DashboardSettings, Settings
from bots.web import create_web

PASSWORD = "correct horse battery"


def csrf_of(html: str) -> str:
    """Return the CSRF token a page carries in its forms."""
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found, "the page has no CSRF field"
    return found.group(1)


def sign_in(client: TestClient, name: str, password: str = PASSWORD) -> None:
    """Sign client in through the real sign-in form."""
    page = client.get("/signin")
    response = client.post(
        "/signin",
        data={"name": name, "password": password, "csrf": csrf_of(page.text), "next": "/"},
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text


@pytest.fixture
def make_app(data_dir: Path, embedder) -> Iterator[object]:  # type: ignore[no-untyped-def]
    """Return a factory of Apps over one fresh data folder (dashboard settings as given)."""
    apps: list[App] = []

    def make(**dashboard: object) -> App:
        app = App(
            Settings(
                data_dir=data_dir,
                dashboard=DashboardSettings.model_validate(dashboard),
            ),
            embedder=embedder,  # the session's model, loaded once
        )
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.close()


@pytest.fixture
def app(make_app) -> App:  # type: ignore[no-untyped-def]
    """An App with three users (one per role): the open mode is over."""
    made: App = make_app()
    for name, role in (("vera", "viewer"), ("rita", "reviewer"), ("ada", "admin")):
        made.store.users.add(name, role, PASSWORD)  # type: ignore[arg-type]
    return made


@pytest.fixture
def client(app: App) -> Iterator[TestClient]:
    """A TestClient over the API and dashboard, workers off, nobody signed in."""
    with TestClient(create_web(app, workers=0)) as test_client:
        yield test_client
