"""The HTTP API over real HTTP on loopback (uvicorn on port 0)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from bots.api import create_api
from bots.app import App
from bots.settings import Settings
from pipeline.ingest import Ingester
from tests.conftest import FIXTURES


@pytest.fixture
def server(tmp_path: Path, embedder) -> Iterator[str]:  # type: ignore[no-untyped-def]
    app = App(Settings(data_dir=tmp_path / "data"))
    app.__dict__["embedder"] = embedder  # share the session's loaded model
    asyncio.run(Ingester(app.store.documents, embedder).ingest([str(FIXTURES / "corpus.jsonl")]))
    config = uvicorn.Config(create_api(app), host="127.0.0.1", port=0, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    port = srv.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=10)
    app.close()


def test_health(server: str) -> None:
    body = httpx.get(f"{server}/healthz").json()
    assert body["status"] == "ok" and body["documents"] == 7 and body["sources"] > 0


def test_create_and_read_a_check(server: str) -> None:
    created = httpx.post(
        f"{server}/api/checks", json={"text": "5G networks spread the coronavirus."}, timeout=60
    )
    assert created.status_code == 201, created.text
    data = created.json()
    assert data["verdict"] == "false"
    fetched = httpx.get(f"{server}/api/checks/{data['id']}")
    assert fetched.status_code == 200
    assert fetched.json() == data


@pytest.mark.parametrize(
    ("payload", "status"),
    [
        ({}, 422),
        ({"text": "a", "url": "https://example.org"}, 422),
        ({"text": ""}, 422),
        ({"text": "🔥🔥"}, 422),
        ({"text": "x" * 1_048_576}, 422),
        ({"url": "http://127.0.0.1:9/secret"}, 422),
        ({"url": "gopher://example.org"}, 422),
    ],
)
def test_bad_requests_are_refused_clearly(
    server: str, payload: dict[str, str], status: int
) -> None:
    response = httpx.post(f"{server}/api/checks", json=payload, timeout=60)
    assert response.status_code == status
    assert response.json()


def test_unknown_check_is_404(server: str) -> None:
    assert httpx.get(f"{server}/api/checks/nope").status_code == 404
