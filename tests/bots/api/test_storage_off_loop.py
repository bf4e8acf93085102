"""No storage on the event loop: a check driven through the API and the worker pool, with the
store's loop guard armed, runs every statement off the loop: the service's in a storage thread
(storage/threads.py), the engine's reads through its dependencies (source ratings, stored
documents for the citation check) in a worker thread.

The guard records every statement run on a thread that runs an event loop, with its stack; a
route or a worker step that called a repository directly is found here. (Armed to raise, it
would also fail the request or the job; here it only records, so that every one found is
reported, with its stack.)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from bots.app.root import App
from bots.settings import JobSettings, Settings
from pipeline.evidence.ingest import Ingester
from storage import Store
from storage.threads import StorageOnLoopError
from tests.bots.api.test_api import serving
from tests.conftest import FIXTURES

CLAIM = {"text": "5G networks spread the coronavirus."}


def test_the_guard_refuses_a_statement_on_the_loop(store: Store) -> None:
    violations = store.guard_loop()

    async def on_loop() -> None:
        store.jobs.counts()

    with pytest.raises(StorageOnLoopError):
        asyncio.run(on_loop())
    assert len(violations) == 1 and "on_loop" in violations[0]

    async def off_loop() -> dict[str, int]:
        return await store.call(store.jobs.counts)

    assert asyncio.run(off_loop())["queued"] == 0  # a storage thread runs no loop
    assert store.jobs.counts()["queued"] == 0  # nor does synchronous code (the CLI's)
    assert len(violations) == 1


def test_a_check_through_the_api_and_workers_keeps_storage_off_the_loop(
    tmp_path: Path, embedder: Any
) -> None:
    settings = Settings(
        data_dir=tmp_path, jobs=JobSettings(poll_seconds=0.05, heartbeat_seconds=5.0)
    )
    app = App(settings, embedder=embedder)
    asyncio.run(Ingester(app.store.documents, embedder).ingest([str(FIXTURES / "corpus.jsonl")]))
    violations = app.store.guard_loop(raises=False)
    with serving(app) as api:
        accepted = httpx.post(f"{api}/api/checks", json=CLAIM, timeout=30)
        assert accepted.status_code == 202, accepted.text
        check_id = accepted.json()["check_id"]
        with httpx.stream("GET", f"{api}/api/checks/{check_id}/events", timeout=60) as stream:
            data = [json.loads(x[6:]) for x in stream.iter_lines() if x.startswith("data: ")]
        assert data[-1]["status"] == "done", data[-1]
        job = httpx.get(f"{api}/api/jobs/{accepted.json()['id']}", timeout=30)
        assert job.status_code == 200 and job.json()["status"] == "done"
        assert httpx.get(f"{api}/api/checks/{check_id}", timeout=30).status_code == 200
        again = httpx.post(f"{api}/api/checks?wait=30", json=CLAIM, timeout=60)
        assert again.status_code in (200, 201), again.text  # reused, or checked within the wait
        for path in ("/healthz", "/readyz", "/metrics", f"/checks/{check_id}"):
            assert httpx.get(api + path, timeout=30).status_code == 200, path
    app.close()
    # Offline (no live search): neither the service nor the engine reads on the loop.
    assert violations == [], (
        f"{len(violations)} statements on the loop; the first:\n{violations[0]}"
    )
