"""POST /api/checks goes in the one way (`CheckRequests.submit`): its kind stored, a replay once.

Real HTTP on loopback with no worker, so what the request stored is read as it was left.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bots.app.root import App
from bots.settings import Settings
from tests.bots.api.test_api import serving


@pytest.fixture
def served(tmp_path: Path, embedder: Any) -> Iterator[tuple[App, str]]:
    app = App(Settings(data_dir=tmp_path / "data"), embedder=embedder)
    with serving(app, workers=0) as base:
        yield app, base
    app.close()


def _post_kind(app: App, job_id: str) -> str:
    job = app.store.jobs.get(job_id)
    assert job is not None and job.post_id is not None
    post = app.store.jobs.post(job.post_id)
    assert post is not None
    return post.kind


def test_each_api_request_is_stored_with_its_kind(served: tuple[App, str]) -> None:
    app, base = served
    bodies = {
        "text": {"text": "The Great Wall of China is visible from the Moon."},
        "page": {"url": "https://news.example/story"},
        "image": {"images": ["https://news.example/photo.png"]},
    }
    for kind, body in bodies.items():
        answer = httpx.post(f"{base}/api/checks", json=body, timeout=30)
        assert answer.status_code == 202, answer.text
        assert _post_kind(app, answer.json()["id"]) == kind


def test_a_replayed_idempotency_key_is_stored_once(served: tuple[App, str]) -> None:
    app, base = served
    headers = {"Idempotency-Key": "order-66"}
    body = {"text": "Lightning never strikes the same place twice."}
    first = httpx.post(f"{base}/api/checks", json=body, headers=headers, timeout=30)
    again = httpx.post(f"{base}/api/checks", json=body, headers=headers, timeout=30)
    assert first.status_code == again.status_code == 202
    assert first.json()["id"] == again.json()["id"]
    assert len(app.store.jobs.list(limit=10)) == 1
    assert [r["kind"] for r in app.store.db.query("SELECT kind FROM posts")] == ["text"]


def test_a_page_is_fetched_by_the_worker_and_its_error_answers_only_with_wait(
    tmp_path: Path, embedder: Any
) -> None:
    app = App(Settings(data_dir=tmp_path / "data"), embedder=embedder)
    refused = {"url": "http://127.0.0.1:9/story"}  # loopback: the fetch policy refuses it
    try:
        with serving(app, workers=1) as base:
            at_once = httpx.post(f"{base}/api/checks", json=refused, timeout=30)
            assert at_once.status_code == 202, at_once.text  # stored, not fetched here
            waited = httpx.post(f"{base}/api/checks?wait=30&fresh=true", json=refused, timeout=60)
            assert waited.status_code == 422, waited.text  # the job died on the refused page
            assert waited.json()["status"] == "dead"
            assert "UnsafeURLError" in str(waited.json()["error"])
    finally:
        app.close()
