"""The dashboard and API as replicas behind a load balancer, in the scaled-out mode.

Two Apps serve the real API and dashboard (`create_web`, as under `factbot serve`), each a node
with its own data folder, sharing one PostgreSQL database on the session's real server. A
round-robin balancer sends each request to the next replica with the browser's cookies, so a
session made on one replica is used on the other. Nothing here configures a shared secret: the
session key the first replica makes is kept in the shared database.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from http.cookiejar import Cookie
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from bots.app.root import App
from bots.settings import DashboardSettings, Settings
from bots.web import create_web
from tests.bots.dashboard.conftest import PASSWORD, csrf_of
from tests.bots.dashboard.factory import make_check, store_checks
from tests.support.postgres import PostgresServer


class Balancer:
    """Round-robin over the replicas' clients, carrying one browser's cookies between them."""

    def __init__(self, clients: list[TestClient]) -> None:
        self.clients = clients
        self.cookies: list[Cookie] = []
        self.served: list[int] = []  # which replica answered each request

    def request(self, method: str, url: str, **options: Any) -> Any:
        """Send the request to the next replica; keep the cookies it sets."""
        n = len(self.served) % len(self.clients)
        client = self.clients[n]
        client.cookies.clear()
        for cookie in self.cookies:
            client.cookies.jar.set_cookie(cookie)
        response = client.request(method, url, **options)
        self.cookies = list(client.cookies.jar)
        self.served.append(n)
        return response

    def get(self, url: str, **options: Any) -> Any:
        """GET on the next replica."""
        return self.request("GET", url, **options)

    def post(self, url: str, **options: Any) -> Any:
        """POST on the next replica."""
        return self.request("POST", url, **options)


@pytest.fixture
def replicas(postgres_server: PostgresServer, tmp_path: Path, embedder: Any) -> Iterator[list[App]]:
    """Two nodes (own data folders) on one migrated PostgreSQL database, with three users."""
    url = postgres_server.migrated_database()
    dashboard = DashboardSettings(signin_burst=3, signin_per_minute=1)
    apps = [
        App(
            Settings(data_dir=tmp_path / f"node{n}", database_url=url, dashboard=dashboard),
            embedder=embedder,
        )
        for n in range(2)
    ]
    for name, role in (("vera", "viewer"), ("rita", "reviewer"), ("ada", "admin")):
        apps[0].store.users.add(name, role, PASSWORD)  # type: ignore[arg-type]
    yield apps
    for app in apps:
        app.close()


@pytest.fixture
def balancer(replicas: list[App]) -> Iterator[Balancer]:
    """One browser behind the balancer; workers off, as the tests drive storage directly."""
    clients = [TestClient(create_web(app, workers=0)) for app in replicas]
    for client in clients:
        client.__enter__()
    try:
        yield Balancer(clients)
    finally:
        for client in clients:
            client.__exit__(None, None, None)


def _ids(html: str) -> list[str]:
    return re.findall(r'href="/check/([0-9a-f]+)"', html)


def _sign_in(lb: Balancer, name: str, password: str = PASSWORD) -> Any:
    """The sign-in form from one replica, posted to the other."""
    page = lb.get("/signin")
    return lb.post(
        "/signin",
        data={"name": name, "password": password, "csrf": csrf_of(page.text), "next": "/"},
        follow_redirects=False,
    )


def test_a_session_made_on_one_replica_holds_on_the_other_and_sees_the_same_checks(
    replicas: list[App], balancer: Balancer
) -> None:
    first, second = replicas
    [moon] = store_checks(first.store, [make_check(text="The moon landing was staged.")])
    [vaccine] = store_checks(second.store, [make_check(text="Vaccines contain microchips.")])
    assert _sign_in(balancer, "vera").status_code == 303
    pages = [balancer.get("/") for _ in range(2)]  # one from each replica
    assert balancer.served[-2:] == [0, 1]
    for page in pages:
        assert page.status_code == 200 and set(_ids(page.text)) == {moon.id, vaccine.id}
    for _ in range(2):  # PostgreSQL's full-text search, from either node
        assert _ids(balancer.get("/?q=microchip").text) == [vaccine.id]
        assert _ids(balancer.get("/?q=landing").text) == [moon.id]
        assert balancer.get(f"/check/{moon.id}").status_code == 200
    # A user disabled through one node is signed out on every node at once.
    second.store.users.disable("vera")
    for _ in range(2):
        assert balancer.get("/", follow_redirects=False).status_code == 303


def test_a_form_from_one_replica_is_accepted_by_the_other_and_its_effect_is_shared(
    replicas: list[App], balancer: Balancer
) -> None:
    first, second = replicas
    job, _ = first.store.jobs.enqueue("check", {"check_id": "c1"}, max_attempts=1)
    claimed = first.store.jobs.claim("w1", lease=30)
    assert claimed is not None
    first.store.jobs.fail(claimed, "w1", "FetchError: the page is gone", permanent=True)
    assert _sign_in(balancer, "ada").status_code == 303
    page = balancer.get("/jobs?status=dead")  # the CSRF token comes from this replica ...
    assert "FetchError: the page is gone" in page.text
    token = csrf_of(page.text)
    retried = balancer.post(  # ... and the form goes to the other
        f"/jobs/{job.id}/retry", data={"csrf": token}, headers={"HX-Request": "true"}
    )
    assert balancer.served[-2] != balancer.served[-1]
    assert retried.status_code == 200 and "queued again" in retried.text
    queued = second.store.jobs.get(job.id)
    assert queued is not None and queued.status == "queued" and queued.attempts == 0
    forged = balancer.post(
        f"/jobs/{job.id}/retry", data={"csrf": "0" * 64}, headers={"HX-Request": "true"}
    )
    assert forged.status_code == 403


def test_sign_in_attempts_are_limited_across_replicas(balancer: Balancer) -> None:
    # The buckets are in the shared database: alternating replicas does not buy attempts.
    codes = [_sign_in(balancer, "ada", "not it at all").status_code for _ in range(4)]
    assert codes == [401, 401, 401, 429]
    assert set(balancer.served) == {0, 1}
    assert _sign_in(balancer, "ada").status_code == 429  # the right password waits too
