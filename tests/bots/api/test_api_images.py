"""POST /api/checks with images, over real HTTP: JSON image URLs and multipart uploads."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from bots.app.root import App
from bots.runtime.platform.privacy import redact_expired
from bots.settings import FetchSettings, ImageSettings, Settings
from tests.bots.api.test_api import serving
from tests.pipeline.image.uploads import CLAIM, HTML, PDF, SVG, claim_png, truncated_png
from tests.support.clock import FakeClock
from tests.support.httpserver import serve

MAX_BYTES = 200_000


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def app(
    tmp_path: Path, embedder: Any, clock: FakeClock, corpus_in: Callable[[Path], Path]
) -> Iterator[App]:
    settings = Settings(
        data_dir=corpus_in(tmp_path / "data"),
        fetch=FetchSettings(allowed_networks=("127.0.0.1/32",)),
        images=ImageSettings(max_bytes=MAX_BYTES),
    )
    made = App(settings, embedder=embedder, clock=clock)
    yield made
    made.close()


def test_a_multipart_upload_is_checked_with_its_image_report(app: App, clock: FakeClock) -> None:
    files = [
        ("image", ("shot.png", claim_png(), "image/png")),
        ("image", ("photo.jpg", PDF, "image/jpeg")),  # disguised
        ("image", ("page.jpg", HTML, "image/jpeg")),  # disguised
        ("image", ("broken.png", truncated_png(), "image/png")),
        ("image", ("big.jpg", os.urandom(MAX_BYTES + 1), "image/jpeg")),
    ]
    with serving(app, workers=1) as base:
        answer = httpx.post(
            f"{base}/api/checks?wait=120", data={"text": "Is this true?"}, files=files, timeout=120
        )
        assert answer.status_code == 201, answer.text
        data = answer.json()
        (read,) = data["images"]["read"]
        assert read["name"] == "shot.png" and CLAIM in " ".join(read["text"].split())
        assert data["verdict"] == "false"
        reasons = {f["name"]: f["reason"] for f in data["images"]["not_read"]}
        assert reasons == {
            "photo.jpg": "the file is a PDF document, not an image",
            "page.jpg": "the link is a web page, not an image",
            "broken.png": reasons["broken.png"],
        }
        assert "truncated or corrupt" in reasons["broken.png"]
        assert data["notes"] == [
            f"The image 'big.jpg' was not read: it is {MAX_BYTES + 1:,} bytes, larger than the "
            f"{MAX_BYTES:,} bytes factbot reads (FACTBOT_IMAGES__MAX_BYTES)."
        ]
        assert httpx.get(f"{base}/api/checks/{data['id']}").json() == data
        report = httpx.get(f"{base}/checks/{data['id']}").text
        assert "the file is a PDF document, not an image" in report
    # The bytes are in the post (not in the stored report) until retention removes them.
    stored = app.store.checks.get(data["id"])
    assert sum(r.startswith("data:image/png;name=shot.png;base64,") for r in stored.post.image_refs)
    assert all(len(f.source.ref) <= 64 for f in stored.images.failures)
    redact_expired(app.store, app.settings.privacy)
    assert len(app.store.checks.get(data["id"]).post.image_refs) == 4
    clock.advance(timedelta(days=app.settings.privacy.retention_days + 1).total_seconds())
    redact_expired(app.store, app.settings.privacy)
    kept = app.store.checks.get(data["id"])
    assert kept.post.image_refs == () and kept.post.text == "Is this true?"
    assert kept.images.descriptions[0].ocr is not None  # what was read stays


def test_image_urls_in_json_are_fetched_by_the_worker(app: App) -> None:
    with serve() as site, serving(app, workers=1) as base:
        shot = site.add("/shot.png", claim_png(), "image/png")
        svg = site.add("/logo.jpg", SVG, "image/jpeg")
        gone = "http://127.0.0.1:1/gone.png"  # nothing listens there
        answer = httpx.post(
            f"{base}/api/checks?wait=120",
            json={"images": [shot, svg, gone, "file:///etc/passwd"]},
            timeout=120,
        )
        assert answer.status_code == 201, answer.text
        data = answer.json()
    (read,) = data["images"]["read"]
    assert read["url"] == shot and read["name"] is None
    reasons = {f["url"]: f["reason"] for f in data["images"]["not_read"]}
    assert reasons[svg].startswith("SVG is a vector format")
    assert reasons.get(gone)  # why it could not be fetched
    assert data["notes"] == [
        "The image 'file:///etc/passwd' was not read: only http(s) image links are fetched."
    ]


def test_bad_image_requests_are_refused_clearly(app: App) -> None:
    with serving(app, workers=1) as base:
        only_bad = httpx.post(
            f"{base}/api/checks?wait=60",
            files=[("image", ("photo.jpg", PDF, "image/jpeg"))],
            timeout=60,
        )
        assert only_bad.status_code == 422
        assert "the file is a PDF document, not an image" in only_bad.json()["error"]
        too_big = httpx.post(
            f"{base}/api/checks",
            data={"text": "x"},
            files=[("image", ("big.jpg", os.urandom(5 * MAX_BYTES + 1_000_001), "image/jpeg"))],
            timeout=60,
        )
        assert too_big.status_code == 413 and "the limit is" in too_big.json()["detail"]
        nothing = httpx.post(
            f"{base}/api/checks", files=[("image", ("big.jpg", b"\0" * (MAX_BYTES + 1)))]
        )
        assert nothing.status_code == 422 and "nothing to check" in nothing.json()["detail"]
        unknown = httpx.post(
            f"{base}/api/checks", files={"text": (None, "x"), "colour": (None, "red")}
        )
        assert unknown.status_code == 422
        for body in ({}, {"text": "a", "url": "https://example.org"}, {"images": "nope"}):
            refused = httpx.post(f"{base}/api/checks", json=body)
            assert refused.status_code == 422 and refused.json()["detail"]
