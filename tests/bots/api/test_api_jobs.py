"""The API over the job runtime: 202 and a job, progress, server-sent events, wait, readiness."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bots.app.root import App
from bots.settings import JobSettings, Settings
from tests.bots.api.test_api import serving

CLAIM = {"text": "5G networks spread the coronavirus."}


def _app(folder: Path, embedder: Any) -> App:
    settings = Settings(data_dir=folder, jobs=JobSettings(poll_seconds=0.05, heartbeat_seconds=5.0))
    return App(settings, embedder=embedder)


@pytest.fixture
def api(tmp_path: Path, embedder: Any, corpus_in: Callable[[Path], Path]) -> Iterator[str]:
    app = _app(corpus_in(tmp_path / "with-workers"), embedder)
    with serving(app) as base:
        yield base
    app.close()


@pytest.fixture
def api_without_workers(
    tmp_path: Path, embedder: Any, corpus_in: Callable[[Path], Path]
) -> Iterator[str]:
    # its own database: no worker ever ran there
    app = _app(corpus_in(tmp_path / "no-workers"), embedder)
    with serving(app, workers=0) as base:
        yield base
    app.close()


def _poll(base: str, job_url: str, *, until: tuple[str, ...] = ("done", "dead")) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        job = httpx.get(base + job_url).json()
        if job["status"] in until:
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.05)


def test_a_check_is_accepted_as_a_job_then_polled_to_its_result(api: str) -> None:
    accepted = httpx.post(f"{api}/api/checks", json=CLAIM, timeout=30)
    assert accepted.status_code == 202, accepted.text
    job = accepted.json()
    assert accepted.headers["location"] == f"/api/jobs/{job['id']}"
    assert job["status"] in ("queued", "running", "done") and job["check_id"]
    done = _poll(api, accepted.headers["location"])
    assert done["status"] == "done" and done["attempts"] == 1 and done["error"] is None
    stages = [s["stage"] for s in done["stages"]]
    assert stages[:5] == ["language", "claims", "queries", "fact-checks", "retrieval"]
    assert stages[-1] == "correction"
    assert all(s["status"] == "done" and s["seconds"] >= 0 for s in done["stages"])
    check = httpx.get(f"{api}/api/checks/{done['check_id']}")
    assert check.status_code == 200 and check.json()["verdict"] == "false"
    assert check.json()["id"] == job["check_id"]  # the id announced at acceptance


def test_wait_answers_with_the_check_when_it_is_ready(api: str) -> None:
    answer = httpx.post(f"{api}/api/checks?wait=60", json=CLAIM, timeout=70)
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert answer.headers["location"] == f"/api/checks/{body['id']}"
    assert body["verdict"] == "false" and body["correction"]["references"]


def test_wait_that_runs_out_still_answers_202(api_without_workers: str) -> None:
    answer = httpx.post(f"{api_without_workers}/api/checks?wait=0.2", json=CLAIM, timeout=30)
    assert answer.status_code == 202 and answer.json()["status"] == "queued"
    # The check it will become is known, and pending.
    pending = httpx.get(f"{api_without_workers}/api/checks/{answer.json()['check_id']}")
    assert pending.status_code == 202 and pending.json()["id"] == answer.json()["id"]


def test_events_stream_every_stage_in_order_then_the_end(api: str) -> None:
    accepted = httpx.post(f"{api}/api/checks", json=CLAIM, timeout=30).json()
    events: list[tuple[str, dict[str, Any]]] = []
    ids: list[str] = []
    with httpx.stream(
        "GET", f"{api}/api/checks/{accepted['check_id']}/events", timeout=60
    ) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        kind = ""
        for line in stream.iter_lines():
            if line.startswith("id: "):
                ids.append(line.removeprefix("id: "))
            elif line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                events.append((kind, json.loads(line.removeprefix("data: "))))
    assert events[0] == ("job", events[0][1]) and events[0][1]["status"] == "queued"
    assert events[1][0] == "job" and events[1][1]["status"] == "running"
    stages = [(d["stage"], d["status"]) for k, d in events if k == "stage"]
    names = [s for s, status in stages if status == "started"]
    # Every stage starts, then ends, before the next one starts.
    assert stages == [pair for name in names for pair in ((name, "started"), (name, "done"))]
    assert names[:2] == ["language", "claims"] and names[-1] == "correction"
    assert events[-2][0] == "job" and events[-2][1]["status"] == "done"
    kind, end = events[-1]
    assert kind == "end" and end["status"] == "done" and end["check_id"] == accepted["check_id"]
    # Resuming after the third event sends only what came after it.
    with httpx.stream(
        "GET",
        f"{api}/api/checks/{accepted['check_id']}/events",
        headers={"Last-Event-ID": ids[2]},
        timeout=30,
    ) as again:
        data = [json.loads(x[6:]) for x in again.iter_lines() if x.startswith("data: ")]
    assert data == [d for _, d in events[3:]]


def test_the_same_idempotency_key_gives_the_same_job(api_without_workers: str) -> None:
    headers = {"Idempotency-Key": "req-42"}
    first = httpx.post(f"{api_without_workers}/api/checks", json=CLAIM, headers=headers)
    second = httpx.post(f"{api_without_workers}/api/checks", json=CLAIM, headers=headers)
    other = httpx.post(f"{api_without_workers}/api/checks", json=CLAIM)
    assert first.status_code == second.status_code == other.status_code == 202
    assert first.json()["id"] == second.json()["id"] != other.json()["id"]


def test_readiness_needs_a_worker(api: str, api_without_workers: str) -> None:
    ready = httpx.get(f"{api}/readyz")
    assert ready.status_code == 200, ready.text
    body = ready.json()
    assert body["database"] == "ok" and body["workers"] and body["embedder"] == "loaded"
    assert body["platforms"] == []  # none configured
    doctor = body["doctor"]  # the facts of `factbot doctor`, without the settings
    assert doctor["index"]["documents"] > 0 and doctor["database"]["migrations_current"]
    assert doctor["live_search"].startswith("off") and "settings" not in doctor
    assert doctor["sources"][0] == {
        "name": "local index",
        "kind": "local index",
        "answers": True,
        "detail": f"{doctor['index']['documents']} documents, {doctor['index']['passages']} "
        f"passages, version {doctor['database']['index_version']}",
        "seconds": 0.0,
    }
    assert len(doctor["database"]["index_version"]) == 12
    not_ready = httpx.get(f"{api_without_workers}/readyz")
    assert not_ready.status_code == 503
    assert any("no worker" in p for p in not_ready.json()["problems"])
    assert httpx.get(f"{api_without_workers}/healthz").status_code == 200


def test_unknown_jobs_and_checks_are_404(api: str) -> None:
    assert httpx.get(f"{api}/api/jobs/nope").status_code == 404
    assert httpx.get(f"{api}/api/checks/nope").status_code == 404
    assert httpx.get(f"{api}/api/checks/nope/events").status_code == 404


def test_a_post_with_nothing_checkable_ends_dead_at_once_and_says_why(api: str) -> None:
    answer = httpx.post(
        f"{api}/api/checks?wait=60", json={"text": "What do you all think about this?"}, timeout=70
    )
    assert answer.status_code == 422, answer.text
    job = answer.json()
    assert job["status"] == "dead" and job["attempts"] == 1
    assert job["error"].startswith("EmptyPostError: the post has no check-worthy statement")


def test_a_repeated_post_is_answered_from_the_stored_check(api: str) -> None:
    first = httpx.post(f"{api}/api/checks?wait=60", json=CLAIM, timeout=70)
    assert first.status_code == 201, first.text
    started = time.perf_counter()
    again = httpx.post(
        f"{api}/api/checks", json={"text": "5G NETWORKS spread the coronavirus!!"}, timeout=30
    )
    elapsed = time.perf_counter() - started
    assert again.status_code == 200, again.text
    body = again.json()
    assert body["id"] == first.json()["id"] and body["reused"]["reason"] == "same text"
    assert again.headers["location"] == f"/api/checks/{body['id']}"
    # No job, no pipeline: answered from the database (200 with the stored check, where a new
    # check answers 202 with a job); generous bound for a machine loaded by a parallel run.
    assert elapsed < 15
    fresh = httpx.post(f"{api}/api/checks?fresh=true", json=CLAIM, timeout=30)
    assert fresh.status_code == 202  # asked to check again
