"""An App over the small corpus served like `factbot serve` (uvicorn on port 0, one worker), for
end-to-end tests of polled platforms (Bluesky, Mastodon): the adapters' `listen` runs inside."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import uvicorn

from bots.app.root import App
from bots.logs import UVICORN_LOG_CONFIG
from bots.settings import JobSettings, Settings
from bots.web import create_web
from pipeline.evidence.ingest import Ingester
from tests.conftest import FIXTURES

CLAIM = "5G networks spread the coronavirus."


def make_app(data_dir: Path, embedder: Any, **groups: Any) -> App:
    """Return an App whose jobs poll fast, with the settings groups given."""
    jobs = JobSettings(poll_seconds=0.02, heartbeat_seconds=5.0, backoff_initial=0, backoff_max=0)
    return App(Settings(data_dir=data_dir, jobs=jobs, **groups), embedder=embedder)


@asynccontextmanager
async def serving(
    app: App, *, ingest: bool = True, log_level: str | None = None
) -> AsyncIterator[str]:
    """Serve the API with one worker over app in its own thread and loop; yield its URL.

    With log_level, uvicorn logs as under `factbot serve` (at that level, through factbot's
    handler); without, it keeps to warnings on its own handler."""
    if ingest and not app.store.documents.document_count():
        await Ingester(app.store.documents, app.embedder).ingest([str(FIXTURES / "corpus.jsonl")])
    logs: dict[str, Any] = {"log_level": "warning"}
    if log_level is not None:
        logs = {"log_level": log_level.lower(), "log_config": UVICORN_LOG_CONFIG}
    config = uvicorn.Config(create_web(app, workers=1), host="127.0.0.1", port=0, **logs)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "server did not start"
        await asyncio.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        while thread.is_alive():  # noqa: ASYNC110 - another thread's server
            await asyncio.sleep(0.02)


async def idle(app: App, requests: int = 1, seconds: float = 60.0) -> None:
    """Wait until `requests` platform requests were stored and every job has ended."""
    stored = "SELECT COUNT(*) FROM platform_requests"
    running = "SELECT COUNT(*) FROM jobs WHERE status NOT IN ('done', 'dead')"
    db = app.store.db
    async with asyncio.timeout(seconds):
        while db.execute(stored).fetchone()[0] < requests or db.execute(running).fetchone()[0]:  # noqa: ASYNC110 - polls the database
            await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)  # a second reply, if one were (wrongly) coming, shows by now
